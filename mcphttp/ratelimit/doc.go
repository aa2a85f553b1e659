// Package ratelimit is the endpoint part that limits what each caller may
// do, so that no caller denies another: token buckets per caller and
// class of call (list, read, search, other), a bound on the calls one
// caller has in flight at once, and a bucket of refused credentials per
// client address that makes a [Limiter] the Authenticator's Throttle.
//
//	proxies, err := ratelimit.NewTrustedProxies("10.0.0.0/8", ratelimit.HeaderXForwardedFor)
//	limiter, err := ratelimit.New(ratelimit.Limits{
//		Read:        ratelimit.Rate{PerSecond: 100, Burst: 2500},
//		Refused:     ratelimit.Rate{PerSecond: 1, Burst: 20},
//		MaxInFlight: 8,
//		ClientAddr:  proxies.ClientAddr, // behind a reverse proxy
//	})
//	auth, err := authn.NewAuthenticator(v, authn.Options{Throttle: limiter})
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, limiter.Part())
//
// Callers are their principal (issuer and subject, else client id);
// anonymous callers, and refused credentials, their client address:
// r.RemoteAddr, or behind a reverse proxy the address it vouches for in
// X-Forwarded-For or Forwarded, believed only from the proxies named in
// [TrustedProxies] and read from the right, so that a client cannot pick
// another's bucket or escape its own.
//
// A call over a limit gets HTTP 429 with Retry-After and the JSON-RPC
// error of the MCP draft "Standardize Rate-Limiting Errors" (SEP-3304):
// code [CodeRateLimited] (-32023) with data.retryAfterMs. The endpoint
// answers the Authenticator's refusal of too many refused credentials
// (the limiter as its Throttle) in the same shape, with id null when the
// body was not read.
package ratelimit

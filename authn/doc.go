// Package authn makes a Go HTTP service an OAuth 2.1 protected resource
// for MCP: it extracts bearer tokens (RFC 6750), verifies them (JWT access
// tokens per RFC 9068 against the issuer's JWK Set, or opaque tokens by
// RFC 7662 introspection), caches verifications, answers with standard
// challenges, and serves RFC 9728 protected resource metadata.
//
//	jv, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{
//		Issuer:   "https://auth.example.com",
//		Resource: "https://mcp.example.com/mcp",            // the expected "aud"
//		JWKSURL:  "https://auth.example.com/.well-known/jwks.json",
//	})
//	defer jv.Close()
//	a, err := authn.NewAuthenticator(authn.NewCache(jv, authn.CacheOptions{}),
//		authn.Options{Resource: "https://mcp.example.com/mcp", Scopes: []string{"docs:read"}})
//	md, err := authn.NewMetadataHandler(authn.Metadata{
//		Resource:             "https://mcp.example.com/mcp",
//		AuthorizationServers: []string{"https://auth.example.com"},
//	})
//	path, _ := authn.WellKnownPath("https://mcp.example.com/mcp")
//	mux.Handle(path, md)                      // /.well-known/oauth-protected-resource/mcp
//	mux.Handle("/mcp", a.Handler(mcpHandler)) // handlers read principal.FromContext
//
// Handlers get a [principal.Principal]: subject, client id, sorted scopes and
// audience; never the raw token, never other claims. (The request's
// Authorization header is left in place: never forward it to another
// service; MCP forbids token passthrough.)
//
// # Security properties
//
// JWT verification ([JWTVerifier]) is fail-closed and does not depend on
// jwx's process-wide jwt.Settings (this package never calls it, and a host
// application changing it changes nothing here):
//
//   - Shape first: at most MaxTokenBytes (default [DefaultMaxTokenBytes], 16 KiB) of base64url characters in
//     exactly three non-empty segments, checked in one pass without
//     allocating. JSON serializations (whose unsigned top-level members jwx
//     v2 would take as claims), whitespace and padding never get further.
//     Segments are decoded strictly (no padding, zero trailing bits).
//   - Header parsed by this package, strictly (duplicate names, case
//     variants such as "alg" and "ALG" included, invalid UTF-8 rejected):
//     alg must be in the allowlist (default RS256, PS256,
//     ES256, EdDSA; "none" and HMAC can never be configured); typ must be
//     at+jwt or application/at+jwt, case-insensitively (see
//     AllowPlainJWTType below); kid, when present, is a non-empty string of at
//     most 256 bytes; crit,
//     jku, jwk, x5u, x5c, b64, enc and zip reject the token, so no key
//     named by the token is ever fetched or trusted.
//   - Key: looked up by kid among the issuer's keys only. A token without
//     kid (RFC 7515 makes it optional) is verified only when exactly one key
//     of the issuer's set, whatever its kid, fits its alg; with several
//     candidates it is refused without trying any (reason kid_absent, whose
//     log hint names the count and the alg). When that one key does not
//     verify it, or none fits, the set is fetched again under the unknown-kid
//     gate (one fetch per UnknownKeyCooldown), so a provider that rotated
//     its one key is followed. Keys published without a kid serve only
//     tokens without kid. The header alg
//     must fit the key's type and curve (RSA: RS*/PS*; P-256: ES256; P-384:
//     ES384; P-521: ES512; Ed25519: EdDSA) and must equal the JWK's "alg"
//     when it has one. The signature is checked by jwx's verifier for that
//     one algorithm and that one key.
//   - Claims decoded by this package from the verified payload, strictly:
//     invalid UTF-8, lone surrogates, duplicate claim names (two "aud",
//     or "sub" and "SUB", are a parser differential, not a convenience),
//     trailing data, nesting deeper than 32 and objects of more than 512
//     members reject the token; names are matched exactly ("Sub" is not
//     "sub"). iss must equal Issuer exactly; aud must be Resource, or an
//     array of strings containing it; exp is required; exp, nbf and iat
//     must be RFC 7519 NumericDates: JSON numbers, fractions and exponents
//     allowed (1700000000.5, 1.7e9), read exactly and compared to the
//     nanosecond, never strings, negative, or after year 9999; they are
//     checked with a leeway of 60 s by default (at most 5 min). The subject must be a
//     non-empty string of at most 256 characters without control
//     characters; client id and scopes must be well-formed (scopes are RFC
//     6749 scope-tokens, returned sorted and de-duplicated).
//   - Every failure is the one error [ErrInvalidToken], with one text; which
//     check failed is only written to debug logs as a fixed reason. No log
//     line or response ever contains token bytes or a key id.
//
// JWK Set fetching is this package's own: an http.Client bounded by
// FetchTimeout (5 s) and MaxJWKSBytes (1 MiB), one fetch in flight (callers
// share it and wait only until their own context ends), a warm-up fetch at
// construction, a refresh every 15 minutes, and fetches for unknown key
// ids limited to one per UnknownKeyCooldown (30 s), so random kids cannot
// cause a storm of fetches. A failed fetch keeps the previous keys; a
// document without any usable key counts as failed. After a failed fetch,
// retries (the refresher's and those triggered by unknown key ids) wait a
// backoff of 1 s doubling up to the cooldown, and the 503's Retry-After
// is the time left of it: a key the issuer rotated to during an outage is
// fetched on the first retry after the JWK Set answers again. A failed
// request-triggered fetch is logged at most once per cooldown, without the
// key id or the URL. Only public signature
// keys are kept (no "oct", no use "enc", no private keys, RSA of 2048–8192
// bits, EC keys on their curve, Ed25519). The JWK Set URL must use https;
// http is accepted only for loopback hosts (127.0.0.0/8, ::1, localhost),
// for development and tests.
//
// "Cannot check now" is not "invalid": with no keys yet (the JWK Set was
// down at start), or an introspection endpoint that fails, requests get
// [ErrUnavailable], which [Authenticator.WriteError] answers with 503 and
// Retry-After, so clients retry rather than throw their tokens away.
//
// The [Cache] keys verifications by the SHA-256 digest of the token (the
// token is never stored), keeps only successes, bounds its size, and
// forgets an entry at the token's expiry or after MaxTTL (5 min), the
// window in which a revoked token may still pass.
//
// Bearer extraction ([BearerToken]) accepts only the Authorization header
// of RFC 6750 §2.1. Several Authorization headers, a header over 8 KiB, an
// access_token query parameter, or a form-encoded body on a request without
// an Authorization header are answered 400 invalid_request. The body is
// never read: a form body next to an Authorization header is not
// inspected, and a form-encoded request without one is refused whatever its
// body holds.
//
// Responses: every error response has Cache-Control: no-store and Vary:
// Authorization; successful responses through Handler and Optional get
// Cache-Control: private, max-age=0 and Vary: Authorization ([SetPrivate]).
// Challenge values obey RFC 6750 §3's character rules (checked at
// construction for configured scopes; values that break them are left out,
// never escaped). Error bodies are small fixed JSON objects.
//
// The HTTP server's own limits (ReadHeaderTimeout, MaxHeaderBytes, body
// size, Origin checks) are the transport's job (package mcphttp), not this
// package's.
//
// # Subject and ClientID
//
// principal.Principal.Subject identifies the user; principal.Principal.ClientID identifies the
// client application, which many users share. Data owned by a user must be
// keyed on Subject (with the issuer, if several are trusted), never on
// ClientID: keying on the client id would hand one user's records to every
// other user of the same application.
//
// The subject is optional. A verified token without one (client
// credentials, a service account) gives a principal.Principal with an empty Subject;
// a present subject must follow the rules (non-empty, at most 256
// characters counted as UTF-16 code units, no control characters), and a
// claim named like it in another case ("Sub" alone) is refused, being read
// as the subject by case-insensitive parsers. A client-owned inventory keys
// on ClientID (inventory.OwnedByClient); templates owned by the subject are
// never called for a caller without one.
//
// # AllowPlainJWTType
//
// RFC 9068 access tokens are typed at+jwt so that an ID token or any other
// JWT the same issuer signs with the same keys cannot be replayed as an
// access token (RFC 8725 §3.11). Some authorization servers do not type
// their access tokens; JWTOptions.AllowPlainJWTType admits "JWT" and an
// absent typ for them. With it set, only the audience check separates
// access tokens from the issuer's other JWTs: enable it only for such an
// issuer, and only if its ID tokens never carry this resource as audience.
// A warning is logged at construction.
//
// # DPoP (RFC 9449)
//
// Options.DPoP (a [dpop.Options]) turns on sender-constrained tokens, in
// one of three modes (off, the zero value; allowed; required); package
// authn/dpop documents the proof checks. A DPoP-bound token sent as Bearer
// is refused in every mode, dpop.Off included (RFC 9449 §7.2), and a token
// sent as DPoP must be bound. Challenges follow RFC 9449 §7.1 (see
// [Authenticator.WriteError]); publish [Authenticator.DPoPAlgorithms] and
// the mode in [Metadata].
//
// # Several issuers
//
// A [MultiIssuerVerifier] trusts several authorization servers, each with
// its own JWK Set or introspection endpoint, audience, claim names and
// algorithms. It reads a JWT's iss strictly before any key is tried and
// hands the token to that issuer's verifier alone. Its principals carry
// Issuer, and every identity key of this kit is [principal.Principal.Key]
// (issuer#subject; the bare subject when Issuer is empty, as with one
// issuer): inventory grants and Subjects policies, the notification hub,
// session and stream owners and cursor bindings. Applications key their
// own per-user data and publish notifications with the same key
// ([principal.SubjectKey]). Moving from one issuer to several changes the keys from
// bare subjects to qualified ones: migrate stored keys with principal.SubjectKey.
//
// # Testing
//
// Package authn/authntest is a token issuer for a service's tests: a JWK
// Set over httptest, tokens for a resource, and DPoP proofs.
//
// # Custom verifiers
//
// Any [Verifier] can be plugged in. It must check that the token was issued
// for this resource and set principal.Principal.Audience to the Authenticator's
// Resource; the Authenticator rejects principals with another audience or
// with a subject that breaks the rules above.
package authn

package main

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcpkit/mcpkit/principal"
)

// withTokenInfo shows a go-sdk server the caller the kit verified where
// go-sdk handlers look for it: req.Extra.TokenInfo (auth.TokenInfo:
// UserID is the caller's identity key, principal.Principal.Key — or
// ClientKey for a token without a user — Scopes and Expiration its
// token's). Wrap the legacy handler with it, inside
// intercept.New. go-sdk fills TokenInfo only through its own
// auth.RequireBearerToken middleware, so the adapter runs that middleware
// with a verifier that reads the principal already in the context, on a
// copy of the request with a placeholder bearer header (the kit may have
// verified a DPoP token, which go-sdk would not parse), and hands the
// legacy handler the original headers back. A request without a principal
// (anonymous) passes unchanged: its TokenInfo stays nil.
//
// go-sdk also uses TokenInfo.UserID to refuse a session's requests from
// another user, a second lock beside intercept's own.
func withTokenInfo(legacy http.Handler) http.Handler {
	fromKit := func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principal.FromContext(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken // never: only requests with a principal get here
		}
		id := p.Key()
		if id == "" { // a client's own token: no user
			id = p.ClientKey()
		}
		return &auth.TokenInfo{UserID: id, Scopes: p.Scopes, Expiration: p.Expires}, nil
	}
	require := auth.RequireBearerToken(fromKit, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := principal.FromContext(r.Context()); !ok {
			legacy.ServeHTTP(w, r)
			return
		}
		original := r.Header
		probe := r.Clone(r.Context())
		probe.Header = original.Clone()
		probe.Header.Set("Authorization", "Bearer verified-by-mcpkit")
		require(http.HandlerFunc(func(w http.ResponseWriter, withInfo *http.Request) {
			withInfo.Header = original
			legacy.ServeHTTP(w, withInfo)
		})).ServeHTTP(w, probe)
	})
}

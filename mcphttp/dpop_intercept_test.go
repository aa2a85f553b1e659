package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// Intercept in front of a legacy handler protected by the same
// Authenticator (auth.Handler(legacy), as the legacy example mounts it),
// with DPoP: a merged tools/list authenticates the request once, so the
// one-time proof serves both the legacy handler and the bridge's
// per-caller tools (a second Authenticate would see a replay and list the
// bridge's tools as for an anonymous caller).
func TestInterceptToolsListWithDPoP(t *testing.T) {
	is, err := testissuer.New(testissuer.Options{Audience: testResource})
	require.NoError(t, err)
	t.Cleanup(is.Close)
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: testResource, JWKSURL: is.JWKSURL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(v, authn.Options{Resource: testResource, DPoP: authn.DPoPOptions{Mode: authn.DPoPAllowed}})
	require.NoError(t, err)
	f := newToolsFixture(t, toolsFixtureOptions{})
	h, err := mcphttp.Intercept(f.inv, auth.Handler(&toolServer{tools: []string{"echo"}, needToken: true}),
		mcphttp.Options{Authenticator: auth, Tools: &mcphttp.ToolOptions{}})
	require.NoError(t, err)
	key, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, err := key.Thumbprint()
	require.NoError(t, err)
	bearer := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{"docs:read"}})
	bound := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{"docs:read"}, DPoPThumbprint: jkt})

	list := func(authz, proof string) []string {
		r := httptest.NewRequest(http.MethodPost, testResource, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Set("Authorization", authz)
		if proof != "" {
			r.Header.Set("DPoP", proof)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		return toolNames(t, w)
	}
	want := list("Bearer "+bearer, "")
	proof, err := key.Sign(testissuer.Proof{Method: http.MethodPost, URL: testResource, Token: bound})
	require.NoError(t, err)
	assert.Equal(t, want, list("DPoP "+bound, proof), "the same tools for alice with a DPoP-bound token")
}

package intercept_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// Intercept in front of a legacy handler protected by the same
// Authenticator (auth.Handler(legacy), as the legacy example mounts it),
// with DPoP: a merged tools/list authenticates the request once, so the
// one-time proof serves both the legacy handler and the bridge's
// per-caller tools (a second Authenticate would see a replay: the legacy
// handler's middleware would refuse it, or the bridge's tools would be
// missing).
func TestToolsListWithDPoP(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{DPoP: dpop.Options{Mode: dpop.Allowed}}, bridge{})
	legacy := &toolServer{tools: []string{"echo"}, needToken: true}
	h, err := intercept.New(f.EP, f.Auth.Handler(legacy), intercept.Options{})
	require.NoError(t, err)
	key, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, err := key.Thumbprint()
	require.NoError(t, err)
	bearer := f.Issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}})
	bound := f.Issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, DPoPThumbprint: jkt})

	list := func(authz, proof string) []string {
		r := httptest.NewRequest(http.MethodPost, mcptest.Resource, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Set("Authorization", authz)
		if proof != "" {
			r.Header.Set("DPoP", proof)
		}
		w := serve(h, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		return toolNames(t, w)
	}
	want := list("Bearer "+bearer, "")
	assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, want)
	proof, err := key.Sign(testissuer.Proof{Method: http.MethodPost, URL: mcptest.Resource, Token: bound})
	require.NoError(t, err)
	assert.Equal(t, want, list("DPoP "+bound, proof), "the same tools for alice with a DPoP-bound token")

	// The same proof again is a replay: the legacy handler's middleware
	// refuses it, as it refuses any replay.
	r := httptest.NewRequest(http.MethodPost, mcptest.Resource, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "DPoP "+bound)
	r.Header.Set("DPoP", proof)
	w := serve(h, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Zero(t, legacy.calls.Load())
}

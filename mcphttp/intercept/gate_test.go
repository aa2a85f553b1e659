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

// A legacy handler the service did not wrap in auth.Handler, behind an
// endpoint with an Authenticator: forged tokens, and anonymous requests
// unless ForwardAnonymous says so, get the endpoint's 401 and never reach
// legacy — initialize, a legacy tool, ping, a notification, a batch, GET
// and DELETE alike; a valid token is served. Before, legacy answered all
// of them (200).
func TestForwardedRequestsAreAuthenticated(t *testing.T) {
	b := newBindFixture(t, false, intercept.Options{})
	alice := b.f.Token(t, "alice")
	forged := alice[:len(alice)-4] + "AAAA"
	sid := b.initialize(t, alice)
	before, _, _ := b.legacy.stats()
	bodies := []string{
		initBody, callEcho,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"server/discover"}`,
	}
	for _, tok := range []string{forged, "", "not-a-jwt"} {
		for _, body := range bodies {
			for _, session := range []string{"", sid} {
				w := b.do(http.MethodPost, tok, session, body)
				if tok == "" && session != "" {
					// No credentials on a session begun signed in: 404.
					require.Equal(t, http.StatusNotFound, w.Code, "%q %s", tok, body)
					continue
				}
				require.Equal(t, http.StatusUnauthorized, w.Code, "%q %s", tok, body)
				assert.Contains(t, w.Header().Get("WWW-Authenticate"), `resource_metadata=`, "the endpoint's challenge")
			}
		}
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			want := http.StatusUnauthorized
			if tok == "" {
				want = http.StatusNotFound
			}
			assert.Equal(t, want, b.do(method, tok, sid, "").Code, "%q %s", tok, method)
		}
	}
	after, _, deleted := b.legacy.stats()
	assert.Equal(t, before, after, "legacy was never reached")
	assert.Empty(t, deleted)
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, sid, callEcho).Code)
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`).Code)

	// ForwardAnonymous lets anonymous requests through, never forged ones.
	open := newBindFixture(t, false, intercept.Options{ForwardAnonymous: true})
	assert.Equal(t, http.StatusOK, open.do(http.MethodPost, "", "", initBody).Code)
	assert.Equal(t, http.StatusUnauthorized, open.do(http.MethodPost, forged, "", initBody).Code)
}

// Forged DPoP proofs through intercept in front of an unwrapped legacy
// handler: refused (401) and legacy never reached; a good proof serves.
func TestForwardedDPoPProofsAreChecked(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{DPoP: dpop.Options{Mode: dpop.Allowed}})
	legacy := newStatefulLegacy()
	h, err := intercept.New(f.EP, legacy, intercept.Options{Logger: quiet})
	require.NoError(t, err)
	legacy.reset()
	key, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	other, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, err := key.Thumbprint()
	require.NoError(t, err)
	bound := f.Issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, DPoPThumbprint: jkt})
	post := func(authz, proof string) int {
		r := request(initBody, nil)
		r.Header.Set("Authorization", authz)
		if proof != "" {
			r.Header.Set("DPoP", proof)
		}
		return serve(h, r).Code
	}
	sign := func(k *testissuer.ProofKey, p testissuer.Proof) string {
		s, err := k.Sign(p)
		require.NoError(t, err)
		return s
	}
	good := testissuer.Proof{Method: http.MethodPost, URL: mcptest.Resource, Token: bound}
	for name, tc := range map[string]struct{ authz, proof string }{
		"another key":           {"DPoP " + bound, sign(other, good)},
		"another method":        {"DPoP " + bound, sign(key, testissuer.Proof{Method: http.MethodGet, URL: mcptest.Resource, Token: bound})},
		"another URL":           {"DPoP " + bound, sign(key, testissuer.Proof{Method: http.MethodPost, URL: "https://elsewhere.example/mcp", Token: bound})},
		"no proof":              {"DPoP " + bound, ""},
		"bound token as bearer": {"Bearer " + bound, ""},
		"a forged proof":        {"DPoP " + bound, strings.Repeat("A", 20) + "." + strings.Repeat("B", 20) + "." + strings.Repeat("C", 20)},
	} {
		assert.Equal(t, http.StatusUnauthorized, post(tc.authz, tc.proof), name)
	}
	n, _, _ := legacy.stats()
	assert.Zero(t, n, "legacy was never reached")
	proof := sign(key, good)
	assert.Equal(t, http.StatusOK, post("DPoP "+bound, proof))
	assert.Equal(t, http.StatusUnauthorized, post("DPoP "+bound, proof), "a replayed proof")
	n, _, _ = legacy.stats()
	assert.Equal(t, 1, n)
}

// Scopes on forwarded methods and legacy tools: a caller without them gets
// the endpoint's 403 insufficient_scope challenge naming them (an
// anonymous one the 401), legacy runs nothing; with them, it is served.
func TestForwardedScopes(t *testing.T) {
	b := newBindFixture(t, false, intercept.Options{
		ForwardAnonymous: true,
		MethodScopes:     map[string][]string{"prompts/get": {"prompts:read"}},
		ToolScopes:       map[string][]string{"echo": {"tools:echo"}},
	})
	alice := b.f.Token(t, "alice")
	sid := b.initialize(t, alice)
	before, _, _ := b.legacy.stats()
	for body, scope := range map[string]string{
		callEcho: "tools:echo",
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p"}}`:                       "prompts:read",
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},` + callEcho + `]`:                                 "tools:echo",
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`: "tools:echo",
	} {
		w := b.do(http.MethodPost, alice, sid, body)
		require.Equal(t, http.StatusForbidden, w.Code, body)
		challenge := w.Header().Get("WWW-Authenticate")
		assert.Contains(t, challenge, `error="insufficient_scope"`)
		assert.Contains(t, challenge, `scope="`+scope+`"`)
	}
	assert.Equal(t, http.StatusUnauthorized, b.do(http.MethodPost, "", "", callEcho).Code, "anonymous: sign in first")
	after, _, _ := b.legacy.stats()
	assert.Equal(t, before, after, "legacy ran nothing")

	// With the scope (a step-up token of alice's, same session): served.
	wider := b.f.Token(t, "alice", "docs:read", "tools:echo")
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, wider, sid, callEcho).Code)
	// Another legacy tool needs nothing more.
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"other"}}`).Code)

	// An invalid scope is a construction error.
	f := mcptest.New(t, mcptest.Options{})
	_, err := intercept.New(f.EP, newStatefulLegacy(), intercept.Options{ToolScopes: map[string][]string{"echo": {"bad scope"}}})
	assert.ErrorContains(t, err, "invalid scope")
}

// The GET of an unwrapped legacy handler without a session is refused
// too when anonymous.
func TestForwardedVerbWithoutSession(t *testing.T) {
	b := newBindFixture(t, false, intercept.Options{})
	r := httptest.NewRequest(http.MethodGet, mcptest.Resource, nil)
	assert.Equal(t, http.StatusUnauthorized, serve(b.h, r).Code)
	n, _, _ := b.legacy.stats()
	assert.Zero(t, n)
}

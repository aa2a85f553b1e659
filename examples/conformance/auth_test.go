package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/authntest"
)

// The auth mode under the checks of the suite's authorization scenarios
// (token audience, DPoP resource-server validation, scope challenges and
// step-up, session isolation), run here until the suite publishes them:
// each in endpoint and intercept mode, JWT and opaque tokens.

var authModes = []string{"endpoint", "intercept"}

// authServer is the fixture in auth mode over HTTP.
type authServer struct {
	t        *testing.T
	url      string // the /mcp URL: the resource
	af       *authFixture
	sessions map[string]string // token → its legacy session
}

func startAuth(t *testing.T, mode string, cfg authConfig) *authServer {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	cfg.resource = "http://" + srv.Listener.Addr().String() + "/mcp"
	af, err := newAuthFixture(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(af.close)
	h, hub, err := newHandler(mode, af)
	require.NoError(t, err)
	if hub != nil {
		t.Cleanup(hub.Close)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	af.routes(mux)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &authServer{t: t, url: cfg.resource, af: af, sessions: map[string]string{}}
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   string
}

// challenge returns the WWW-Authenticate header.
func (a answer) challenge() string { return a.header.Get("WWW-Authenticate") }

// request describes one POST.
type request struct {
	scheme  string // "Bearer" (default) or "DPoP"
	token   string // "" : anonymous
	proof   string // the DPoP header
	session string
	modern  bool // the 2026-07-28 era (no sessions)
	method  string
	params  map[string]any
}

func (s *authServer) post(rq request) answer {
	s.t.Helper()
	if rq.params == nil {
		rq.params = map[string]any{}
	}
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	if rq.modern {
		rq.params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
		}
		hdr = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": rq.method}
		if uri, ok := rq.params["uri"].(string); ok {
			hdr["Mcp-Name"] = uri
		}
		if name, ok := rq.params["name"].(string); ok && rq.method == "tools/call" {
			hdr["Mcp-Name"] = name
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": rq.method, "params": rq.params})
	require.NoError(s.t, err)
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(string(body)))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if rq.token != "" {
		scheme := rq.scheme
		if scheme == "" {
			scheme = "Bearer"
		}
		req.Header.Set("Authorization", scheme+" "+rq.token)
	}
	if rq.proof != "" {
		req.Header.Set("DPoP", rq.proof)
	}
	if rq.session != "" {
		req.Header.Set("Mcp-Session-Id", rq.session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// session begins a legacy session with token (Bearer) and returns its id.
func (s *authServer) session(token string) string {
	s.t.Helper()
	a := s.post(request{token: token, method: "initialize", params: map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	require.Equal(s.t, http.StatusOK, a.status, a.body)
	id := a.header.Get("Mcp-Session-Id")
	require.NotEmpty(s.t, id)
	return id
}

// readPrivate reads the private template's record 7: a method of the
// kit in both modes, which needs private:read.
func readPrivate(rq request) request {
	rq.method, rq.params = "resources/read", map[string]any{"uri": "test://private/7"}
	return rq
}

// tokenKinds mint an access token of subject with scopes, as a JWT of
// the built-in issuer or an opaque token of the built-in introspection,
// with an audience (nil: the resource) and bound to a DPoP key.
var tokenKinds = map[string]func(s *authServer, subject string, scopes []string, aud any, key *authntest.DPoPKey) string{
	"jwt": func(s *authServer, subject string, scopes []string, aud any, key *authntest.DPoPKey) string {
		o := authntest.TokenOptions{Scopes: scopes, DPoP: key}
		switch a := aud.(type) {
		case string:
			o.Audience = a
		case []string:
			o.Claims = map[string]any{"aud": a}
		}
		tok, err := s.af.issuer.TokenWith(subject, o)
		require.NoError(s.t, err)
		return tok
	},
	"opaque": func(s *authServer, subject string, scopes []string, aud any, key *authntest.DPoPKey) string {
		o := opaqueOptions{scopes: scopes, audience: aud}
		if key != nil {
			o.jkt = key.Thumbprint()
		}
		return s.af.opaque.Mint(subject, o)
	},
}

// Token audience: a token for this resource is served; one for another
// resource, for a prefix or a variant of it, is refused 401 invalid_token
// with the resource metadata; an audience array holding the resource is
// served. Both eras, both modes, JWT and opaque.
func TestAuthAudience(t *testing.T) {
	for _, mode := range authModes {
		for kind, mint := range tokenKinds {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				s := startAuth(t, mode, authConfig{})
				good := mint(s, "alice", allScopes, nil, nil)
				sid := s.session(good)
				for _, modern := range []bool{false, true} {
					session := sid
					if modern {
						session = ""
					}
					a := s.post(readPrivate(request{token: good, session: session, modern: modern}))
					require.Equal(t, http.StatusOK, a.status, a.body)
					assert.Contains(t, a.body, "Private data 7 for alice")
					a = s.post(readPrivate(request{token: mint(s, "alice", allScopes, []string{"https://other.example/mcp", s.url}, nil), modern: modern}))
					assert.Equal(t, http.StatusOK, a.status, "an audience array holding the resource: %s", a.body)
					for name, aud := range map[string]any{
						"another resource": "https://other.example/mcp",
						"a trailing slash": s.url + "/",
						"its origin only":  strings.TrimSuffix(s.url, "/mcp"),
						"an array without": []string{"https://other.example/mcp"},
						"another path":     s.url + "/other",
						"another scheme":   strings.Replace(s.url, "http:", "https:", 1),
					} {
						a := s.post(readPrivate(request{token: mint(s, "alice", allScopes, aud, nil), modern: modern}))
						require.Equal(t, http.StatusUnauthorized, a.status, "%s (modern %v): %s", name, modern, a.body)
						assert.Contains(t, a.challenge(), `error="invalid_token"`, name)
						assert.Contains(t, a.challenge(), `resource_metadata="`, name)
					}
				}
			})
		}
	}
}

// The DPoP proof table: a token bound to a key is served with a fresh
// proof of that key for this request, and refused 401 for every proof
// that is not — none, another key, another method, another URL, another
// token, a replay, the bound token as Bearer — in both modes, for JWT and
// opaque tokens; with -dpop required a Bearer token is refused; with
// -dpop-nonce the first proof gets use_dpop_nonce and a DPoP-Nonce, and
// the retry with it is served.
func TestAuthDPoPProofs(t *testing.T) {
	for _, mode := range authModes {
		for kind, mint := range tokenKinds {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				s := startAuth(t, mode, authConfig{dpop: "required"})
				key, err := authntest.NewDPoPKey()
				require.NoError(t, err)
				other, err := authntest.NewDPoPKey()
				require.NoError(t, err)
				bound := mint(s, "alice", allScopes, nil, key)
				proof := func(k *authntest.DPoPKey, method, url, token string) string {
					p, err := k.Proof(method, url, token, "")
					require.NoError(t, err)
					return p
				}
				good := proof(key, http.MethodPost, s.url, bound)
				a := s.post(readPrivate(request{scheme: "DPoP", token: bound, proof: good, modern: true}))
				require.Equal(t, http.StatusOK, a.status, a.body)
				for name, rq := range map[string]request{
					"a replayed proof":          {scheme: "DPoP", token: bound, proof: good},
					"no proof":                  {scheme: "DPoP", token: bound},
					"another key":               {scheme: "DPoP", token: bound, proof: proof(other, http.MethodPost, s.url, bound)},
					"another method":            {scheme: "DPoP", token: bound, proof: proof(key, http.MethodGet, s.url, bound)},
					"another URL":               {scheme: "DPoP", token: bound, proof: proof(key, http.MethodPost, s.url+"/other", bound)},
					"another token's hash":      {scheme: "DPoP", token: bound, proof: proof(key, http.MethodPost, s.url, bound+"x")},
					"the bound token Bearer":    {token: bound},
					"Bearer with a proof":       {token: bound, proof: proof(key, http.MethodPost, s.url, bound)},
					"an unbound token":          {scheme: "DPoP", token: mint(s, "alice", allScopes, nil, nil), proof: proof(key, http.MethodPost, s.url, "")},
					"a Bearer token (required)": {token: mint(s, "alice", allScopes, nil, nil)},
					"a proof that is not a JWT": {scheme: "DPoP", token: bound, proof: "not.a.proof"},
				} {
					rq.modern = true
					a := s.post(readPrivate(rq))
					assert.Equal(t, http.StatusUnauthorized, a.status, "%s: %s", name, a.body)
					assert.Contains(t, a.challenge(), "DPoP", name)
				}
			})
		}
	}
	t.Run("nonce", func(t *testing.T) {
		for _, mode := range authModes {
			s := startAuth(t, mode, authConfig{dpop: "required", nonce: true})
			key, err := authntest.NewDPoPKey()
			require.NoError(t, err)
			bound := tokenKinds["jwt"](s, "alice", allScopes, nil, key)
			p, err := key.Proof(http.MethodPost, s.url, bound, "")
			require.NoError(t, err)
			a := s.post(readPrivate(request{scheme: "DPoP", token: bound, proof: p, modern: true}))
			require.Equal(t, http.StatusUnauthorized, a.status, a.body)
			assert.Contains(t, a.challenge(), `error="use_dpop_nonce"`)
			nonce := a.header.Get("DPoP-Nonce")
			require.NotEmpty(t, nonce, mode)
			p, err = key.Proof(http.MethodPost, s.url, bound, nonce)
			require.NoError(t, err)
			a = s.post(readPrivate(request{scheme: "DPoP", token: bound, proof: p, modern: true}))
			assert.Equal(t, http.StatusOK, a.status, "%s: %s", mode, a.body)
		}
	})
}

// Scope challenge and step-up: a caller without the scope an operation
// needs gets 403 insufficient_scope naming it (a private record, the
// kit's scoped tool, and in intercept mode the go-sdk server's prompt and
// tool, through intercept's scopes), and the retry with a token that has
// it is served, in the same session.
func TestAuthScopeChallengeAndRetry(t *testing.T) {
	for _, mode := range authModes {
		for kind, mint := range tokenKinds {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				s := startAuth(t, mode, authConfig{})
				narrow := mint(s, "alice", []string{scopeBase}, nil, nil)
				sid := s.session(narrow)
				ops := map[string]struct {
					rq    request
					scope string
				}{
					"a private record": {readPrivate(request{}), scopePrivate},
					"the scoped tool":  {request{method: "tools/call", params: map[string]any{"name": "test_scoped_tool", "arguments": map[string]any{}}}, scopeTool},
				}
				if mode == "intercept" {
					ops["the go-sdk server's prompt"] = struct {
						rq    request
						scope string
					}{request{method: "prompts/get", params: map[string]any{"name": "test_simple_prompt"}}, scopePrompts}
					ops["the go-sdk server's tool"] = struct {
						rq    request
						scope string
					}{request{method: "tools/call", params: map[string]any{"name": "test_tool_with_progress", "arguments": map[string]any{}}}, scopeProgress}
				}
				for name, op := range ops {
					rq := op.rq
					rq.token, rq.session = narrow, sid
					a := s.post(rq)
					require.Equal(t, http.StatusForbidden, a.status, "%s: %s", name, a.body)
					assert.Contains(t, a.challenge(), `error="insufficient_scope"`, name)
					assert.Contains(t, a.challenge(), `scope="`+op.scope+`"`, name)
					assert.Contains(t, a.challenge(), `resource_metadata="`, name)

					rq.token = mint(s, "alice", []string{scopeBase, op.scope}, nil, nil) // step-up
					a = s.post(rq)
					assert.Equal(t, http.StatusOK, a.status, "%s after step-up: %s", name, a.body)
					assert.NotContains(t, a.body, `"error"`, name)
				}
			})
		}
	}
}

// Session isolation: bob, with his own valid token and alice's session
// id, is answered 404 (the kit's sessions in endpoint mode, the go-sdk
// server's through intercept), as is a request without a token; alice is
// served in her session.
func TestAuthSessionIsolation(t *testing.T) {
	for _, mode := range authModes {
		t.Run(mode, func(t *testing.T) {
			s := startAuth(t, mode, authConfig{})
			alice := tokenKinds["jwt"](s, "alice", allScopes, nil, nil)
			bob := tokenKinds["jwt"](s, "bob", allScopes, nil, nil)
			sid := s.session(alice)
			call := request{method: "tools/call", params: map[string]any{"name": "test_scoped_tool", "arguments": map[string]any{}}}
			rq := call
			rq.token, rq.session = alice, sid
			a := s.post(rq)
			require.Equal(t, http.StatusOK, a.status, a.body)
			assert.Contains(t, a.body, "called by alice")
			for who, tok := range map[string]string{"bob": bob, "anonymous": ""} {
				rq := call
				rq.token, rq.session = tok, sid
				a := s.post(rq)
				assert.Contains(t, []int{http.StatusNotFound, http.StatusUnauthorized}, a.status, "%s: %s", who, a.body)
				assert.NotContains(t, a.body, "called by")
				if who == "bob" {
					assert.Equal(t, http.StatusNotFound, a.status, a.body)
				}
			}
		})
	}
}

// The auth mode with an outside issuer and an outside introspection
// endpoint (the flags the suite's own authorization server will be given):
// their tokens are served, the built-in ones are not minted.
func TestAuthOutsideServers(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	is := authntest.Start(t, authntest.Options{Resource: resource})
	opaque := newOpaqueTokens(resource)
	intro := httptest.NewServer(opaque)
	t.Cleanup(intro.Close)
	af, err := newAuthFixture(context.Background(), authConfig{
		resource: resource, issuer: is.URL(), jwks: is.JWKSURL(),
		introspection: intro.URL, clientID: opaqueClientID, clientSecret: opaque.secret,
	})
	require.NoError(t, err)
	t.Cleanup(af.close)
	assert.Nil(t, af.issuer)
	assert.Nil(t, af.opaque)
	h, hub, err := newHandler("endpoint", af)
	require.NoError(t, err)
	t.Cleanup(hub.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	af.routes(mux)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	s := &authServer{t: t, url: resource, af: af}
	for name, tok := range map[string]string{
		"a JWT of the outside issuer":    is.Token("alice", allScopes...),
		"an opaque token it introspects": opaque.Mint("alice", opaqueOptions{scopes: allScopes}),
	} {
		a := s.post(readPrivate(request{token: tok, modern: true}))
		assert.Equal(t, http.StatusOK, a.status, "%s: %s", name, a.body)
	}
	a := s.post(readPrivate(request{token: opaque.Mint("alice", opaqueOptions{scopes: allScopes, audience: "https://other.example/mcp"}), modern: true}))
	assert.Equal(t, http.StatusUnauthorized, a.status)

	// The protected resource metadata names the outside issuer.
	resp, err := http.Get(strings.TrimSuffix(resource, "/mcp") + af.metaPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	assert.Equal(t, resource, meta.Resource)
	assert.Equal(t, []string{is.URL()}, meta.AuthorizationServers)
}

// Misconfigured auth flags are errors, never a fixture that admits anyone.
func TestAuthConfigErrors(t *testing.T) {
	for name, cfg := range map[string]authConfig{
		"no resource":      {},
		"an issuer alone":  {resource: "http://127.0.0.1:1/mcp", issuer: "https://as.example"},
		"a JWKS URL alone": {resource: "http://127.0.0.1:1/mcp", jwks: "https://as.example/jwks"},
		"an unknown -dpop": {resource: "http://127.0.0.1:1/mcp", dpop: "sometimes"},
	} {
		_, err := newAuthFixture(context.Background(), cfg)
		assert.Error(t, err, name)
	}
}

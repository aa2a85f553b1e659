package mount_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/examples/mount/routers"
)

// identityProvider is the test's authorization server: the development
// issuer with its key in a temporary directory and its JWK Set served over
// real HTTP on loopback. Every router under test gets tokens for its own
// resource (audience) signed with that one key.
type identityProvider struct {
	dir, url string
}

func startIdentityProvider(t *testing.T) *identityProvider {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	idp := &identityProvider{dir: t.TempDir(), url: srv.URL}
	is := idp.issuer(t, srv.URL+"/mcp") // creates the key
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	return idp
}

// issuer returns the provider's issuer minting tokens for audience.
func (idp *identityProvider) issuer(t *testing.T, audience string) *devissuer.Issuer {
	t.Helper()
	is, err := devissuer.Open(idp.dir, idp.url, audience, devissuer.Options{ClientID: "mount-test"})
	require.NoError(t, err)
	return is
}

// routerList is every router the examples mount the kit on.
var routerList = []struct {
	name string
	new  func(*kit.Kit) http.Handler
}{
	{"chi", routers.Chi},
	{"gorilla", routers.Gorilla},
	{"servemux", routers.ServeMux},
	// The pieces composed on each router: bearer verifier and strict
	// decode as middleware, resources/list to the list handler.
	{"chi composed", routers.ChiComposed},
	{"gorilla composed", routers.GorillaComposed},
	{"servemux composed", routers.ServeMuxComposed},
}

// TestRoutersBehaveTheSame runs one table of behaviours against each
// router, then checks that every router gave the same responses: status,
// headers (but Date and Content-Length) and body, byte for byte once the
// server's own base URL and the random cursors are replaced by
// placeholders.
func TestRoutersBehaveTheSame(t *testing.T) {
	is := startIdentityProvider(t)
	transcripts := map[string][]string{}
	for _, r := range routerList {
		t.Run(r.name, func(t *testing.T) {
			s := start(t, is, r.new)
			for _, st := range steps {
				res := s.do(t, st.req(s))
				t.Run(st.name, func(t *testing.T) { st.check(t, s, res) })
				transcripts[r.name] = append(transcripts[r.name], s.normalize(res))
			}
		})
	}
	ref := routerList[0].name
	for _, r := range routerList[1:] {
		require.Len(t, transcripts[r.name], len(steps), r.name)
		for i, st := range steps {
			assert.Equal(t, transcripts[ref][i], transcripts[r.name][i], "%q: %s answers differently from %s", st.name, r.name, ref)
		}
	}
}

// session is one router under test and what its steps carry forward.
type session struct {
	k          *kit.Kit
	client     *http.Client
	base       string // http://127.0.0.1:PORT
	alice, bob string // tokens

	cursor       string // the last nextCursor of alice's traversal
	challengeURL string // resource_metadata of the 401 challenge
}

// start serves router on a fresh loopback port whose URL is the resource.
func start(t *testing.T, idp *identityProvider, router func(*kit.Kit) http.Handler) *session {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	is := idp.issuer(t, base+"/mcp")
	k, err := kit.New(context.Background(), kit.Config{
		Resource: base + "/mcp", Issuer: is.Issuer(), JWKSURL: is.JWKSURL(),
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(k.Close)
	srv := httptest.NewUnstartedServer(router(k))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	token := func(sub string) string {
		tok, err := is.Sign(sub, []string{kit.Scope}, time.Hour)
		require.NoError(t, err)
		return tok
	}
	return &session{k: k, client: srv.Client(), base: base, alice: token("alice"), bob: token("bob")}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (s *session) do(t *testing.T, r *http.Request) *response {
	t.Helper()
	res, err := s.client.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return &response{status: res.StatusCode, header: res.Header, body: body}
}

var cursorRE = regexp.MustCompile(`"nextCursor":"[^"]*"`)

// normalize renders a response for comparison across routers.
func (s *session) normalize(res *response) string {
	var b strings.Builder
	b.WriteString(http.StatusText(res.status))
	names := make([]string, 0, len(res.header))
	for name := range res.header {
		if name != "Date" && name != "Content-Length" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b.WriteString("\n" + name + ": " + strings.Join(res.header[name], ", "))
	}
	b.WriteString("\n\n")
	b.Write(cursorRE.ReplaceAll(res.body, []byte(`"nextCursor":"{cursor}"`)))
	return strings.ReplaceAll(b.String(), s.base, "{base}")
}

// rpc is a legacy-era (2025-11-25) JSON-RPC request; token may be empty.
func (s *session) rpc(token, method string, params map[string]any) *http.Request {
	m := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		m["params"] = params
	}
	r := s.post(m, token)
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	return r
}

// modern is a 2026-07-28 request: _meta in the body, headers repeating it.
func (s *session) modern(token, method string, params map[string]any) *http.Request {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mount-test", "version": "1"},
	}
	r := s.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, token)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	return r
}

func (s *session) post(msg map[string]any, token string) *http.Request {
	b, _ := json.Marshal(msg)
	r, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(string(b)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// raw is a POST of body as it is.
func (s *session) raw(token, body string) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func (s *session) get(url string) *http.Request {
	if strings.HasPrefix(url, "/") {
		url = s.base + url
	}
	r, _ := http.NewRequest(http.MethodGet, url, nil)
	return r
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int            `json:"code"`
		Data map[string]any `json:"data"`
	} `json:"error"`
}

type listResult struct {
	Resources []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"resources"`
	NextCursor string `json:"nextCursor"`
	CacheScope string `json:"cacheScope"`
}

func decodeRPC(t *testing.T, res *response) rpcResponse {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	var r rpcResponse
	require.NoError(t, json.Unmarshal(res.body, &r), string(res.body))
	return r
}

func decodeList(t *testing.T, res *response) listResult {
	t.Helper()
	r := decodeRPC(t, res)
	require.Nil(t, r.Error, string(res.body))
	var l listResult
	require.NoError(t, json.Unmarshal(r.Result, &l))
	assert.Equal(t, "private, max-age=0", res.header.Get("Cache-Control"))
	assert.Equal(t, "Authorization", res.header.Get("Vary"))
	return l
}

func uris(l listResult) []string {
	out := []string{}
	for _, r := range l.Resources {
		out = append(out, r.URI)
	}
	return out
}

type metadataDoc struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

func checkMetadata(t *testing.T, s *session, res *response) {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	assert.Equal(t, "application/json", res.header.Get("Content-Type"))
	var md metadataDoc
	require.NoError(t, json.Unmarshal(res.body, &md))
	assert.Equal(t, s.k.Resource, md.Resource, "resource is the configured one, byte for byte")
	assert.Equal(t, []string{s.k.Issuer}, md.AuthorizationServers)
	assert.Equal(t, []string{kit.Scope}, md.ScopesSupported)
}

var resourceMetadataRE = regexp.MustCompile(`resource_metadata="([^"]*)"`)

// steps is the table every router runs, in order; later steps use what
// earlier ones found (the cursor, the challenge's metadata URL).
var steps = []struct {
	name  string
	req   func(s *session) *http.Request
	check func(t *testing.T, s *session, res *response)
}{
	{
		name: "initialize (2025-11-25) needs no token",
		req: func(s *session) *http.Request {
			return s.rpc("", "initialize", map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "mount-test", "version": "1"},
			})
		},
		check: func(t *testing.T, _ *session, res *response) {
			r := decodeRPC(t, res)
			require.Nil(t, r.Error)
			var init struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      struct{ Name string }      `json:"serverInfo"`
			}
			require.NoError(t, json.Unmarshal(r.Result, &init))
			assert.Equal(t, "2025-11-25", init.ProtocolVersion)
			assert.Contains(t, init.Capabilities, "resources")
			assert.Equal(t, "mcpkit-mount-example", init.ServerInfo.Name)
		},
	},
	{
		name: "server/discover (2026-07-28) needs no token",
		req:  func(s *session) *http.Request { return s.modern("", "server/discover", nil) },
		check: func(t *testing.T, _ *session, res *response) {
			r := decodeRPC(t, res)
			require.Nil(t, r.Error)
			var d struct {
				ResultType        string   `json:"resultType"`
				SupportedVersions []string `json:"supportedVersions"`
			}
			require.NoError(t, json.Unmarshal(r.Result, &d))
			assert.Equal(t, "complete", d.ResultType)
			assert.Contains(t, d.SupportedVersions, "2026-07-28")
		},
	},
	{
		name:  "metadata at the resource's well-known path",
		req:   func(s *session) *http.Request { return s.get(s.k.MetadataPath) },
		check: checkMetadata,
	},
	{
		name:  "metadata at the root well-known path",
		req:   func(s *session) *http.Request { return s.get("/.well-known/oauth-protected-resource") },
		check: checkMetadata,
	},
	{
		name: "resources/list without a token gets a 401 challenge",
		req:  func(s *session) *http.Request { return s.rpc("", "resources/list", nil) },
		check: func(t *testing.T, s *session, res *response) {
			require.Equal(t, http.StatusUnauthorized, res.status)
			challenge := res.header.Get("WWW-Authenticate")
			assert.Equal(t, `Bearer resource_metadata="`+s.base+`/.well-known/oauth-protected-resource/mcp", scope="notes:read"`, challenge)
			m := resourceMetadataRE.FindStringSubmatch(challenge)
			require.Len(t, m, 2)
			s.challengeURL = m[1]
		},
	},
	{
		name: "the challenge's resource_metadata URL serves the document",
		req: func(s *session) *http.Request {
			if s.challengeURL == "" {
				return s.get("/no-challenge-url")
			}
			return s.get(s.challengeURL)
		},
		check: checkMetadata,
	},
	{
		name: "resources/list with an invalid token gets 401 invalid_token",
		req:  func(s *session) *http.Request { return s.rpc("not-a-token", "resources/list", nil) },
		check: func(t *testing.T, _ *session, res *response) {
			require.Equal(t, http.StatusUnauthorized, res.status)
			assert.Contains(t, res.header.Get("WWW-Authenticate"), `error="invalid_token"`)
		},
	},
	{
		name: "alice's first page holds only her notes and a nextCursor",
		req:  func(s *session) *http.Request { return s.rpc(s.alice, "resources/list", nil) },
		check: func(t *testing.T, s *session, res *response) {
			l := decodeList(t, res)
			assert.Equal(t, s.k.Notes.URIs("alice")[:5], uris(l))
			require.NotEmpty(t, l.NextCursor)
			s.cursor = l.NextCursor
		},
	},
	{
		name: "the nextCursor gives alice her second page",
		req: func(s *session) *http.Request {
			return s.rpc(s.alice, "resources/list", map[string]any{"cursor": s.cursor})
		},
		check: func(t *testing.T, s *session, res *response) {
			l := decodeList(t, res)
			assert.Equal(t, s.k.Notes.URIs("alice")[5:10], uris(l))
			require.NotEmpty(t, l.NextCursor)
			s.cursor = l.NextCursor
		},
	},
	{
		name: "bob cannot continue alice's traversal with her cursor",
		req: func(s *session) *http.Request {
			return s.rpc(s.bob, "resources/list", map[string]any{"cursor": s.cursor})
		},
		check: func(t *testing.T, _ *session, res *response) {
			r := decodeRPC(t, res)
			require.NotNil(t, r.Error)
			assert.Equal(t, -32602, r.Error.Code)
			assert.Equal(t, "invalid", r.Error.Data["reason"])
		},
	},
	{
		name: "alice's last page has no nextCursor",
		req: func(s *session) *http.Request {
			return s.rpc(s.alice, "resources/list", map[string]any{"cursor": s.cursor})
		},
		check: func(t *testing.T, s *session, res *response) {
			l := decodeList(t, res)
			assert.Equal(t, s.k.Notes.URIs("alice")[10:], uris(l))
			assert.Empty(t, l.NextCursor)
		},
	},
	{
		name: "alice's first page in 2026-07-28 is private too",
		req:  func(s *session) *http.Request { return s.modern(s.alice, "resources/list", nil) },
		check: func(t *testing.T, s *session, res *response) {
			l := decodeList(t, res)
			assert.Equal(t, s.k.Notes.URIs("alice")[:5], uris(l))
			assert.NotEmpty(t, l.NextCursor)
			assert.Equal(t, "private", l.CacheScope)
		},
	},
	{
		name: "bob's list holds only his notes",
		req:  func(s *session) *http.Request { return s.rpc(s.bob, "resources/list", nil) },
		check: func(t *testing.T, s *session, res *response) {
			l := decodeList(t, res)
			assert.Equal(t, s.k.Notes.URIs("bob"), uris(l))
			assert.Empty(t, l.NextCursor)
		},
	},
	{
		name: "alice reads her note",
		req: func(s *session) *http.Request {
			return s.rpc(s.alice, "resources/read", map[string]any{"uri": s.k.Notes.URIs("alice")[0]})
		},
		check: func(t *testing.T, _ *session, res *response) {
			r := decodeRPC(t, res)
			require.Nil(t, r.Error, string(res.body))
			assert.JSONEq(t, `{"contents":[{"uri":"notes://notes/n001","mimeType":"text/plain","text":"Note 1 of alice."}]}`, string(r.Result))
		},
	},
	{
		name: "alice cannot read bob's note",
		req: func(s *session) *http.Request {
			return s.rpc(s.alice, "resources/read", map[string]any{"uri": s.k.Notes.URIs("bob")[0]})
		},
		check: func(t *testing.T, s *session, res *response) {
			r := decodeRPC(t, res)
			require.NotNil(t, r.Error)
			assert.Equal(t, -32002, r.Error.Code)
			assert.Equal(t, s.k.Notes.URIs("bob")[0], r.Error.Data["uri"])
		},
	},
	{
		// Attack: a body a lenient decoder reads as resources/read.
		name: "a duplicate method member is refused by the strict decode",
		req: func(s *session) *http.Request {
			r := s.raw(s.alice, `{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/list"}`)
			return r
		},
		check: func(t *testing.T, _ *session, res *response) {
			assert.Equal(t, http.StatusBadRequest, res.status)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}`, string(res.body))
		},
	},
	{
		name: "a body that is not JSON is -32700",
		req:  func(s *session) *http.Request { return s.raw("", `{"jsonrpc":`) },
		check: func(t *testing.T, _ *session, res *response) {
			assert.Equal(t, http.StatusBadRequest, res.status)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, string(res.body))
		},
	},
	{
		name: "GET /mcp is 405",
		req:  func(s *session) *http.Request { return s.get("/mcp") },
		check: func(t *testing.T, _ *session, res *response) {
			assert.Equal(t, http.StatusMethodNotAllowed, res.status)
			assert.Equal(t, "POST", res.header.Get("Allow"))
		},
	},
	{
		name: "health",
		req:  func(s *session) *http.Request { return s.get("/healthz") },
		check: func(t *testing.T, _ *session, res *response) {
			assert.Equal(t, http.StatusOK, res.status)
			assert.JSONEq(t, `{"status":"ok"}`, string(res.body))
		},
	},
	{
		name: "an unknown path is 404",
		req:  func(s *session) *http.Request { return s.get("/mcp/extra") },
		check: func(t *testing.T, _ *session, res *response) {
			assert.Equal(t, http.StatusNotFound, res.status)
		},
	},
}

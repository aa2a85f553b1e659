package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
)

// startIssuer is the identity provider of a test: a development issuer for
// audience whose JWK Set is served over real HTTP on loopback.
func startIssuer(t *testing.T, audience string) *devissuer.Issuer {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is, err := devissuer.New(srv.URL, audience, devissuer.Options{ClientID: "legacy-test"})
	require.NoError(t, err)
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	return is
}

// bearer adds a bearer token to every request, as an MCP client
// configured with an access token does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

type server struct {
	app        *app
	url        string // the MCP endpoint
	base       string
	alice, bob string
}

// startServer serves the wrapped server on a loopback port whose URL is the
// resource, with tokens of a test issuer.
func startServer(t *testing.T, stateful bool) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	is := startIssuer(t, base+"/mcp")
	a, err := newApp(context.Background(), config{
		resource: base + "/mcp", issuer: is.Issuer(), jwksURL: is.JWKSURL(), stateful: stateful, logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(a.close)
	srv := httptest.NewUnstartedServer(a.routes())
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	token := func(sub string) string {
		tok, err := is.Sign(sub, []string{Scope}, time.Hour)
		require.NoError(t, err)
		return tok
	}
	return &server{app: a, url: base + "/mcp", base: base, alice: token("alice"), bob: token("bob")}
}

// connect opens a go-sdk client session with token, speaking version ("" is
// the newest the SDK knows: 2026-07-28, begun with server/discover).
func (s *server) connect(t *testing.T, token, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "legacy-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   s.url,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// listAll walks resources/list through every nextCursor.
func listAll(t *testing.T, cs *mcp.ClientSession) (uris []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		page, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(page.Resources), pageSize)
		for _, r := range page.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = page.NextCursor; cursor == "" {
			return uris, pages
		}
		require.Less(t, pages, 100, "the traversal must end")
	}
}

// TestGoSDKClient drives the wrapped server with the official go-sdk
// client in both protocol eras: the go-sdk tool works through the wrapper,
// resources/list pages through the caller's own texts only, reads work,
// and another user's text is not readable.
func TestGoSDKClient(t *testing.T) {
	for _, era := range []struct {
		name, version, negotiated string
		stateful                  bool
	}{
		{"2026-07-28 (server/discover)", "", "2026-07-28", false},
		{"2025-11-25 (initialize)", "2025-11-25", "2025-11-25", false},
		{"stateful go-sdk handler, newest client falls back to 2025-11-25", "", "2025-11-25", true},
		{"stateful go-sdk handler, 2025-11-25 with a session", "2025-11-25", "2025-11-25", true},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			s := startServer(t, era.stateful)
			alice := s.connect(t, s.alice, era.version)
			init := alice.InitializeResult()
			require.NotNil(t, init)
			assert.Equal(t, era.negotiated, init.ProtocolVersion)
			require.NotNil(t, init.Capabilities.Resources, "Intercept announces the inventory")
			require.NotNil(t, init.Capabilities.Tools, "the go-sdk server's tools stay")
			if era.stateful {
				assert.NotEmpty(t, alice.ID(), "the go-sdk handler's session passes through Intercept")
			} else {
				assert.Empty(t, alice.ID(), "a stateless handler mints no session")
			}

			tools, err := alice.ListTools(ctx, nil)
			require.NoError(t, err)
			require.Len(t, tools.Tools, 1)
			assert.Equal(t, "word_count", tools.Tools[0].Name)
			res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "the quick brown fox"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "4 words", res.Content[0].(*mcp.TextContent).Text)

			uris, pages := listAll(t, alice)
			assert.Equal(t, s.app.texts.URIs("alice"), uris, "alice's texts, each once, in order")
			assert.Equal(t, 3, pages, "12 texts in pages of 5")
			for _, u := range s.app.texts.URIs("bob") {
				assert.NotContains(t, uris, u)
			}
			for i, u := range uris {
				read, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
				require.NoError(t, err, u)
				require.Len(t, read.Contents, 1)
				assert.Equal(t, u, read.Contents[0].URI)
				assert.Equal(t, "This is text number "+strconv.Itoa(i+1)+" of alice.", read.Contents[0].Text)
			}
			for _, u := range s.app.texts.URIs("bob") {
				_, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
				assert.Error(t, err, "bob's %s is not readable with alice's token", u)
			}

			bob := s.connect(t, s.bob, era.version)
			bobURIs, _ := listAll(t, bob)
			assert.Equal(t, s.app.texts.URIs("bob"), bobURIs)
			read, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: bobURIs[0]})
			require.NoError(t, err)
			assert.Equal(t, "This is text number 1 of bob.", read.Contents[0].Text)
		})
	}
}

// TestWithoutToken: the tool and the inventory both need a token, and the
// 401 challenge points at the metadata document, which is served.
func TestWithoutToken(t *testing.T) {
	s := startServer(t, false)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"a b"}}}`,
	} {
		r, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
		require.NoError(t, err)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		assert.Equal(t, `Bearer resource_metadata="`+s.base+`/.well-known/oauth-protected-resource/mcp", scope="texts:read"`,
			res.Header.Get("WWW-Authenticate"), body)
	}
	res, err := http.Get(s.base + "/.well-known/oauth-protected-resource/mcp")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(b), `"resource":"`+s.url+`"`)
}

// TestRunDevelopmentMode runs the program as `go run` would, on a free
// port: it prints development tokens that the go-sdk client can use, and
// stops cleanly when its context ends.
func TestRunDevelopmentMode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard)
		_ = pw.Close()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	base, ok := strings.CutPrefix(<-lines, "listening on ")
	require.True(t, ok)
	var alice string
	for l := range lines {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "export ALICE="); ok {
			alice = v
			break
		}
	}
	go func() {
		for range lines {
		}
	}()
	require.NotEmpty(t, alice)

	s := &server{url: base + "/mcp"}
	cs := s.connect(t, alice, "2025-11-25")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "one two"}})
	require.NoError(t, err)
	assert.Equal(t, "2 words", res.Content[0].(*mcp.TextContent).Text)
	page, err := cs.ListResources(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, page.Resources, pageSize)
	assert.NotEmpty(t, page.NextCursor)
	require.NoError(t, cs.Close())

	// The development issuer's JWK Set and metadata are served on the same
	// origin; the resource metadata names that issuer.
	for path, want := range map[string]string{
		"/dev/jwks.json": `"kty":"EC"`,
		"/.well-known/oauth-authorization-server/dev": `"issuer":"` + base + `/dev"`,
		"/.well-known/oauth-protected-resource/mcp":   `"authorization_servers":["` + base + `/dev"]`,
	} {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Contains(t, string(b), want, path)
	}

	cancel()
	assert.NoError(t, <-done)
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	for _, args := range [][]string{
		{"-issuer", "http://127.0.0.1:1"},
		{"-resource", "not a url"},
		{"extra"},
	} {
		err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, args...), io.Discard, io.Discard)
		assert.Error(t, err, args)
	}
}

// The stateful example (-stateful): bob, with his own valid token and
// alice's Mcp-Session-Id, gets 404 for the go-sdk tool, the GET stream and
// DELETE (intercept binds each go-sdk session to the user who began it);
// a forged token gets 401 and never reaches the go-sdk handler, which no
// longer sits behind auth.Handler; alice is served.
func TestStatefulSessionsAreTheirUsers(t *testing.T) {
	s := startServer(t, true)
	do := func(method, token, session, body string) *http.Response {
		r, err := http.NewRequest(method, s.url, strings.NewReader(body))
		require.NoError(t, err)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}
	res := do(http.MethodPost, s.alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sid := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	require.Equal(t, http.StatusAccepted, do(http.MethodPost, s.alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"a b"}}}`
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = call
		}
		assert.Equal(t, http.StatusNotFound, do(method, s.bob, sid, body).StatusCode, "bob %s", method)
	}
	forged := s.alice[:len(s.alice)-4] + "AAAA"
	assert.Equal(t, http.StatusUnauthorized, do(http.MethodPost, forged, sid, call).StatusCode)
	assert.Equal(t, http.StatusOK, do(http.MethodPost, s.alice, sid, call).StatusCode)
	assert.Less(t, do(http.MethodDelete, s.alice, sid, "").StatusCode, 300)
}

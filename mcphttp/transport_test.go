package mcphttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatusMap covers the HTTP status quick map of the specification
// digest (§1.5) and the kit's own transport rules, one row each.
func TestStatusMap(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{MaxBody: 1024, Origins: []string{"https://app.example.com"}})
	alice := f.Token(t, "alice")
	listLegacy := mcptest.Legacy(1, "resources/list", nil)
	discover, discoverHdr := mcptest.Modern(1, "server/discover", nil)
	unknownModern, unknownModernHdr := mcptest.Modern(1, "tools/list", nil)

	cases := []struct {
		name     string
		rq       mcptest.Request
		status   int
		code     int64 // expected JSON-RPC error code, 0 for none
		noBody   bool
		wwwAuth  string // substring of WWW-Authenticate
		allowHdr string
	}{
		// A29: a cross-origin browser request from an origin not allowed.
		{name: "origin not allowed", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Origin": "https://evil.example.com"}}, status: 403, code: -32600},
		{name: "opaque null origin", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Origin": "null"}}, status: 403, code: -32600},
		{name: "allowed origin", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Origin": "https://app.example.com"}}, status: 200},
		{name: "same origin", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Origin": "http://127.0.0.1:8080"}}, status: 200},
		{name: "content type not json", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Content-Type": "text/plain"}}, status: 415, code: -32600},
		{name: "content type missing", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Content-Type": ""}}, status: 415, code: -32600},
		{name: "content type with charset", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}}, status: 200},
		{name: "accept only sse", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Accept": "text/event-stream"}}, status: 406, code: -32600},
		{name: "accept json refused by q=0", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Accept": "application/json;q=0, text/html"}}, status: 406, code: -32600},
		{name: "accept wildcard", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Accept": "*/*"}}, status: 200},
		{name: "accept absent", rq: mcptest.Request{Body: listLegacy, Token: alice, Headers: map[string]string{"Accept": ""}}, status: 200},
		// A25: body over the limit.
		{name: "body too large", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2000) + `"}}`}, status: 413, code: -32600},
		{name: "not json", rq: mcptest.Request{Body: `{"jsonrpc":`}, status: 400, code: -32700},
		{name: "invalid request", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":1}`}, status: 400, code: -32600},
		// A27: duplicate and case-variant members.
		{name: "duplicate method", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/list"}`}, status: 400, code: -32600},
		{name: "case variant member", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":1,"Method":"ping"}`}, status: 400, code: -32600},
		{name: "notification accepted", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, status: 202, noBody: true},
		{name: "client response accepted", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":7,"result":{}}`}, status: 202, noBody: true},
		{name: "unsupported protocol version header", rq: mcptest.Request{Body: mcptest.Legacy(1, "ping", nil), Headers: map[string]string{"MCP-Protocol-Version": "1999-01-01"}}, status: 400, code: -32022},
		{name: "modern header mismatch", rq: mcptest.Request{Body: discover, Headers: merge(discoverHdr, map[string]string{"Mcp-Method": "resources/list"})}, status: 400, code: -32020},
		{name: "modern missing _meta field", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, Headers: discoverHdr}, status: 400, code: -32602},
		{name: "modern unknown method", rq: mcptest.Request{Body: unknownModern, Headers: unknownModernHdr}, status: 404, code: -32601},
		{name: "legacy unknown method", rq: mcptest.Request{Body: mcptest.Legacy(1, "tools/list", nil)}, status: 200, code: -32601},
		{name: "no token where required", rq: mcptest.Request{Body: listLegacy}, status: 401, wwwAuth: `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`},
		{name: "invalid token on any method", rq: mcptest.Request{Body: mcptest.Legacy(1, "ping", nil), Token: "not.a.token"}, status: 401, wwwAuth: `error="invalid_token"`},
		{name: "insufficient scope", rq: mcptest.Request{Body: listLegacy, Token: f.Token(t, "alice", "other:scope")}, status: 403, wwwAuth: `error="insufficient_scope", scope="docs:read"`},
		// A14: a token in the query string is refused, even beside a header.
		{name: "token in query", rq: mcptest.Request{Body: listLegacy, Token: alice, Query: "access_token=" + alice}, status: 400, wwwAuth: `error="invalid_request"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := f.Do(t, tc.rq)
			require.Equal(t, tc.status, w.Code, "Body: %s", w.Body.String())
			if tc.noBody {
				assert.Empty(t, w.Body.String())
			}
			if tc.code != 0 {
				r := mcptest.Decode(t, w)
				require.NotNil(t, r.Error, "Body: %s", w.Body.String())
				assert.Equal(t, tc.code, r.Error.Code)
			}
			if tc.wwwAuth != "" {
				assert.Contains(t, w.Header().Get("WWW-Authenticate"), tc.wwwAuth)
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestMethodsOtherThanPOST(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		r := httptest.NewRequest(m, "/mcp", nil)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("Mcp-Session-Id", "abc")
		w := httptest.NewRecorder()
		f.EP.ServeHTTP(w, r)
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, m)
		assert.Equal(t, "POST", w.Header().Get("Allow"), m)
	}
}

// TestDNSRebinding serves the endpoint on a real loopback listener: a
// request naming another host is refused, one naming the loopback host is
// served (the conformance suite's dns-rebinding-protection scenario).
func TestDNSRebinding(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	srv := httptest.NewServer(f.EP)
	defer srv.Close()
	send := func(host, origin string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(mcptest.Legacy(1, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})))
		require.NoError(t, err)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	own := strings.TrimPrefix(srv.URL, "http://")
	port := own[strings.LastIndex(own, ":"):]
	assert.Equal(t, 403, send("evil.example.com"+port, "http://evil.example.com"+port), "rebound host and origin")
	assert.Equal(t, 403, send("evil.example.com"+port, ""), "rebound host without origin")
	assert.Equal(t, 200, send(own, "http://"+own), "loopback host and own origin")
	assert.Equal(t, 200, send("localhost"+port, "http://localhost"+port), "localhost")
	assert.Equal(t, 200, send(own, ""), "no origin")
	assert.Equal(t, 403, send(own, "http://evil.example.com"), "foreign origin to the right host")
}

// TestBodyLimitReadsAtMostTheLimit sends a body larger than the limit
// without Content-Length and counts what the endpoint read (A25).
func TestBodyLimitReadsAtMostTheLimit(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{MaxBody: 1000})
	body := &countingReader{r: strings.NewReader(strings.Repeat(" ", 1<<20))}
	r := httptest.NewRequest(http.MethodPost, "/mcp", body)
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.EP.ServeHTTP(w, r)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.LessOrEqual(t, body.n, int64(1000+1+4096), "read %d bytes of a 1 MiB body", body.n)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestPrivateCacheHeaders: every answer to a POST forbids shared caching
// and varies by Authorization (A23).
func TestPrivateCacheHeaders(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	for _, rq := range []mcptest.Request{
		{Body: mcptest.Legacy(1, "resources/list", nil), Token: f.Token(t, "alice")},
		{Body: mcptest.Legacy(1, "ping", nil)},
		{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": "test://static-text"})},
	} {
		w := f.Do(t, rq)
		require.Equal(t, 200, w.Code)
		assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
		assert.Contains(t, w.Header().Values("Vary"), "Authorization")
	}
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil)})
	require.Equal(t, 401, w.Code)
	assert.Contains(t, w.Header().Get("Cache-Control"), "no-store")
	assert.Contains(t, w.Header().Values("Vary"), "Authorization")
}

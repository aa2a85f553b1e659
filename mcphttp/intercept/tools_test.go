package intercept_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

func TestToolsClashAtConstruction(t *testing.T) {
	for _, sse := range []bool{false, true} {
		for _, pages := range []int{0, 2} {
			legacy := &toolServer{tools: []string{"echo", "search"}, sse: sse, pages: pages}
			_, _, err := interceptTools(t, legacy, nil)
			assert.ErrorContains(t, err, `tool named "search"`, "sse=%v pages=%d", sse, pages)
			assert.Equal(t, int64(1), legacy.deletes.Load(), "the probe's session is ended")
		}
	}
	// Without tools on the endpoint, the legacy handler's search is nobody's concern.
	f := mcptest.New(t, mcptest.Options{})
	_, err := intercept.New(f.EP, &toolServer{tools: []string{"search"}}, intercept.Options{})
	assert.NoError(t, err)
	// Nor is a legacy tool the endpoint does not claim.
	_, _, err = interceptTools(t, &toolServer{tools: []string{"echo", "searchable"}, pages: 2}, nil)
	assert.NoError(t, err)
}

func TestToolsRouting(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			legacy := &toolServer{tools: []string{"echo"}, sse: sse}
			_, h, err := interceptTools(t, legacy, nil)
			require.NoError(t, err)
			post := func(body string) *httptest.ResponseRecorder {
				r := request(body, map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "legacy-session"})
				return serve(h, withPrincipal(t, r, alice))
			}
			// initialize announces tools (the legacy handler's own capability stays).
			w := serve(h, withPrincipal(t, request(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil), alice))
			assert.Contains(t, w.Body.String(), `"tools":{"listChanged":true}`)
			assert.Contains(t, w.Body.String(), `"resources":`)

			// tools/list: the legacy tools, then the bridge's for alice.
			w = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			names := toolNames(t, w)
			assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, names)
			assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
			assert.Contains(t, w.Header().Values("Vary"), "Authorization")

			before := legacy.calls.Load()
			w = post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			assert.Contains(t, w.Body.String(), "legacy echo")
			assert.Equal(t, before+1, legacy.calls.Load())

			w = post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"docs://documents/alice-0001"}}}`)
			assert.Contains(t, w.Body.String(), "Contents of Document alice-0001", "a bridge tool is served here")
			// "Name" reads as name to the legacy handler's decoder, not to
			// the strict one: answered here, never forwarded.
			w = post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"Name":"echo"}}`)
			assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code)
			// An escaped name is the same name to both decoders.
			w = post(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_r\u0065source","arguments":{"uri":"test://static-text"}}}`)
			assert.Contains(t, w.Body.String(), "This is the content of the static text resource.")
			// A name that is not a string is unreadable: ours too.
			w = post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":["echo"]}}`)
			assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code)
			assert.Equal(t, before+1, legacy.calls.Load(), "none of these reached the legacy handler")

			// A later tools/list page is the legacy handler's own.
			w = post(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"page-1"}}`)
			assert.Equal(t, []string{"echo"}, toolNames(t, w))

			// A batch holding tools/list is refused: the merge is for single messages.
			w = post(`[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`)
			assert.Equal(t, 400, w.Code)
		})
	}
}

func TestToolsLegacyWithoutTools(t *testing.T) {
	_, h, err := interceptTools(t, &toolServer{noTools: true}, nil)
	require.NoError(t, err)
	r := request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	w := serve(h, withPrincipal(t, r, alice))
	assert.Equal(t, []string{"list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
}

// An anonymous caller, when anonymous requests reach legacy, gets the
// bridge's anonymous tools beside the legacy handler's; credentials that
// prove no caller get the endpoint's 401 and reach neither.
func TestToolsListAnonymous(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{}, bridge{}) // with the fixture's JWT Authenticator
	legacy := &toolServer{tools: []string{"echo"}}
	h, err := intercept.New(f.EP, legacy, intercept.Options{ForwardAnonymous: true})
	require.NoError(t, err)
	r := request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	assert.Equal(t, []string{"echo", "read_resource"}, toolNames(t, serve(h, r)))
	r = request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer not-a-token"})
	w := serve(h, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), "invalid_token")
	r = request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": "Bearer " + f.Token(t, "alice")})
	assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, toolNames(t, serve(h, r)))
}

// TestToolsClashAtRunTime: a legacy handler that could not be probed (it
// wants a token) and lists a bridge tool's name: logged once, the
// bridge's tool listed and called instead, never two tools of a name.
func TestToolsClashAtRunTime(t *testing.T) {
	var logs syncBuffer
	legacy := &toolServer{tools: []string{"echo", "read_resource"}, needToken: true}
	_, h, err := interceptTools(t, legacy, &logs)
	require.NoError(t, err, "a handler that cannot be probed is no construction error")
	assert.Contains(t, logs.String(), "could not list the legacy handler's tools")
	headers := map[string]string{"MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer x"}
	for range 2 {
		r := request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headers)
		w := serve(h, withPrincipal(t, r, alice))
		assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "the endpoint's tool is listed and called instead"), "logged once")
	r := request(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"test://static-text"}}}`, headers)
	w := serve(h, withPrincipal(t, r, alice))
	assert.Contains(t, w.Body.String(), "This is the content of the static text resource.")
	assert.Zero(t, legacy.calls.Load())
}

// Legacy answers the merge leaves alone: errors, refusals, and answers to
// another id.
func TestToolsListLegacyAnswersPassUnchanged(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }}, bridge{})
	cases := []struct {
		name   string
		status int
		ct     string
		body   string
	}{
		{"an error", 200, "application/json", `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"busy"}}`},
		{"a refused session", 404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`},
		{"an answer to another id", 200, "application/json", `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`},
		{"not JSON", 200, "text/plain", `tools`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					return
				}
				w.Header().Set("Content-Type", tc.ct)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			h, err := intercept.New(f.EP, legacy, intercept.Options{})
			require.NoError(t, err)
			r := request(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			w := serve(h, withPrincipal(t, r, alice))
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, tc.body, w.Body.String())
		})
	}
}

// The modern protocol: the merged list is private, and the bridge's part
// of it is the endpoint's answer for that era.
func TestToolsListModern(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }}, bridge{})
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":60000,"cacheScope":"public"}}`))
	})
	h, err := intercept.New(f.EP, legacy, intercept.Options{})
	require.NoError(t, err)
	body, headers := mcptest.Modern(1, "tools/list", nil)
	w := serve(h, withPrincipal(t, request(body, headers), alice))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
	var res struct {
		Result struct {
			CacheScope string `json:"cacheScope"`
			TTL        *int   `json:"ttlMs"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &res))
	assert.Equal(t, "private", res.Result.CacheScope)
	require.NotNil(t, res.Result.TTL)
	assert.Zero(t, *res.Result.TTL)
}

// A legacy handler that announces resources is told about at start (its
// resource handlers are never reached: every resources/ method is the
// endpoint's), once, and at its first initialize answer when it could not
// be probed.
func TestLegacyResourcesLogged(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	withResources := fixedLegacy(200, "application/json",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{},"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`, false)
	var logs syncBuffer
	h, err := intercept.New(f.EP, withResources, intercept.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), ForwardAnonymous: true})
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "the legacy handler announces resources"), logs.String())
	serve(h, request(initBody, nil))
	assert.Equal(t, 1, strings.Count(logs.String(), "the legacy handler announces resources"), "once")

	// A handler that cannot be probed (it wants a token): logged at its
	// first initialize answer.
	var later syncBuffer
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		withResources.ServeHTTP(w, r)
	})
	h, err = intercept.New(f.EP, guarded, intercept.Options{Logger: slog.New(slog.NewTextHandler(&later, nil))})
	require.NoError(t, err)
	assert.NotContains(t, later.String(), "announces resources")
	w := serve(h, request(initBody, map[string]string{"Authorization": "Bearer " + f.Token(t, "alice")}))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, later.String(), "announces resources")

	// Without resources: nothing.
	var none syncBuffer
	_, err = intercept.New(f.EP, &toolServer{tools: []string{"echo"}}, intercept.Options{Logger: slog.New(slog.NewTextHandler(&none, nil))})
	require.NoError(t, err)
	assert.NotContains(t, none.String(), "announces resources")
}

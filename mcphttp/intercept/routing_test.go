package intercept_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// TestForwardsUntouched checks that a forwarded request reaches the
// legacy handler with the same body and headers (an endpoint without an
// Authenticator: credentials are the service's own middleware's; the
// session is one legacy began anonymously).
func TestForwardsUntouched(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }})
	var gotBody, gotSession, gotAuth string
	legacyHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotSession, gotAuth = string(b), r.Header.Get("Mcp-Session-Id"), r.Header.Get("Authorization")
		w.Header().Set("Mcp-Session-Id", "s-123")
		w.WriteHeader(http.StatusAccepted)
	})
	h, err := intercept.New(f.EP, legacyHandler, intercept.Options{})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, serve(h, request(initBody, nil)).Code, "legacy begins s-123")
	body := `{"jsonrpc":"2.0",  "id":9,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3]}}}`
	w := serve(h, request(body, map[string]string{
		"Mcp-Session-Id": "s-123", "Authorization": "Bearer opaque-for-the-legacy-handler",
	}))
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.Equal(t, body, gotBody, "byte-identical body")
	assert.Equal(t, "s-123", gotSession)
	assert.Equal(t, "Bearer opaque-for-the-legacy-handler", gotAuth, "forwarded headers are untouched")

	// GET streams go to the legacy handler too.
	w = serve(h, httptest.NewRequest(http.MethodGet, "/mcp", nil))
	assert.Equal(t, http.StatusAccepted, w.Code)

	// Owned methods never reach it.
	gotBody = ""
	w = serve(h, request(mcptest.Legacy(1, "resources/read", map[string]any{"uri": "test://static-text"}), nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "This is the content of the static text resource.")
	assert.Empty(t, gotBody)

	// Nor does a body a Decoder in front decoded already: its decode is used.
	w = serve(jsonrpc.Decoder(jsonrpc.Limits{})(h), request(mcptest.Legacy(2, "resources/read", map[string]any{"uri": "test://static-text"}), nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `"id":2`)
	assert.Empty(t, gotBody)
	w = serve(jsonrpc.Decoder(jsonrpc.Limits{})(h), request(body, nil))
	assert.Equal(t, http.StatusAccepted, w.Code, "the legacy handler's answer")
	assert.Equal(t, body, gotBody, "forwarded byte for byte after a Decoder too")
}

// No body that the strict decode reads as something else, or cannot read,
// reaches the legacy handler: duplicate and case-variant member names,
// batches mixing owned and forwarded methods, invalid elements.
func TestRoutesOnTheStrictDecode(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	bob := f.Token(t, "bob")
	const aliceDoc = `{"uri":"docs://documents/alice-0001"}`
	cases := []struct {
		name    string
		body    string
		forward bool // reaches the legacy handler
		status  int
		split   string // a batch split: the part legacy gets
	}{
		{"a tool call is forwarded", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, true, 200, ""},
		{"a notification is forwarded", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, 200, ""},
		{"a client response is forwarded", `{"jsonrpc":"2.0","id":9,"result":{}}`, true, 200, ""},
		{"resources/read is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":` + aliceDoc + `}`, false, 200, ""},
		{"resources/subscribe is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":` + aliceDoc + `}`, false, 200, ""},
		{"an unknown resources/ method is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/export"}`, false, 200, ""},
		{"a resource completion is ours", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}}`, false, 200, ""},
		{"a prompt completion is forwarded", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`, true, 200, ""},
		// Attack rows: each body is read as a resource method by a lenient
		// decoder, or cannot be read unambiguously.
		{"duplicate method, the last one a resource method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/read","params":` + aliceDoc + `}`, false, 400, ""},
		{"case-variant method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read","params":` + aliceDoc + `}`, false, 400, ""},
		{"a lone Method", `{"jsonrpc":"2.0","id":1,"Method":"resources/read","params":` + aliceDoc + `}`, false, 400, ""},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"params":{"name":"x"}}`, false, 400, ""},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`, false, 400, ""},
		{"escaped duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"resources/read"}`, false, 400, ""},
		{"a prompt completion with a case-variant ref", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"Ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}}`, false, 200, ""},
		{"a completion whose ref type is a resource in another case", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"Type":"ref/prompt","type":"ref/resource"}}}`, false, 400, ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\xff\"}", false, 400, ""},
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":"resources/read"`, false, 400, ""},
		// Batches (2025-03-26).
		{"a batch of forwarded methods is forwarded whole", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, true, 200, ""},
		{"a batch of owned methods is ours", `[{"jsonrpc":"2.0","id":1,"method":"resources/read","params":` + aliceDoc + `},{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}]`, false, 200, ""},
		{"a batch mixing owned and forwarded methods is split", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/read","params":` + aliceDoc + `}]`, false, 200,
			`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`},
		{"an ambiguous element beside a forwarded one is the endpoint's", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping","method":"resources/read","params":` + aliceDoc + `}]`, false, 200,
			`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`},
		{"a case-variant element beside a forwarded one is the endpoint's", `[ {"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","id":2,"Method":"resources/read","params":` + aliceDoc + `}]`, false, 200,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		// The legacy handler's session methods stay its own, whatever the
		// endpoint's method table holds.
		{"ping is forwarded", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, 200, ""},
		{"an initialize notification is forwarded", `{"jsonrpc":"2.0","method":"initialize"}`, true, 200, ""},
		{"notifications/cancelled is forwarded", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, true, 200, ""},
		{"a resource notification is ours", `{"jsonrpc":"2.0","method":"resources/read","params":` + aliceDoc + `}`, false, 202, ""},
		{"a resource completion notification is ours", `{"jsonrpc":"2.0","method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x"}}}`, false, 202, ""},
		{"a batch with a resource notification beside a forwarded one is split", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"resources/read","params":` + aliceDoc + `}]`, false, 200,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{"a modern resource read is ours", modernRead(), false, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy := &permissiveLegacy{}
			h, err := intercept.New(f.EP, legacy, intercept.Options{ForwardAnonymous: true})
			require.NoError(t, err)
			legacy.reset() // New's probe
			r := request(tc.body, map[string]string{"Authorization": "Bearer " + bob})
			if strings.Contains(tc.body, "2026-07-28") {
				r.Header.Set("MCP-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", "resources/read")
				r.Header.Set("Mcp-Name", "docs://documents/alice-0001")
			}
			w := serve(h, r)
			methods, bodies := legacy.seen()
			switch {
			case tc.forward:
				require.Len(t, bodies, 1)
				assert.Equal(t, tc.body, bodies[0], "forwarded byte for byte")
			case tc.split != "":
				require.Len(t, bodies, 1)
				assert.Equal(t, tc.split, bodies[0], "legacy gets its elements alone, each as received")
			default:
				assert.Empty(t, bodies, "must not reach the legacy handler (it read %v)", methods)
			}
			for _, m := range methods {
				assert.False(t, strings.HasPrefix(m, "resources/"), "the legacy handler was asked for %s", m)
			}
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			assert.NotContains(t, w.Body.String(), "Contents of Document alice", "bob never reads alice's document")
		})
	}
}

func modernRead() string {
	body, _ := mcptest.Modern(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"})
	return body
}

// The origin guard and the body limits are the endpoint's, and apply to
// every request, forwarded ones and other HTTP methods included: what
// they refuse reaches nobody.
func TestGuardAndLimitsOnEveryRequest(t *testing.T) {
	guard, err := origin.New([]string{"https://app.example.com"})
	require.NoError(t, err)
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) {
		o.Origins, o.Limits = guard, jsonrpc.Limits{MaxBytes: 512}
	}})
	legacy := &permissiveLegacy{}
	h, err := intercept.New(f.EP, legacy, intercept.Options{ForwardAnonymous: true})
	require.NoError(t, err)
	legacy.reset() // New's probe
	toolCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`

	cases := []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"a foreign origin, forwarded method", func() *http.Request {
			return request(toolCall, map[string]string{"Origin": "https://evil.example"})
		}, http.StatusForbidden},
		{"a foreign origin, GET", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, mcptest.Resource, nil)
			r.Header.Set("Origin", "https://evil.example")
			return r
		}, http.StatusForbidden},
		{"a foreign origin's preflight", func() *http.Request {
			r := httptest.NewRequest(http.MethodOptions, mcptest.Resource, nil)
			r.Header.Set("Origin", "https://evil.example")
			r.Header.Set("Access-Control-Request-Method", "POST")
			return r
		}, http.StatusForbidden},
		{"DNS rebinding: a loopback connection naming another host", func() *http.Request {
			r := request(toolCall, nil)
			r.Host = "attacker.example"
			return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
		}, http.StatusForbidden},
		{"a body over the endpoint's limit", func() *http.Request {
			return request(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+strings.Repeat("x", 600)+`"}}`, nil)
		}, http.StatusRequestEntityTooLarge},
		{"a body that is not application/json", func() *http.Request {
			return request(toolCall, map[string]string{"Content-Type": "text/plain"})
		}, http.StatusUnsupportedMediaType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, tc.req())
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			_, bodies := legacy.seen()
			assert.Empty(t, bodies, "reached the legacy handler")
		})
	}

	// The allowed origin's preflight is answered, and its requests get
	// CORS headers, forwarded or not.
	r := httptest.NewRequest(http.MethodOptions, mcptest.Resource, nil)
	r.Header.Set("Origin", "https://app.example.com")
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := serve(h, r)
	assert.Equal(t, http.StatusNoContent, w.Code)
	assert.Equal(t, "https://app.example.com", w.Header().Get("Access-Control-Allow-Origin"))
	w = serve(h, request(toolCall, map[string]string{"Origin": "https://app.example.com"}))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "https://app.example.com", w.Header().Get("Access-Control-Allow-Origin"))
	_, bodies := legacy.seen()
	assert.Equal(t, []string{toolCall}, bodies)
}

func TestNewRefuses(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	_, err := intercept.New(nil, &permissiveLegacy{}, intercept.Options{})
	assert.Error(t, err)
	_, err = intercept.New(f.EP, nil, intercept.Options{})
	assert.Error(t, err)
}

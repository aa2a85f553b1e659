package intercept_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// The benchmarks against a real go-sdk server are in examples/interop.
// Here the legacy handler is a stand-in that decodes the body with
// encoding/json and answers, as a small MCP server does.

// jsonLegacy decodes each request and answers a tool result, or the tool
// list.
var jsonLegacy = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	w.Header().Set("Content-Type", "application/json")
	if msg.Method == "tools/list" {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"echo: hi"}]}}`)
})

// BenchmarkInterceptInterleaved alternates each path through Intercept
// with its baseline in one loop and reports both and their ratio:
//
//	forward     a legacy tools/call: Intercept → legacy, against legacy alone
//	owned       resources/read: Intercept → endpoint, against the endpoint alone
//	tools/list  the merged first page, against legacy's and the endpoint's lists served one after the other
//	session     a legacy tools/call naming the caller's session (the binding checked), against legacy alone
func BenchmarkInterceptInterleaved(b *testing.B) {
	f := mcptest.New(b, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }}, bridge{})
	stateful := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "bench-session") // initialize
		}
		jsonLegacy.ServeHTTP(w, r)
	})
	h, err := intercept.New(f.EP, stateful, intercept.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	init := serve(h, withPrincipal(b, request(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil), alice))
	if init.Header().Get("Mcp-Session-Id") != "bench-session" {
		b.Fatal("no session", init.Code)
	}
	both := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r2 := r.Clone(r.Context())
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		jsonLegacy.ServeHTTP(httptest.NewRecorder(), r)
		r2.Body = io.NopCloser(strings.NewReader(string(body)))
		f.EP.ServeHTTP(w, r2)
	})
	cases := []struct {
		name     string
		body     string
		baseline http.Handler
		session  map[string]string
	}{
		{"forward", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, jsonLegacy, nil},
		{"owned", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text"}}`, f.EP, nil},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, both, nil},
		{"session", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, jsonLegacy,
			map[string]string{"Mcp-Session-Id": "bench-session"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var base, kit time.Duration
			for b.Loop() {
				t0 := time.Now()
				w := serve(tc.baseline, withPrincipal(b, request(tc.body, tc.session), alice))
				t1 := time.Now()
				w2 := serve(h, withPrincipal(b, request(tc.body, tc.session), alice))
				kit += time.Since(t1)
				base += t1.Sub(t0)
				if w.Code != http.StatusOK || w2.Code != http.StatusOK {
					b.Fatal(w.Code, w2.Code, w2.Body.String())
				}
			}
			benchpair.Report(b, "op", "baseline", base, "intercept", kit)
		})
	}
}

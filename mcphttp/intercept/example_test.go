package intercept_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/principal"
)

// A legacy MCP server (here a stand-in for go-sdk's
// mcp.NewStreamableHTTPHandler) keeps its tools; the endpoint in front of
// it serves the resources, and announces them in legacy's initialize
// answer.
func Example() {
	inv, err := inventory.New([]inventory.Resource{{
		URI: "docs://about", Name: "about", MIMEType: "text/plain", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "About the documents."),
	}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{})
	if err != nil {
		panic(err)
	}
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), `"initialize"`) {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"legacy echo"}]}}`)
	})
	h, err := intercept.New(ep, legacy, intercept.Options{})
	if err != nil {
		panic(err)
	}
	post := func(body string) string {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.String()
	}
	fmt.Println(post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	fmt.Println(post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`))
	fmt.Println(post(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"docs://about"}}`))
	// A body that a lenient decoder would read as resources/read reaches nobody.
	fmt.Println(post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","method":"resources/read","params":{"uri":"docs://about"}}`))
	// Output:
	// {"id":1,"jsonrpc":"2.0","result":{"capabilities":{"resources":{"subscribe":false,"listChanged":false},"tools":{}},"protocolVersion":"2025-06-18","serverInfo":{"name":"legacy","version":"1"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"legacy echo"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"docs://about","mimeType":"text/plain","text":"About the documents."}]}}
	// {"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request"}}
}

// A service with its own authentication (no Authenticator on the
// endpoint) puts its middleware in front of the intercept handler — not
// of the legacy one — so that the handler knows the caller: it binds the
// legacy session to them, and the legacy tool finds them in
// principal.FromContext.
func ExampleNew_serviceAuth() {
	inv, err := inventory.New(nil, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}) // no Authenticator: the service's middleware decides
	if err != nil {
		panic(err)
	}
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), `"initialize"`) {
			w.Header().Set("Mcp-Session-Id", "s1")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`)
			return
		}
		caller, _ := principal.FromContext(r.Context())
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"called by `+caller.Subject+`"}]}}`)
	})
	h, err := intercept.New(ep, legacy, intercept.Options{})
	if err != nil {
		panic(err)
	}
	// The service's own authentication: here, a user name in a header.
	serviceAuth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user := r.Header.Get("X-User"); user != "" {
				ctx, err := principal.NewContext(r.Context(), principal.Principal{Subject: user, ClientID: "web"})
				if err != nil {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				r = r.WithContext(ctx)
			}
			next.ServeHTTP(w, r)
		})
	}
	mcp := serviceAuth(h)
	post := func(user, session, body string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-User", user)
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		w := httptest.NewRecorder()
		mcp.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	post("alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`
	fmt.Println(post("alice", "s1", call))
	fmt.Println(post("bob", "s1", call)) // alice's session: not bob's
	// Output:
	// 200 {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"called by alice"}]}}
	// 404 {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}
}

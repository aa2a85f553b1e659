package mcphttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// An endpoint for a public static resource, asked for it with a legacy
// request. Protected resources need an Options.Authenticator.
func Example() {
	inv, err := inventory.New([]inventory.Resource{{
		URI: "notes://welcome", Name: "welcome", MIMEType: "text/plain", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "Hello!"),
	}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "notes", Version: "1.0.0"}})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", ep)

	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://welcome"}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	out, _ := io.ReadAll(w.Body)
	fmt.Println(w.Code, w.Header().Get("Cache-Control"))
	fmt.Println(string(out))
	// Output:
	// 200 private, max-age=0
	// {"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"notes://welcome","mimeType":"text/plain","text":"Hello!"}]}}
}

// NewServer returns an http.Server with the recommended timeouts.
func ExampleNewServer() {
	srv := mcphttp.NewServer("127.0.0.1:8080", http.NotFoundHandler())
	fmt.Println(srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	// Output: 5s 30s 1m0s 2m0s 32768
}

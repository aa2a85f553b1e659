package origin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// One guard for a whole service: a browser page of the allowed origin may
// call it, another site's page may not, and a request without an Origin
// (a native MCP client, curl) passes.
func ExampleGuard_Handler() {
	g, err := origin.New([]string{"https://app.example.com"})
	if err != nil {
		panic(err)
	}
	api := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	for _, from := range []string{"https://app.example.com", "https://evil.example", ""} {
		r := httptest.NewRequest(http.MethodPost, "https://api.example.com/mcp", nil)
		if from != "" {
			r.Header.Set("Origin", from)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		fmt.Printf("%q: %d, CORS %q\n", from, w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	}
	// Output:
	// "https://app.example.com": 200, CORS "https://app.example.com"
	// "https://evil.example": 403, CORS ""
	// "": 200, CORS ""
}

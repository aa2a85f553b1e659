package routers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/examples/mount/routers"
)

// Every router serves the metadata document at the resource's well-known
// path and at the root one, and answers GET /mcp with the endpoint's 405.
func Example() {
	k, err := kit.New(context.Background(), kit.Config{
		Resource: "http://127.0.0.1:8081/mcp", // no issuer: a development one
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer k.Close()
	for _, h := range []http.Handler{routers.Chi(k), routers.Gorilla(k), routers.ServeMux(k)} {
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081"+path, nil))
			var md struct{ Resource string }
			_ = json.Unmarshal(w.Body.Bytes(), &md)
			fmt.Print(w.Code, " ", md.Resource, "; ")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/mcp", nil))
		fmt.Println(w.Code, w.Header().Get("Allow"))
	}
	// Output:
	// 200 http://127.0.0.1:8081/mcp; 200 http://127.0.0.1:8081/mcp; 405 POST
	// 200 http://127.0.0.1:8081/mcp; 200 http://127.0.0.1:8081/mcp; 405 POST
	// 200 http://127.0.0.1:8081/mcp; 200 http://127.0.0.1:8081/mcp; 405 POST
}

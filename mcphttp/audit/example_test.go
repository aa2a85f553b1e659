package audit_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
)

// opsInventory is a public static resource for the examples.
func opsInventory() *inventory.Inventory {
	inv, err := inventory.New([]inventory.Resource{{
		URI: "notes://welcome", Name: "welcome", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "Hello!"),
	}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	return inv
}

// postAs serves one resources/read as subject (a principal put in the
// context by the service's own middleware) and returns the status.
func postAs(h http.Handler, subject, uri string) *httptest.ResponseRecorder {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	ctx, err := principal.NewContext(r.Context(), principal.Principal{Subject: subject, ClientID: "notes-app"})
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return w
	}
	r = r.WithContext(ctx)
	h.ServeHTTP(w, r)
	return w
}

// An audit trail on its own logger: one record per call that touched the
// inventory, with who, what and the outcome. (The time and the duration
// are left out here to keep the output stable.)
func ExampleNew() {
	trail := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	ep, err := mcphttp.New(opsInventory(), mcphttp.Options{}, mcphttp.Observe(audit.New(audit.Options{Logger: trail})))
	if err != nil {
		panic(err)
	}
	postAs(ep, "alice", "notes://welcome")
	postAs(ep, "bob", "notes://missing")
	// Output:
	// level=INFO msg="mcp audit" method=resources/read template=welcome uri=notes://welcome outcome=ok status=200 subject=alice client=notes-app
	// level=INFO msg="mcp audit" method=resources/read uri=notes://missing outcome=not_found status=200 code=-32002 subject=bob client=notes-app
}

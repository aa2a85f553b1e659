package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
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

// An Observer of one's own: here it counts calls by outcome. Start may
// return a derived context; the inventory's callbacks run under it.
func ExampleObserver() {
	counts := map[string]int{}
	obs := observerFunc(func(_ context.Context, c mcphttp.Call) { counts[c.Method+" "+c.Outcome.String()]++ })
	ep, err := mcphttp.New(opsInventory(), mcphttp.Options{}, mcphttp.Observe(obs))
	if err != nil {
		panic(err)
	}
	postAs(ep, "alice", "notes://welcome")
	postAs(ep, "alice", "notes://welcome")
	postAs(ep, "alice", "notes://nothing")
	fmt.Println(counts)
	// Output: map[resources/read not_found:1 resources/read ok:2]
}

// observerFunc is an Observer that acts at End only.
type observerFunc func(context.Context, mcphttp.Call)

func (f observerFunc) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (f observerFunc) End(ctx context.Context, c mcphttp.Call)                   { f(ctx, c) }

// A part's method of one's own answers with a typed result: the handler
// gets the call's *Request (its own, which it may keep) and returns
// JSONResult of a Go value; the endpoint adds the era's members and the
// JSON-RPC envelope, and refuses a result over the byte limit.
func ExampleJSONResult() {
	whoami := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Handle("example/whoami", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			who := "anonymous"
			if req.Principal != nil {
				who = req.Principal.Subject
			}
			req.NoteTarget("whoami") // for observers: a name of the part's own
			return mcphttp.JSONResult(req, struct {
				Subject string `json:"subject"`
			}{who}, mcphttp.CachePrivate)
		}, mcphttp.MethodOptions{})
		return nil
	})
	ep, err := mcphttp.New(opsInventory(), mcphttp.Options{}, whoami)
	if err != nil {
		panic(err)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"example/whoami"}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	ctx, _ := principal.NewContext(r.Context(), principal.Principal{Subject: "alice", ClientID: "notes-app"})
	w := httptest.NewRecorder()
	ep.ServeHTTP(w, r.WithContext(ctx))
	fmt.Println(w.Body.String())
	// Output: {"jsonrpc":"2.0","id":7,"result":{"subject":"alice"}}
}

package tools_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// notesInventory is alice's notes: a template with a Search callback.
func notesInventory() *inventory.Inventory {
	notes := map[string]string{"n1": "Groceries: lentils, cumin", "n2": "Call the plumber"}
	tmpl := inventory.Template{
		Name: "notes", URITemplate: "notes://{id}", RequiredScopes: []string{"notes:read"},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			text, ok := notes[req.Params["id"]]
			if !ok || req.Principal.Subject != "alice" {
				return nil, inventory.ErrNotFound // alice's notes only
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: text}}, nil
		},
		Search: func(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
			var hits []inventory.SearchHit
			for _, id := range []string{"n1", "n2"} {
				if req.Principal.Subject == "alice" && strings.Contains(strings.ToLower(notes[id]), strings.ToLower(req.Query)) {
					hits = append(hits, inventory.SearchHit{URI: "notes://" + id, Name: notes[id]})
				}
			}
			return hits, nil
		},
	}
	inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
	if err != nil {
		panic(err)
	}
	return inv
}

// caller returns a function that posts a JSON-RPC body to h as alice, as
// authentication middleware would have found her, and prints the answer.
func caller(h http.Handler) func(body string) {
	alice := principal.Principal{Subject: "alice", Scopes: []string{"notes:read"}}
	return func(body string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		ctx, err := principal.NewContext(r.Context(), alice)
		if err != nil {
			panic(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(ctx))
		fmt.Println(w.Body.String())
	}
}

// The built-in tools over a searchable template: alice searches her notes
// with the search tool (the ChatGPT connector contract: one text item
// holding JSON), then reads one with the typed tool of the template.
func ExampleBuiltin() {
	inv := notesInventory()
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{
		Templates: map[string]tools.TemplateTool{"notes": {Name: "read_note"}},
	})
	if err != nil {
		panic(err)
	}
	part, err := tools.New(builtin...)
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}, part) // callers from the service's own middleware
	if err != nil {
		panic(err)
	}
	call := caller(ep)
	call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"lentils"}}}`)
	call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"n2"}}}`)
	call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"ID":"n2"}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"results\":[{\"id\":\"notes://n1\",\"title\":\"Groceries: lentils, cumin\",\"url\":\"notes://n1\"}]}"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Call the plumber"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Invalid arguments: unknown argument \"ID\" (this tool takes \"id\")"}],"isError":true}}
}

// A tool of one's own next to the built-in ones: one value, scoped like
// the notes, listed with them, its argument checked before it runs.
func ExampleNew() {
	inv := notesInventory()
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
	if err != nil {
		panic(err)
	}
	countWords := tools.Tool{
		Name:           "count_words",
		Title:          "Count words",
		Description:    "Counts the words of a text.",
		Args:           []tools.Arg{{Name: "text", Required: true, MaxLen: 10000, Description: "The text."}},
		ReadOnly:       true,
		RequiredScopes: []string{"notes:read"},
		Class:          mcphttp.ClassSearch, // rate-limited with the searches
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			return tools.TextResult(strconv.Itoa(len(strings.Fields(req.Args["text"])))), nil
		},
	}
	part, err := tools.New(append(builtin, countWords)...)
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}, part)
	if err != nil {
		panic(err)
	}
	fmt.Println(part.Names())
	call := caller(ep)
	call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_words","arguments":{"text":"lentils and cumin"}}}`)
	call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_words","arguments":{}}}`)
	// Output:
	// [list_resources read_resource search fetch count_words]
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Invalid arguments: missing argument \"text\""}],"isError":true}}
}

package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// The tools bridge over a searchable template: alice searches her notes
// with the search tool (the ChatGPT connector contract: one text item
// holding JSON), then reads one with the typed tool of the template.
func ExampleToolOptions() {
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
	auth, err := authn.NewAuthenticator(nil, authn.Options{Resource: "https://notes.example.com/mcp"})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth, Tools: &mcphttp.ToolOptions{
		Templates: map[string]mcphttp.TemplateTool{"notes": {Name: "read_note"}},
	}})
	if err != nil {
		panic(err)
	}
	alice := principal.Principal{Subject: "alice", Scopes: []string{"notes:read"}}
	call := func(body string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		ctx, err := principal.NewContext(r.Context(), alice) // as authentication middleware would
		if err != nil {
			panic(err)
		}
		ep.ServeHTTP(w, r.WithContext(ctx))
		fmt.Println(w.Body.String())
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"lentils"}}}`)
	call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"n2"}}}`)
	call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"ID":"n2"}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"results\":[{\"id\":\"notes://n1\",\"title\":\"Groceries: lentils, cumin\",\"url\":\"notes://n1\"}]}"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Call the plumber"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Invalid arguments: unknown argument \"ID\" (this tool takes \"id\")"}],"isError":true}}
}

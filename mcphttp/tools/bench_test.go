package tools_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// benchWriter is a ResponseWriter that keeps the last body.
type benchWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *benchWriter) Header() http.Header  { return w.h }
func (w *benchWriter) WriteHeader(code int) { w.status = code }
func (w *benchWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.body = append(w.body[:0], b...)
	return len(b), nil
}

// benchDocs is alice's 500 documents, read by id.
type benchDocs struct{ text map[string]string }

func (d *benchDocs) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	if req.Principal == nil || req.Principal.Subject != "alice" {
		return nil, inventory.ErrNotFound
	}
	t, ok := d.text[req.Params["id"]]
	if !ok {
		return nil, inventory.ErrNotFound
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: t}}, nil
}

// BenchmarkToolsCall serves tools/call in process — read_resource and the
// typed tool of the template, of one 1 KiB document — with the caller in
// the request context, beside resources/read of the same document and
// tools/list. The allocations reported are the server's alone. The same
// benchmark runs against the tools bridge before the reshape (main at
// baf32d2), alternating, for the before/after comparison.
func BenchmarkToolsCall(b *testing.B) {
	docs := &benchDocs{text: map[string]string{}}
	for i := range 500 {
		docs.text[fmt.Sprintf("alice-%04d", i)] = fmt.Sprintf("Document %d. ", i) + string(bytes.Repeat([]byte("lorem ipsum "), 85))
	}
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		RequiredScopes: []string{"docs:read"}, Read: docs.read,
	}}, inventory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	auth, err := authn.NewAuthenticator(nil, authn.Options{Resource: "https://mcp.example.com/mcp"})
	if err != nil {
		b.Fatal(err)
	}
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {Name: "read_document"}}})
	if err != nil {
		b.Fatal(err)
	}
	own := tools.Tool{ // a tool of one's own: the caller's name and an argument echoed
		Name: "greet", Args: []tools.Arg{{Name: "name", Required: true}}, RequiredScopes: []string{"docs:read"},
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			return tools.TextResult("hello " + req.Args["name"] + " from " + req.Principal.Subject), nil
		},
	}
	part, err := tools.New(append(builtin, own)...)
	if err != nil {
		b.Fatal(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, part)
	if err != nil {
		b.Fatal(err)
	}
	ctx, err := principal.NewContext(context.Background(), principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, body string }{
		{"resources-read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs://documents/alice-0007"}}`},
		{"tools-read_resource", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"docs://documents/alice-0007"}}}`},
		{"tools-read_document", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_document","arguments":{"id":"alice-0007"}}}`},
		{"tools-own", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bob"}}}`},
		{"tools-list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil).WithContext(ctx)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
			var w benchWriter
			b.ReportAllocs()
			for b.Loop() {
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
				w.h, w.status = make(http.Header, 4), 0
				ep.ServeHTTP(&w, r)
				if w.status != 200 || bytes.Contains(w.body, []byte(`"isError"`)) || bytes.Contains(w.body, []byte(`"error"`)) {
					b.Fatalf("status %d: %s", w.status, w.body)
				}
			}
		})
	}
}

package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// A protected documents template whose List shows each caller their own
// documents, served from an in-memory keyset source, listed for alice two
// entries a page.
func Example() {
	store := inventorytest.NewMemorySource()
	for i, title := range []string{"Plan", "Budget", "Minutes"} {
		id := fmt.Sprintf("d%d", i+1)
		store.Insert("alice", inventory.Entry{Key: "2026-01-0" + fmt.Sprint(i+1) + "/" + id, URI: "docs://documents/" + id, Name: title})
	}
	store.Insert("bob", inventory.Entry{Key: "2026-01-01/d9", URI: "docs://documents/d9", Name: "Bob's secret"})

	documents := inventory.Template{
		Name:           "documents",
		URITemplate:    "docs://documents/{id}",
		MIMEType:       "text/plain",
		RequiredScopes: []string{"documents:read"}, // Access: Protected is the zero value
		List:           store.List,
		Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, inventory.ErrNotFound // a real handler checks ownership, then reads
		},
	}
	inv, err := inventory.New(nil, []inventory.Template{documents}, inventory.Options{PageSize: 2})
	if err != nil {
		panic(err)
	}

	alice := &principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"documents:read"}}
	cursor := ""
	for n := 1; ; n++ {
		// The transport encodes each item as it comes, and says whether
		// it still fits its byte budget; here, every item fits.
		next, err := inv.List(context.Background(), alice, cursor, func(r *inventory.Item) bool {
			fmt.Printf("page %d: %s %q %s\n", n, r.URI, r.Name, r.MIMEType)
			return true
		})
		if err != nil {
			panic(err)
		}
		if next == "" {
			fmt.Println("no next cursor: the end")
			break
		}
		cursor = next
	}
	// Output:
	// page 1: docs://documents/d1 "Plan" text/plain
	// page 1: docs://documents/d2 "Budget" text/plain
	// page 2: docs://documents/d3 "Minutes" text/plain
	// no next cursor: the end
}

// Errors tell the transport what to answer.
func ExampleInventory_List_errors() {
	documents := inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"documents:read"},
		List: inventorytest.NewMemorySource().List, Read: inventory.TextReader("text/plain", ""),
	}
	inv, _ := inventory.New(nil, []inventory.Template{documents}, inventory.Options{})
	ctx := context.Background()

	_, err := inv.List(ctx, nil, "", nil)
	fmt.Println(errors.Is(err, principal.ErrUnauthenticated)) // 401

	_, err = inv.List(ctx, &principal.Principal{Subject: "alice"}, "", nil)
	var se *principal.ScopeError
	fmt.Println(errors.As(err, &se), se.Required) // 403 insufficient_scope

	_, err = inv.List(ctx, &principal.Principal{Subject: "alice", Scopes: []string{"documents:read"}}, "forged", nil)
	var ce *inventory.CursorError
	fmt.Println(errors.As(err, &ce), ce.Reason) // -32602, data.reason
	// Output:
	// true
	// true [documents:read]
	// true invalid
}

func ExampleInventory_Read() {
	files := inventory.Template{
		Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public,
		Validate: map[string]func(string) error{"path": func(p string) error {
			if strings.Contains(p, "..") {
				return errors.New("no parent directories")
			}
			return nil
		}},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "contents of " + req.Params["path"]}}, nil
		},
	}
	inv, _ := inventory.New(nil, []inventory.Template{files}, inventory.Options{})
	cs, _ := inv.Read(context.Background(), nil, "file:///notes/to%20do.txt")
	fmt.Println(cs[0].Text)
	_, err := inv.Read(context.Background(), nil, "file:///../etc/passwd")
	var pe *inventory.ParamsError
	fmt.Println(errors.As(err, &pe), pe.Problems)
	_, err = inv.Read(context.Background(), nil, "http://elsewhere/")
	fmt.Println(errors.Is(err, inventory.ErrNotFound))
	// Output:
	// contents of notes/to do.txt
	// true [invalid value for variable "path"]
	// true
}

func ExampleInventory_Templates() {
	inv, _ := inventory.New(nil, []inventory.Template{
		{Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"documents:read"}, Read: inventory.TextReader("text/plain", "")},
		{Name: "files", Title: "Files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: inventory.TextReader("text/plain", "")},
		{Name: "debug", URITemplate: "debug://{id}", Access: inventory.Public, Hidden: true, Read: inventory.TextReader("text/plain", "")},
	}, inventory.Options{Discovery: inventory.DiscoveryProtected})
	_, _ = inv.Templates(context.Background(), nil, "", func(t *inventory.TemplateItem) bool {
		fmt.Printf("%s %s %q\n", t.Name, t.URITemplate, t.Title)
		return true
	})
	// Output:
	// files file:///{+path} "Files"
}

func ExampleInventory_Complete() {
	repos := inventory.Template{
		Name: "repos", URITemplate: "repo://{owner}/{name}", Access: inventory.Public, Read: inventory.TextReader("text/plain", ""),
		Complete: map[string]inventory.CompleteFunc{"name": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			var out []string
			for _, n := range []string{"mcpkit", "mcp-go", "jwx"} {
				if strings.HasPrefix(n, req.Value) {
					out = append(out, req.Context["owner"]+"/"+n)
				}
			}
			return inventory.Completion{Values: out}, nil
		}},
	}
	inv, _ := inventory.New(nil, []inventory.Template{repos}, inventory.Options{})
	c, _ := inv.Complete(context.Background(), nil, "repo://{owner}/{name}", "name", "mcp", map[string]string{"owner": "me"})
	fmt.Println(inv.Completes(), c.Values, c.Total, c.HasMore)
	// Output:
	// true [me/mcpkit me/mcp-go] 2 false
}

func ExampleExpand() {
	uri, _ := inventory.Expand("docs://documents/{id}", map[string]string{"id": "Q3 report/final"})
	fmt.Println(uri)
	uri, _ = inventory.Expand("file:///{+path}", map[string]string{"path": "Q3 report/final"})
	fmt.Println(uri)
	// Output:
	// docs://documents/Q3%20report%2Ffinal
	// file:///Q3%20report/final
}

func ExampleValidatePage() {
	tmpl := &inventory.Template{Name: "documents", URITemplate: "docs://documents/{id}"}
	err := inventory.ValidatePage(tmpl, inventory.ListRequest{After: "k5", Limit: 10}, inventory.Page{Entries: []inventory.Entry{
		{Key: "k6", URI: "docs://documents/6", Name: "Six"},
		{Key: "k7", URI: "docs://notes/7", Name: "Seven"},
	}})
	var ce *inventory.ContractError
	if errors.As(err, &ce) {
		fmt.Println(ce.Source, ce.Rule, ce.Entry)
	}
	// Output:
	// documents uri-template-mismatch 1
}

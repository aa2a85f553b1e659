package inventory_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
)

// A template with a Search callback: ownership in the query, as in List.
// What a search returns is checked like a list page and grants nothing.
func ExampleInventory_Search() {
	owned := map[string][]inventory.SearchHit{
		"alice": {{URI: "docs://documents/d1", Name: "Quarterly report"}},
		"bob":   {{URI: "docs://documents/d9", Name: "Bob's quarterly numbers"}},
	}
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"},
		Read: inventory.TextReader("text/plain", "…"),
		Search: func(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
			hits := owned[req.Principal.Subject] // WHERE owner = $1 AND … in a real store
			return hits[:min(len(hits), req.Limit)], nil
		},
	}}, inventory.Options{})
	if err != nil {
		panic(err)
	}
	alice := &principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}}
	hits, err := inv.Search(context.Background(), alice, "quarterly", 10)
	fmt.Println(hits, err)
	_, err = inv.Search(context.Background(), nil, "quarterly", 10)
	fmt.Println(err)
	// Output:
	// [{docs://documents/d1 Quarterly report}] <nil>
	// principal: no authenticated caller
}

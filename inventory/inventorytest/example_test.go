package inventorytest_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Check finds the classic keyset bug: the extra row read to learn whether
// more exist is returned with the page. In a test, call CheckList instead.
func ExampleCheck() {
	store := inventorytest.NewMemorySource()
	for i := 1; i <= 10; i++ {
		store.Insert("alice", inventory.Entry{Key: fmt.Sprintf("k%02d", i), URI: fmt.Sprintf("docs://documents/%d", i), Name: "Doc"})
	}
	buggy := func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		req.Limit++ // LIMIT $3 + 1 ... and all rows returned
		return store.List(ctx, req)
	}
	documents := inventory.Template{Name: "documents", URITemplate: "docs://documents/{id}", List: buggy,
		Read: inventory.TextReader("text/plain", "")}

	vs, err := inventorytest.Check(context.Background(), documents, principal.Principal{Subject: "alice"}, inventorytest.Options{PageSizes: []int{7}})
	if err != nil {
		panic(err)
	}
	for _, v := range vs {
		fmt.Println(v.PageSize, v.Page, v.Rule)
	}

	documents.List = store.List
	vs, _ = inventorytest.Check(context.Background(), documents, principal.Principal{Subject: "alice"}, inventorytest.Options{})
	fmt.Println(len(vs), "violations")
	// Output:
	// 7 0 too-many-entries
	// 0 violations
}

func ExampleMemorySource() {
	store := inventorytest.NewMemorySource()
	store.Insert("alice", inventory.Entry{Key: "b", URI: "docs://documents/2", Name: "Two"})
	store.Insert("alice", inventory.Entry{Key: "a", URI: "docs://documents/1", Name: "One"})
	store.Insert("bob", inventory.Entry{Key: "a", URI: "docs://documents/9", Name: "Bob's"})
	p, _ := store.List(context.Background(), inventory.ListRequest{Limit: 1, Principal: &principal.Principal{Subject: "alice"}})
	fmt.Println(p.Entries[0].Name, p.HasMore)
	p, _ = store.List(context.Background(), inventory.ListRequest{After: "a", Limit: 1, Principal: &principal.Principal{Subject: "alice"}})
	fmt.Println(p.Entries[0].Name, p.HasMore)
	// Output:
	// One true
	// Two false
}

// CheckGrants holds a grants.Store to the contract; grants.Memory keeps it.
func ExampleCheckGrants() {
	problems, err := inventorytest.CheckGrants(context.Background(), grants.NewMemory())
	fmt.Println(len(problems), "problems", err)
	// Output:
	// 0 problems <nil>
}

package inventory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
)

// templateNames returns the names in a resources/templates/list result.
func templateNames(inv *inventory.Inventory, p *principal.Principal) []string {
	names := []string{}
	if _, err := inv.Templates(context.Background(), p, "", func(t *inventory.TemplateItem) bool {
		names = append(names, t.Name)
		return true
	}); err != nil {
		panic(err)
	}
	return names
}

// resourceURIs returns the URIs of the first resources/list page.
func resourceURIs(inv *inventory.Inventory, p *principal.Principal) []string {
	uris := []string{}
	if _, err := inv.List(context.Background(), p, "", func(r *inventory.Item) bool {
		uris = append(uris, r.URI)
		return true
	}); err != nil {
		panic(err)
	}
	return uris
}

// An "onboarding" gate reveals a reports template once the user has
// finished a step, and one static resource is enabled for a single user.
// The Notifier hears about each change, for that subject only.
func Example_gates() {
	readReport := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "report " + req.Params["id"]}}, nil
	}
	inv, err := inventory.New(
		[]inventory.Resource{
			{URI: "docs://readme", Name: "README", Access: inventory.Public, Read: inventory.TextReader("text/plain", "hi")},
			{URI: "docs://changelog/beta", Name: "Beta changelog", Access: inventory.Public,
				Gates: []string{"beta"}, Read: inventory.TextReader("text/markdown", "# Beta")},
		},
		[]inventory.Template{{
			Name: "reports", URITemplate: "docs://reports/{id}", RequiredScopes: []string{"docs:read"},
			Gates: []string{"onboarding"}, Read: readReport,
		}},
		inventory.Options{
			Gates: []inventory.Gate{
				{Name: "onboarding"}, // no policy: only a grant opens it
				{Name: "beta", Policy: inventory.HasScopes("beta")},
			},
			// Grants: nil keeps them in memory (grants.NewMemory).
			Notifier: grants.NotifierFunc(func(_ context.Context, subject string) {
				fmt.Println("  list_changed for", subject)
			}),
		})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}}
	bob := &principal.Principal{Subject: "bob", Scopes: []string{"docs:read"}}
	show := func(who string, p *principal.Principal) {
		_, err := inv.Read(ctx, p, "docs://reports/q3")
		fmt.Printf("%s: templates %v, resources %v, read report: %v\n", who, templateNames(inv, p), resourceURIs(inv, p), err == nil)
	}

	show("alice", alice)
	fmt.Println("alice finishes onboarding:")
	if _, err := inv.Authorize(ctx, "alice", "onboarding"); err != nil {
		panic(err)
	}
	show("alice", alice)
	show("bob", bob)
	fmt.Println("support enables the beta changelog for bob:")
	if _, err := inv.Enable(ctx, "bob", "docs://changelog/beta"); err != nil {
		panic(err)
	}
	show("bob", bob)
	changed, _ := inv.Enable(ctx, "bob", "docs://changelog/beta")
	fmt.Println("enabled again, changed:", changed)
	// Output:
	// alice: templates [], resources [docs://readme], read report: false
	// alice finishes onboarding:
	//   list_changed for alice
	// alice: templates [reports], resources [docs://readme], read report: true
	// bob: templates [], resources [docs://readme], read report: false
	// support enables the beta changelog for bob:
	//   list_changed for bob
	// bob: templates [], resources [docs://readme docs://changelog/beta], read report: false
	// enabled again, changed: false
}

// Hidden looks like unknown: a read answers ErrNotFound (not 401 or 403),
// and CanRead, which the transport uses to filter subscriptions, agrees.
func ExampleInventory_CanRead() {
	inv, _ := inventory.New([]inventory.Resource{
		{URI: "docs://staff/handbook", Name: "Handbook", RequiredScopes: []string{"docs:read"},
			Gates: []string{"staff"}, Read: inventory.TextReader("text/plain", "…")},
	}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "staff", Policy: inventory.Subjects("carol")}}})
	ctx := context.Background()
	for _, p := range []*principal.Principal{
		nil,
		{Subject: "alice", Scopes: []string{"docs:read"}},
		{Subject: "carol"},
		{Subject: "carol", Scopes: []string{"docs:read"}},
	} {
		can, _ := inv.CanRead(ctx, p, "docs://staff/handbook")
		_, err := inv.Read(ctx, p, "docs://staff/handbook")
		var se *principal.ScopeError
		switch {
		case err == nil:
			fmt.Println(can, "read")
		case errors.Is(err, inventory.ErrNotFound):
			fmt.Println(can, "not found")
		case errors.As(err, &se):
			fmt.Println(can, "insufficient scope", se.Required)
		}
	}
	// Output:
	// false not found
	// false not found
	// false insufficient scope [docs:read]
	// true read
}

// Policies compose; a gate without a policy opens only by grants.
func ExampleAllOf() {
	policy := inventory.AllOf(
		inventory.Authenticated,
		inventory.AnyOf(inventory.HasScopes("admin"), inventory.Subjects("alice")),
		inventory.Not(inventory.Subjects("mallory")),
	)
	ctx := context.Background()
	for _, p := range []*principal.Principal{
		nil,
		{Subject: "alice"},
		{Subject: "bob"},
		{Subject: "bob", Scopes: []string{"admin"}},
		{Subject: "mallory", Scopes: []string{"admin"}},
	} {
		name := "anonymous"
		if p != nil {
			name = p.Subject
		}
		fmt.Println(name, policy(ctx, p))
	}
	// Output:
	// anonymous false
	// alice true
	// bob false
	// bob true
	// mallory false
}

package grants_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/inventory/grants"
)

// The in-memory store keeps each subject's grants: the gates they may pass
// whatever the gates' policies say. Apply reports whether anything
// changed, so a repeated grant notifies nobody.
func ExampleMemory() {
	ctx := context.Background()
	m := grants.NewMemory()
	changed, _ := m.Apply(ctx, "alice", grants.Change{Op: grants.OpAuthorize, Name: "beta"})
	again, _ := m.Apply(ctx, "alice", grants.Change{Op: grants.OpAuthorize, Name: "beta"})
	g, _ := m.Grants(ctx, "alice")
	fmt.Println(changed, again, g.Gates)
	_, _ = m.Apply(ctx, "alice", grants.Change{Op: grants.OpRevoke, Name: "beta"})
	g, _ = m.Grants(ctx, "alice")
	fmt.Println(g.Gates)
	// Output:
	// true false [beta]
	// []
}

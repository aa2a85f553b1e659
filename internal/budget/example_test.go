package budget_test

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/budget"
)

// A transport fills a page of items of 300 bytes under a 1 KiB page limit
// and the default 1 MiB result limit: the tighter applies, the reserve
// keeps room for the cursor, and the third item starts the next page.
func Example() {
	items, _ := budget.Items(0)           // the default item count
	limit, _ := budget.Bytes(1024, 1<<20) // the tighter byte limit
	reserve := budget.Reserve(120, 0)     // `]`, the longest next cursor, `}}`
	page := budget.NewPage(items, limit, reserve)
	body := len(`{"jsonrpc":"2.0","id":1,"result":{"resources":[`)
	for i := 1; ; i++ {
		if err := page.Add(body + 300); err != nil {
			fmt.Printf("item %d: %v\n", i, err)
			break
		}
		body += 300
	}
	fmt.Println(page.Items(), "items,", body, "bytes of", limit)
	// Output:
	// item 3: budget: page full
	// 2 items, 647 bytes of 1024
}

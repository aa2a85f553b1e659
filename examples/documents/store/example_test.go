package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// Walk alice's documents five at a time, the way the documents server's
// List callback does (it asks for limit+1 rows to learn whether there is
// more), then check that bob cannot read one of them.
func Example() {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite::memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := store.Seed(ctx, db); err != nil {
		log.Fatal(err)
	}

	const limit = 5
	after := ""
	var first store.Entry
	for page := 1; ; page++ {
		rows, err := db.List(ctx, "alice", after, limit+1)
		if err != nil {
			log.Fatal(err)
		}
		hasMore := len(rows) > limit
		rows = rows[:min(len(rows), limit)]
		fmt.Printf("page %d: %d documents, from %q to %q, more: %v\n",
			page, len(rows), rows[0].Title, rows[len(rows)-1].Title, hasMore)
		if page == 1 {
			first = rows[0]
		}
		if !hasMore {
			break
		}
		after = rows[len(rows)-1].OrderKey
	}

	doc, err := db.Read(ctx, "alice", first.ID)
	fmt.Println(doc.Title, err)
	_, err = db.Read(ctx, "bob", first.ID)
	fmt.Println(errors.Is(err, store.ErrNotFound))
	// Output:
	// page 1: 5 documents, from "Quarterly report Q1" to "Travel expenses", more: true
	// page 2: 5 documents, from "Team offsite plan" to "Garden layout", more: true
	// page 3: 2 documents, from "Tax checklist" to "Holiday ideas", more: false
	// Quarterly report Q1 <nil>
	// true
}

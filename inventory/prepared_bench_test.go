package inventory_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/inventory"
)

// The private page as examples/bench serves it: a List callback over
// 100,000 prepared entries of the caller that finds the page's start by
// binary search and slices the array, page size 50, a sealed cursor. The
// items are counted by the fit function, without an encoding: the
// inventory's own cost per page.

const preparedEntries = 100_000

func preparedInventory(b *testing.B) *inventory.Inventory {
	b.Helper()
	all := make([]inventory.Entry, preparedEntries)
	for i := range all {
		id := fmt.Sprintf("d%06d", i)
		all[i] = inventory.Entry{Key: fmt.Sprintf("k%08d", i), URI: "docs://documents/" + id, Name: "Quarterly report " + id}
	}
	list := func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
		i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
		end := min(i+req.Limit, len(all))
		return inventory.Page{Entries: all[i:end:end], HasMore: end < len(all)}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{PageSize: 50})
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

// cursorOfPage walks from the first page and returns the cursor of page n.
func cursorOfPage(b *testing.B, inv *inventory.Inventory, n int) string {
	b.Helper()
	cursor := ""
	for range n - 1 {
		next, err := inv.List(context.Background(), alice(), cursor, nil)
		if err != nil {
			b.Fatal(err)
		}
		if next == "" {
			b.Fatal("the listing ended early")
		}
		cursor = next
	}
	return cursor
}

// BenchmarkListPrepared: first, page 1; deep, page 1,000 of the 100,000
// entries (2,000 pages), its cursor replayed.
func BenchmarkListPrepared(b *testing.B) {
	inv := preparedInventory(b)
	for _, c := range []struct {
		name string
		page int
	}{{"first", 1}, {"deep", 1000}} {
		b.Run(c.name, func(b *testing.B) {
			cursor := cursorOfPage(b, inv, c.page)
			ctx, caller := context.Background(), alice()
			n := 0
			fit := func(*inventory.Item) bool { n++; return true }
			b.ReportAllocs()
			for b.Loop() {
				n = 0
				if _, err := inv.List(ctx, caller, cursor, fit); err != nil || n != 50 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListDeepVsFirst alternates page 1 and page 1,000 of the
// 100,000 prepared entries in one loop, so that load on a shared machine
// weighs on both alike, and reports each one's time and their ratio
// (deep/first; the target is ≤ 1.1: keyset pagination makes depth cost
// nothing but the cursor's opening).
func BenchmarkListDeepVsFirst(b *testing.B) {
	inv := preparedInventory(b)
	deep := cursorOfPage(b, inv, 1000)
	ctx, caller := context.Background(), alice()
	var firstTime, deepTime time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := inv.List(ctx, caller, "", nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := inv.List(ctx, caller, deep, nil); err != nil {
			b.Fatal(err)
		}
		firstTime += t1.Sub(t0)
		deepTime += time.Since(t1)
	}
	benchpair.Report(b, "page", "first", firstTime, "deep", deepTime)
}

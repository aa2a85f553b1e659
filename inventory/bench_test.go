package inventory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Benchmarks of a 50-entry resources/list page from an in-memory keyset
// source holding 1,000 or 1,000,000 records of the caller: the cost must
// not grow with the collection. The baseline encodes the same 50 entries
// with encoding/json and nothing else.

var benchSources sync.Map // records → *inventorytest.MemorySource

func benchKey(i int) string { return "k" + fmt.Sprintf("%08d", i) }

func benchSource(n int) *inventorytest.MemorySource {
	if s, ok := benchSources.Load(n); ok {
		return s.(*inventorytest.MemorySource)
	}
	src := inventorytest.NewMemorySource()
	for i := 0; i < n; i++ {
		id := strconv.Itoa(i)
		src.Insert("alice", inventory.Entry{Key: benchKey(i), URI: "docs://documents/d" + id, Name: "Quarterly report " + id})
		if i%1000 == 0 { // a few records of others in the same source
			src.Insert("bob", inventory.Entry{Key: benchKey(i), URI: "docs://documents/b" + id, Name: "Bob's " + id})
		}
	}
	benchSources.Store(n, src)
	return src
}

func benchInventory(b *testing.B, n int) (*inventory.Inventory, *principal.Principal) {
	b.Helper()
	// Both collections live in the heap before any timing, so that the
	// garbage collector's marking of a million in-memory records (an
	// artefact of the in-memory store, not of the list path) weighs on
	// every size alike.
	benchSource(1000)
	benchSource(1000000)
	src := benchSource(n)
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(src.List)},
		inventory.Options{PageSize: 50, Sealer: sealedcursor.MustNew(sealedcursor.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	return inv, alice()
}

var benchEnv = envelope{Head: []byte(`{"jsonrpc":"2.0","id":42,"result":`), Tail: []byte(`}`), Meta: []byte(`"ttlMs":0,"cacheScope":"private"`)}

func benchList(b *testing.B, n int, deep bool) {
	inv, caller := benchInventory(b, n)
	cursor := ""
	if deep {
		var err error
		// A cursor in the middle of the collection, sealed by inv's sealer.
		cursor, err = inv.SealListPositionForTest(caller, 0, 0, benchKey(n/2), time.Now())
		if err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	out, err := listWire(ctx, inv, caller, cursor, benchEnv)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := listWire(ctx, inv, caller, cursor, benchEnv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListFirstPage(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { benchList(b, n, false) })
	}
}

func BenchmarkListDeepPage(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { benchList(b, n, true) })
	}
}

// BenchmarkListItems is the first page of 1M records in Go values, each
// item counted by the fit function, as a transport sees them: the
// inventory's own cost, without encoding a response.
func BenchmarkListItems(b *testing.B) {
	inv, caller := benchInventory(b, 1000000)
	ctx := context.Background()
	n := 0
	fit := func(*inventory.Item) bool { n++; return true }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inv.List(ctx, caller, "", fit); err != nil {
			b.Fatal(err)
		}
	}
}

// jsonBaseline returns a function that encodes the first 50 entries of
// the 1,000-record collection, with a cursor-sized string, as one response
// with encoding/json: no query, no validation, no sealing.
func jsonBaseline(b *testing.B) func() []byte {
	src := benchSource(1000)
	page, err := src.List(context.Background(), inventory.ListRequest{Limit: 50, Principal: alice()})
	if err != nil || len(page.Entries) != 50 {
		b.Fatal(err)
	}
	type resource struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType,omitempty"`
	}
	type result struct {
		Resources  []resource `json:"resources"`
		NextCursor string     `json:"nextCursor,omitempty"`
		TTL        int        `json:"ttlMs"`
		CacheScope string     `json:"cacheScope"`
	}
	type response struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Result  result `json:"result"`
	}
	cursor := fmt.Sprintf("%0*d", sealedcursor.SealedLen(12), 0)
	return func() []byte {
		res := make([]resource, len(page.Entries))
		for i, e := range page.Entries {
			res[i] = resource{URI: e.URI, Name: e.Name, MIMEType: "text/plain"}
		}
		out, err := json.Marshal(response{JSONRPC: "2.0", ID: 42, Result: result{Resources: res, NextCursor: cursor, CacheScope: "private"}})
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
		return out
	}
}

// BenchmarkBaselineEncodeJSON is the baseline: encoding the same 50
// entries with encoding/json and nothing else.
func BenchmarkBaselineEncodeJSON(b *testing.B) {
	encode := jsonBaseline(b)
	b.ReportAllocs()
	for b.Loop() {
		encode()
	}
}

// BenchmarkListRequestDeadline is the first page of 1M records for a
// request whose own deadline is earlier than the callback timeout: the
// callback runs under the request's context, with no timer of its own.
func BenchmarkListRequestDeadline(b *testing.B) {
	_, caller := benchInventory(b, 1000000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	inv2, err := inventory.New(nil, []inventory.Template{docsTemplate(benchSource(1000000).List)},
		inventory.Options{PageSize: 50, CallbackTimeout: 2 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := listWire(ctx, inv2, caller, "", benchEnv); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListSizeRatio alternates pages of the 1,000- and the
// 1,000,000-record collections and the encoding/json baseline in one loop,
// so that load on a shared machine weighs on all alike, and reports each
// one's time per page and the ratios (1M/1k near 1 means the collection
// size does not matter). Allocations are those of the whole loop body.
func BenchmarkListSizeRatio(b *testing.B) {
	for _, deep := range []bool{false, true} {
		b.Run(map[bool]string{false: "first", true: "deep"}[deep], func(b *testing.B) {
			type side struct {
				inv    *inventory.Inventory
				cursor string
				total  time.Duration
			}
			var sides [2]side
			encode := jsonBaseline(b)
			var baseline time.Duration
			for i, n := range []int{1000, 1000000} {
				inv, caller := benchInventory(b, n)
				sides[i].inv = inv
				if deep {
					c, err := inv.SealListPositionForTest(caller, 0, 0, benchKey(n/2), time.Now())
					if err != nil {
						b.Fatal(err)
					}
					sides[i].cursor = c
				}
			}
			caller, ctx := alice(), context.Background()
			b.ReportAllocs()
			for b.Loop() {
				for i := range sides {
					s := &sides[i]
					start := time.Now()
					if _, err := listWire(ctx, s.inv, caller, s.cursor, benchEnv); err != nil {
						b.Fatal(err)
					}
					s.total += time.Since(start)
				}
				start := time.Now()
				encode()
				baseline += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(sides[0].total.Nanoseconds())/n, "ns/page-1k")
			b.ReportMetric(float64(sides[1].total.Nanoseconds())/n, "ns/page-1M")
			b.ReportMetric(float64(sides[1].total)/float64(sides[0].total), "ratio-1M/1k")
			b.ReportMetric(float64(baseline.Nanoseconds())/n, "ns/json-baseline")
			b.ReportMetric(float64(sides[1].total)/float64(baseline), "ratio-1M/json")
		})
	}
}

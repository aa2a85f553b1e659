package inventory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Benchmarks of the gated paths beside the ungated ones, over the same
// 1,000-record source: a 50-entry resources/list page, and a read. The
// gated inventory has the source behind a gate alice was authorized for
// in a MemoryGrants, a global gate passed by policy, and four static
// resources with gates (the page holds 50 items either way).

func benchGatedInventory(b *testing.B) *inventory.Inventory {
	b.Helper()
	src := benchSource(1000)
	docs := docsTemplate(src.List)
	docs.Gates = []string{"onboarding"}
	var statics []inventory.Resource
	for i := range 4 {
		statics = append(statics, inventory.Resource{
			URI: fmt.Sprintf("docs://static/%d", i), Name: "Static", Access: inventory.Public,
			Gates: []string{[]string{"beta", "onboarding"}[i%2]}, Read: inventory.TextReader("text/plain", "x"),
		})
	}
	inv, err := inventory.New(statics, []inventory.Template{docs}, inventory.Options{
		PageSize: 50, Sealer: sealedcursor.MustNew(sealedcursor.Options{}),
		Gates: []inventory.Gate{
			{Name: "onboarding"},
			{Name: "beta", Policy: inventory.Subjects("carol")},
			{Name: "signed-in", Policy: inventory.Authenticated},
		},
		GlobalGates: []string{"signed-in"},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := inv.Authorize(context.Background(), "alice", "onboarding"); err != nil {
		b.Fatal(err)
	}
	return inv
}

func benchUngatedInventory(b *testing.B) *inventory.Inventory {
	b.Helper()
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(benchSource(1000).List)},
		inventory.Options{PageSize: 50, Sealer: sealedcursor.MustNew(sealedcursor.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

// BenchmarkListGates: a first and a deep page, ungated and gated.
func BenchmarkListGates(b *testing.B) {
	for _, gated := range []bool{false, true} {
		for _, deep := range []bool{false, true} {
			name := fmt.Sprintf("gated=%v/deep=%v", gated, deep)
			b.Run(name, func(b *testing.B) {
				inv := benchUngatedInventory(b)
				if gated {
					inv = benchGatedInventory(b)
				}
				caller, ctx := alice(), context.Background()
				cursor := ""
				if deep {
					var err error
					if cursor, err = inv.SealListPositionForTest(caller, 0, 0, benchKey(500), time.Now()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := listWire(ctx, inv, caller, cursor, benchEnv); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReadGates: a read of a listed record, ungated and gated.
func BenchmarkReadGates(b *testing.B) {
	for _, gated := range []bool{false, true} {
		b.Run(fmt.Sprintf("gated=%v", gated), func(b *testing.B) {
			inv := benchUngatedInventory(b)
			if gated {
				inv = benchGatedInventory(b)
			}
			caller, ctx := alice(), context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inv.Read(ctx, caller, "docs://documents/d7"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGatesRatio alternates the ungated and the gated inventory in
// one loop (a first resources/list page, or a read of a record), so that
// load on a shared machine weighs on both alike, and reports the
// gated/ungated ratio. Allocations are those of both.
func BenchmarkGatesRatio(b *testing.B) {
	plain, gated := benchUngatedInventory(b), benchGatedInventory(b)
	caller, ctx := alice(), context.Background()
	for name, op := range map[string]func(*inventory.Inventory, *principal.Principal) error{
		"list": func(inv *inventory.Inventory, p *principal.Principal) error {
			_, err := listWire(ctx, inv, p, "", benchEnv)
			return err
		},
		"read": func(inv *inventory.Inventory, p *principal.Principal) error {
			_, err := inv.Read(ctx, p, "docs://documents/d7")
			return err
		},
	} {
		b.Run(name, func(b *testing.B) {
			var tPlain, tGated time.Duration
			run := func(inv *inventory.Inventory, total *time.Duration) {
				start := time.Now()
				if err := op(inv, caller); err != nil {
					b.Fatal(err)
				}
				*total += time.Since(start)
			}
			b.ReportAllocs()
			for b.Loop() {
				run(plain, &tPlain)
				run(gated, &tGated)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "ns/op-ungated")
			b.ReportMetric(float64(tGated.Nanoseconds())/n, "ns/op-gated")
			b.ReportMetric(float64(tGated)/float64(tPlain), "ratio-gated/ungated")
		})
	}
}

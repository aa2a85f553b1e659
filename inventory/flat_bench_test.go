package inventory_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Benchmarks that keep the cost curves of the registry flat as it grows
// (issue 41). Each times the case of size N alternately with the case of
// the smallest size in one loop, so that load on a shared machine weighs
// on both alike, and reports the ratio N/1k: near 1 for a flat curve.
// The 1,000,000 case runs only with -bench (go test runs no benchmarks)
// and not with -short.

var flatSizes = []int{1000, 10000, 100000, 1000000}

func flatSize(b *testing.B, n int) {
	if n >= 1000000 && testing.Short() {
		b.Skip("1M statics: not with -short")
	}
}

// flatStatics returns n public static resources, all of one class.
func flatStatics(n int) []inventory.Resource {
	res := make([]inventory.Resource, n)
	read := inventory.TextReader("text/plain", "x")
	for i := range res {
		id := strconv.Itoa(i)
		res[i] = inventory.Resource{URI: "res://static/" + id, Name: "Static " + id, MIMEType: "text/plain", Access: inventory.Public, Read: read}
	}
	return res
}

func flatInventory(b *testing.B, n int) *inventory.Inventory {
	b.Helper()
	inv, err := inventory.New(flatStatics(n), nil, inventory.Options{PageSize: 50, Sealer: sealedcursor.MustNew(sealedcursor.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

// BenchmarkFlatStaticPage: the page 50 before the end of N public statics
// (its cursor replayed) against the same page of 1,000.
func BenchmarkFlatStaticPage(b *testing.B) {
	small := flatInventory(b, 1000)
	for _, n := range flatSizes[1:] {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			flatSize(b, n)
			big := flatInventory(b, n)
			ctx := context.Background()
			cs, err := small.SealListPositionForTest(nil, -1, 1000-50, "", time.Now())
			if err != nil {
				b.Fatal(err)
			}
			cb, err := big.SealListPositionForTest(nil, -1, n-50, "", time.Now())
			if err != nil {
				b.Fatal(err)
			}
			var base, other time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := small.List(ctx, nil, cs, nil); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := big.List(ctx, nil, cb, nil); err != nil {
					b.Fatal(err)
				}
				base, other = base+mid.Sub(start), other+time.Since(mid)
			}
			benchpair.Report(b, "page", "1k", base, strconv.Itoa(n/1000)+"k", other)
		})
	}
}

// BenchmarkFlatStaticRegister: New with N public statics, per static,
// against 1,000; and the heap an inventory keeps per static.
func BenchmarkFlatStaticRegister(b *testing.B) {
	for _, n := range flatSizes[1:] {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			flatSize(b, n)
			smallRes, bigRes := flatStatics(1000), flatStatics(n)
			var base, other time.Duration
			var kept uint64
			var ms runtime.MemStats
			for b.Loop() {
				start := time.Now()
				if _, err := inventory.New(smallRes, nil, inventory.Options{}); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				mid2 := time.Now()
				inv, err := inventory.New(bigRes, nil, inventory.Options{})
				if err != nil {
					b.Fatal(err)
				}
				other += time.Since(mid2)
				base += mid.Sub(start)
				runtime.GC()
				runtime.ReadMemStats(&ms)
				kept = ms.HeapAlloc - before
				runtime.KeepAlive(inv)
			}
			base = base * time.Duration(n/1000) // per static: the small registry has 1/(n/1000) as many
			benchpair.Report(b, "registry", "1k-scaled", base, strconv.Itoa(n/1000)+"k", other)
			b.ReportMetric(float64(other.Nanoseconds())/float64(b.N)/float64(n), "ns/static")
			b.ReportMetric(float64(kept)/float64(n), "B/static")
		})
	}
}

// flatTemplates returns n public templates, each with a literal beginning
// of its own ("res://t<i>/{id}"), or with all the same beginning and an end
// of their own ("res://{tenant}/{id}.t<i>") when shared.
func flatTemplates(n int, shared bool) []inventory.Template {
	out := make([]inventory.Template, n)
	read := inventory.TextReader("text/plain", "x")
	for i := range out {
		id := strconv.Itoa(i)
		u := "res://t" + id + "/{id}"
		if shared {
			u = "res://{tenant}/{id}.t" + id
		}
		out[i] = inventory.Template{Name: "t" + id, URITemplate: u, Access: inventory.Public, Read: read}
	}
	return out
}

// BenchmarkFlatTemplatesNew: New with N templates (the overlap check),
// per template, against 1,000.
func BenchmarkFlatTemplatesNew(b *testing.B) {
	for _, shared := range []bool{false, true} {
		for _, n := range []int{2000, 3000, 10000, 100000} {
			if shared && n > 10000 {
				continue // the check compares these pairwise by the literals: quadratic
			}
			name := map[bool]string{false: "own-prefix", true: "shared-prefix"}[shared]
			b.Run(name+"/N="+strconv.Itoa(n), func(b *testing.B) {
				if n >= 100000 && testing.Short() {
					b.Skip("100k templates: not with -short")
				}
				small, big := flatTemplates(1000, shared), flatTemplates(n, shared)
				var base, other time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := inventory.New(nil, small, inventory.Options{}); err != nil {
						b.Fatal(err)
					}
					mid := time.Now()
					if _, err := inventory.New(nil, big, inventory.Options{}); err != nil {
						b.Fatal(err)
					}
					base, other = base+mid.Sub(start), other+time.Since(mid)
				}
				b.ReportMetric(float64(base.Nanoseconds())/float64(b.N)/1e6, "ms/New-1k")
				b.ReportMetric(float64(other.Nanoseconds())/float64(b.N)/1e6, "ms/New-"+strconv.Itoa(n/1000)+"k")
				b.ReportMetric(float64(other)/float64(base)*1000/float64(n), "per-template-"+strconv.Itoa(n/1000)+"k/1k")
			})
		}
	}
}

// BenchmarkFlatGatedStaticPage: in a gated inventory (every tenth static
// behind a gate the caller is let through), the page 50 before the end of
// N statics (its cursor replayed) against the first page of the same
// inventory. Every page of a gated inventory decides every static for its
// caller (its cursors bind the caller's visibility vector), so neither is
// flat in N; what this keeps is the ratio of the two near 1: finding a
// deep page's place costs no walk over the statics before it.
func BenchmarkFlatGatedStaticPage(b *testing.B) {
	for _, n := range flatSizes[1:] {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			flatSize(b, n)
			res := flatStatics(n)
			for i := range res {
				if i%10 == 0 {
					res[i].Gates = []string{"beta"}
				}
			}
			inv, err := inventory.New(res, nil, inventory.Options{PageSize: 50, Sealer: sealedcursor.MustNew(sealedcursor.Options{}),
				Gates: []inventory.Gate{{Name: "beta", Policy: inventory.Subjects("carol")}}, Grants: grants.NewMemory()})
			if err != nil {
				b.Fatal(err)
			}
			carol := &principal.Principal{Subject: "carol"}
			ctx := context.Background()
			deep, err := inv.SealListPositionForTest(carol, -1, n-50, "", time.Now())
			if err != nil {
				b.Fatal(err)
			}
			var base, other time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := inv.List(ctx, carol, "", nil); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := inv.List(ctx, carol, deep, nil); err != nil {
					b.Fatal(err)
				}
				base, other = base+mid.Sub(start), other+time.Since(mid)
			}
			benchpair.Report(b, "page", "first", base, "deep", other)
		})
	}
}

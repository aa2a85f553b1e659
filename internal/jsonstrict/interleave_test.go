package jsonstrict

import (
	"testing"
	"time"
)

// interleave runs base and cand alternately, in batches of batch calls, for
// b.N calls of each, so that load from other processes hits both alike, and
// reports each one's mean ns/op and their ratio cand/base.
func interleave(b *testing.B, batch int, base, cand func()) {
	var tb, tc time.Duration
	n := 0
	for b.Loop() {
		n++
		if n%batch != 0 {
			continue
		}
		t0 := time.Now()
		for range batch {
			base()
		}
		t1 := time.Now()
		for range batch {
			cand()
		}
		tb += t1.Sub(t0)
		tc += time.Since(t1)
	}
	calls := float64(n / batch * batch)
	if calls == 0 {
		return
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(tb.Nanoseconds())/calls, "base-ns/op")
	b.ReportMetric(float64(tc.Nanoseconds())/calls, "new-ns/op")
	b.ReportMetric(float64(tc)/float64(tb), "new/base")
}

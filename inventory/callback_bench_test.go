package inventory

import (
	"context"
	"runtime/debug"
	"testing"
	"time"
)

// inlineCall is how call ran a callback before callbacks got goroutines of
// their own (issue 21): on the caller's goroutine, with the lazily armed
// deadline. It is the baseline of BenchmarkCallOverhead.
func inlineCall[Req, Res any](ctx context.Context, inv *Inventory, f func(context.Context, Req) (Res, error), req Req) (res Res, err error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > inv.timeout {
		cc := newCallContext(ctx, time.Now().Add(inv.timeout))
		defer cc.finish()
		ctx = cc
	}
	defer func() {
		if r := recover(); r != nil {
			var zero Res
			res, err = zero, &panicError{value: r, stack: debug.Stack()}
		}
	}()
	res, err = f(ctx, req)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

// BenchmarkCallOverhead alternates call and the inline baseline with a
// List callback that slices prepared entries (the cheapest callback there
// is: the overhead is all there is), and reports each one's time per call.
func BenchmarkCallOverhead(b *testing.B) {
	inv := &Inventory{timeout: 10 * time.Second}
	entries := make([]Entry, 50)
	list := func(_ context.Context, req ListRequest) (Page, error) {
		return Page{Entries: entries[:req.Limit], HasMore: true}, nil
	}
	req := ListRequest{Limit: 50}
	ctx := context.Background()
	var tCall, tInline time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if p, err := call(ctx, inv, list, req); err != nil || len(p.Entries) != 50 {
			b.Fatal(err)
		}
		t1 := time.Now()
		if p, err := inlineCall(ctx, inv, list, req); err != nil || len(p.Entries) != 50 {
			b.Fatal(err)
		}
		tInline += time.Since(t1)
		tCall += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tCall.Nanoseconds())/n, "call-ns")
	b.ReportMetric(float64(tInline.Nanoseconds())/n, "inline-ns")
}

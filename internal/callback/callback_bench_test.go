package callback

import (
	"context"
	"runtime/debug"
	"testing"
	"time"
)

// inlineCall is how call ran a callback before callbacks got goroutines of
// their own (issue 21): on the caller's goroutine, with the lazily armed
// deadline. It is the baseline of BenchmarkCallOverhead.
func inlineCall[Req, Res any](ctx context.Context, rn *Runner, f func(context.Context, Req) (Res, error), req Req) (res Res, err error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > rn.timeout {
		cc := &callContext{parent: ctx, deadline: time.Now().Add(rn.timeout)}
		defer cc.finish()
		ctx = cc
	}
	defer func() {
		if r := recover(); r != nil {
			var zero Res
			res, err = zero, &PanicError{Value: r, Stack: debug.Stack()}
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
	rn := New(10*time.Second, nil)
	entries := make([]string, 50)
	list := func(_ context.Context, limit int) ([]string, error) {
		return entries[:limit], nil
	}
	req := 50
	ctx := context.Background()
	var tCall, tInline time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if p, err := Call(ctx, rn, nil, list, req); err != nil || len(p) != 50 {
			b.Fatal(err)
		}
		t1 := time.Now()
		if p, err := inlineCall(ctx, rn, list, req); err != nil || len(p) != 50 {
			b.Fatal(err)
		}
		tInline += time.Since(t1)
		tCall += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tCall.Nanoseconds())/n, "call-ns")
	b.ReportMetric(float64(tInline.Nanoseconds())/n, "inline-ns")
}

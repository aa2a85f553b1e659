package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// scratch holds the per-request buffers of the serving methods.
type scratch struct {
	bind, payload, trailer []byte
	vis, open              []byte // visibility bits of a gated inventory
	item                   Item   // the item offered to a page's fit function
	check                  pageCheck
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{bind: make([]byte, 0, 256), payload: make([]byte, 0, 300), trailer: make([]byte, 0, 512)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	const keep = 64 << 10 // do not pin huge buffers
	if cap(sc.bind) > keep || cap(sc.trailer) > keep || cap(sc.vis) > keep {
		return
	}
	scratchPool.Put(sc)
}

// call runs an application callback with the callback timeout (never
// beyond the request's deadline) and turns a panic into a *panicError.
//
// The callback runs on a goroutine of its own and call waits for it until
// its deadline or the request's end, whichever comes first, so a callback
// that ignores its context does not hold the request past the deadline.
// One that has not returned by then is abandoned (its context is done, its
// result is dropped when it comes) and counted; while an inventory has
// MaxAbandonedCallbacks abandoned callbacks, call refuses at once.
func call[Req, Res any](ctx context.Context, inv *Inventory, f func(context.Context, Req) (Res, error), req Req) (Res, error) {
	var zero Res
	if abandoned.full(inv) {
		return zero, errTooManyAbandoned
	}
	r := &callRun[Req, Res]{inv: inv, f: f, req: req, ctx: ctx, done: make(chan struct{})}
	var expired <-chan struct{}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > inv.timeout {
		r.cc = callContext{parent: ctx, deadline: time.Now().Add(inv.timeout)}
		r.ctx = &r.cc
		expired = expiry(r.cc.deadline, inv.timeout)
	} // else the request's own deadline is the earlier one: its Done is enough
	go r.exec()
	select {
	case <-r.done:
		return r.result()
	case <-ctx.Done():
	case <-expired:
	}
	// The deadline passed or the request ended first. Counted before the
	// callback can see that it was given up on (it uncounts itself then).
	abandoned.add(inv)
	if !r.state.CompareAndSwap(callRunning, callGiven) {
		abandoned.remove(inv) // it returned meanwhile
		<-r.done
		return r.result()
	}
	// Abandoned. The callback's context is done, or is in a moment (an
	// armed context's own timer may fire a hair after expiry's); the
	// callback's goroutine finishes it if it ever returns.
	err := r.ctx.Err()
	if err == nil {
		err = context.DeadlineExceeded
	}
	return zero, &abandonedError{cause: err}
}

// result returns what the callback returned, once it has: its result is
// not trusted if the deadline passed meanwhile.
func (r *callRun[Req, Res]) result() (Res, error) {
	res, err := r.res, r.err
	if err == nil && r.ctx.Err() != nil {
		// The callback ignored its deadline; its result is not trusted.
		var zero Res
		res, err = zero, r.ctx.Err()
	}
	if r.cc.parent != nil {
		r.cc.finish()
	}
	return res, err
}

// callRun is one callback call. The callback's goroutine writes res and
// err, then settles state; call settles it first when it gives up.
type callRun[Req, Res any] struct {
	cc    callContext // the call's own deadline, when it has one
	inv   *Inventory
	f     func(context.Context, Req) (Res, error)
	req   Req
	ctx   context.Context // &cc, or the request's context
	state atomic.Int32    // callRunning, then callReturned (by exec) or callGiven (by call)
	done  chan struct{}
	res   Res
	err   error
}

const (
	callRunning int32 = iota
	callReturned
	callGiven
)

// exec runs the callback on its own goroutine.
func (r *callRun[Req, Res]) exec() {
	defer func() {
		if p := recover(); p != nil {
			var zero Res
			r.res, r.err = zero, &panicError{value: p, stack: debug.Stack()}
		}
		if !r.state.CompareAndSwap(callRunning, callReturned) {
			if r.cc.parent != nil {
				r.cc.finish()
			}
			r.inv.returnedLate(r.err, time.Since(r.cc.deadline), r.cc.parent != nil)
		}
		close(r.done)
	}()
	r.res, r.err = r.f(r.ctx, r.req)
}

// returnedLate logs a callback that returned after its call gave up on it
// and stops counting it.
func (inv *Inventory) returnedLate(err error, late time.Duration, ownDeadline bool) {
	n := abandoned.remove(inv)
	if inv.log == nil {
		return
	}
	// This runs on the callback's goroutine, where a panicking log handler
	// would end the process: nothing else may be lost with it.
	defer func() { _ = recover() }()
	attrs := []slog.Attr{slog.Int("abandoned", n)}
	if ownDeadline {
		attrs = append(attrs, slog.Duration("late", late))
	}
	var pe *panicError
	if errors.As(err, &pe) {
		attrs = append(attrs, slog.String("panic", fmt.Sprint(pe.value)), slog.String("stack", string(pe.stack)))
	}
	inv.log.LogAttrs(context.Background(), slog.LevelWarn, "inventory: an abandoned callback returned; its result was dropped", attrs...)
}

// MaxAbandonedCallbacks bounds the abandoned callbacks of one Inventory:
// those still running after their call gave up on them because their
// deadline passed or the request ended (a callback that ignores its
// context). While an inventory has that many, every new callback call of
// it fails at once with [ErrInternal] and an operator record (rule
// "deadline"), until some return. Calls already running when the bound is
// reached may still be abandoned, so the count can pass it by at most the
// number of calls in flight then.
const MaxAbandonedCallbacks = 64

// AbandonedCallbacks returns how many callbacks of inv are running after
// their calls gave up on them (see [MaxAbandonedCallbacks]): a gauge for
// operators. It is safe for concurrent use.
func (inv *Inventory) AbandonedCallbacks() int { return abandoned.count(inv) }

// abandonedError is the error of a call whose callback did not return by
// its deadline or the request's end. It matches the context's error.
type abandonedError struct{ cause error }

func (e *abandonedError) Error() string {
	return "inventory: the callback did not return by its deadline (" + e.cause.Error() + "); the request was answered without it"
}

func (e *abandonedError) Unwrap() error { return e.cause }

// errTooManyAbandoned refuses a call while its inventory has
// MaxAbandonedCallbacks abandoned callbacks. It matches
// context.DeadlineExceeded, so that it is logged as a missed deadline.
var errTooManyAbandoned error = &abandonedLimitError{}

type abandonedLimitError struct{}

func (*abandonedLimitError) Error() string {
	return fmt.Sprintf("inventory: %d abandoned callbacks of this inventory are still running; calls fail until some return", MaxAbandonedCallbacks)
}

func (*abandonedLimitError) Unwrap() error { return context.DeadlineExceeded }

// abandonment counts the abandoned callbacks of each inventory. The map
// holds an inventory only while it has some; total lets the common case
// (fewer than MaxAbandonedCallbacks in the whole process) answer full
// without the lock.
type abandonment struct {
	total atomic.Int64
	mu    sync.Mutex
	by    map[*Inventory]int
}

var abandoned abandonment

func (a *abandonment) full(inv *Inventory) bool {
	if a.total.Load() < MaxAbandonedCallbacks {
		return false
	}
	return a.count(inv) >= MaxAbandonedCallbacks
}

func (a *abandonment) count(inv *Inventory) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.by[inv]
}

func (a *abandonment) add(inv *Inventory) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by == nil {
		a.by = make(map[*Inventory]int)
	}
	a.by[inv]++
	a.total.Add(1)
}

// remove stops counting one callback of inv and returns how many remain.
func (a *abandonment) remove(inv *Inventory) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.by[inv] - 1
	if n <= 0 {
		delete(a.by, inv)
		n = 0
	} else {
		a.by[inv] = n
	}
	a.total.Add(-1)
	return n
}

// ruleOf classifies a callback error for the operator log.
func ruleOf(ctx context.Context, err error) Rule {
	var pe *panicError
	switch {
	case errors.As(err, &pe):
		return RuleCallbackPanic
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return RuleDeadline
	}
	return RuleCallbackError
}

// fail logs a failed callback or broken contract and returns ErrInternal.
// The record names the method, the source (template or resource) and the
// rule; it never holds URIs, names or values of the request or of entries.
func (inv *Inventory) fail(ctx context.Context, method, source string, err error) error {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("method", method), slog.String("source", source))
	var ce *ContractError
	var pe *panicError
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, slog.String("rule", string(ce.Rule)), slog.Int("entry", ce.Entry))
	case errors.As(err, &pe):
		attrs = append(attrs, slog.String("rule", string(RuleCallbackPanic)),
			slog.String("panic", fmt.Sprint(pe.value)), slog.String("stack", string(pe.stack)))
	default:
		attrs = append(attrs, slog.String("rule", string(ruleOf(ctx, err))), slog.String("error", err.Error()))
	}
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: callback failed", attrs...)
	return ErrInternal
}

// failAssembly logs a cursor that could not be sealed (never expected).
// It returns ErrInternal.
func (inv *Inventory) failAssembly(ctx context.Context, method string, err error) error {
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: cannot assemble the response",
		slog.String("method", method), slog.String("rule", string(ruleInternal)), slog.String("error", err.Error()))
	return ErrInternal
}

// failRule logs a rule broken outside a page (contents, entry size) and
// returns ErrInternal.
func (inv *Inventory) failRule(ctx context.Context, method, source string, rule Rule, entry int) error {
	return inv.fail(ctx, method, source, &ContractError{Source: source, Rule: rule, Entry: entry})
}

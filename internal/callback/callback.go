// Package callback runs application callbacks for the kit: each on a
// goroutine of its own, with a timeout (never beyond the request's
// deadline), its panics recovered, and those that ignore their context
// abandoned at the deadline and counted, per caller, so that one caller's
// stuck callbacks never refuse another's.
package callback

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Bounds of the abandoned callbacks of one Runner (see Runner).
const (
	// MaxAbandoned bounds the callers that hold abandoned callbacks of a
	// Runner; three quarters of it bound the abandoned callbacks of the
	// callers that hold some (see Call), the last quarter is kept for
	// callers holding none.
	MaxAbandoned = 64
	// MaxAbandonedPerCaller is the largest share of one signed-in caller
	// (one subject, or one client for a caller without a subject); a
	// share shrinks as more callers hold abandoned callbacks.
	MaxAbandonedPerCaller = 8
	// MaxAbandonedAnonymous is the largest share that anonymous callers
	// (and principals naming neither subject nor client) have together.
	MaxAbandonedAnonymous = 4
)

// shared is the part of MaxAbandoned that callers already holding
// abandoned callbacks share.
const shared = MaxAbandoned * 3 / 4

// refusalLogEvery is the least time between two log lines of refusals.
const refusalLogEvery = 10 * time.Second

// Runner runs callbacks with one timeout and counts those it abandoned.
// Its methods are safe for concurrent use. A nil *Runner must not be used.
type Runner struct {
	timeout time.Duration
	log     *slog.Logger // told of abandoned callbacks that return; nil: nobody
	ab      abandonment
}

// New returns a Runner whose callbacks have timeout (> 0) each, logging
// the late return of an abandoned callback to log (nil: not logged).
func New(timeout time.Duration, log *slog.Logger) *Runner {
	return &Runner{timeout: timeout, log: log}
}

// Timeout returns the timeout of each callback.
func (rn *Runner) Timeout() time.Duration { return rn.timeout }

// Abandoned returns how many callbacks of rn are running after their
// calls gave up on them.
func (rn *Runner) Abandoned() int { return int(rn.ab.total.Load()) }

// Call runs f(ctx', req) with the runner's timeout (never beyond the
// request's deadline) and turns a panic into a *PanicError. who is the
// caller the callback works for (nil: anonymous).
//
// The callback runs on a goroutine of its own and Call waits for it until
// its deadline or the request's end, whichever comes first, so a callback
// that ignores its context does not hold the request past the deadline.
// One that has not returned by then is abandoned (its context is done, its
// result is dropped when it comes) and counted against its caller.
//
// No crowd of callers denies another: a caller holding no abandoned
// callback is admitted while fewer than MaxAbandoned callers hold some. A
// caller holding some is admitted only while it holds fewer than its
// share, MaxAbandonedPerCaller (MaxAbandonedAnonymous for anonymous
// callers together) or, when more callers hold some, 48 (3/4 of
// MaxAbandoned) divided by their number, at least one; and only while the
// runner holds fewer than 48 in all. Otherwise Call refuses at once with
// an error matching context.DeadlineExceeded, and the runner logs, at
// WARN and at most once per 10 s, how many callbacks and callers it holds
// and how many calls it refused (never a caller). Calls already running
// may still be abandoned, so a caller's count can pass its share by the
// number of its calls in flight when it reached it; the runner holds at
// most 48 abandoned callbacks of callers that went on calling, one of
// each of at most 64 callers, and those in flight.
func Call[Req, Res any](ctx context.Context, rn *Runner, who *principal.Principal, f func(context.Context, Req) (Res, error), req Req) (Res, error) {
	var zero Res
	if err := rn.ab.admit(who); err != nil {
		rn.refused(err)
		return zero, err
	}
	r := &callRun[Req, Res]{rn: rn, f: f, req: req, ctx: ctx, done: make(chan struct{})}
	var expired <-chan struct{}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > rn.timeout {
		r.cc = callContext{parent: ctx, deadline: time.Now().Add(rn.timeout)}
		r.ctx = &r.cc
		expired = expiry(r.cc.deadline, rn.timeout)
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
	r.who = callerKey(who)
	rn.ab.add(r.who)
	if !r.state.CompareAndSwap(callRunning, callGiven) {
		rn.ab.remove(r.who) // it returned meanwhile
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
	return zero, &AbandonedError{cause: err}
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
// err, then settles state; Call settles it first when it gives up.
type callRun[Req, Res any] struct {
	cc    callContext // the call's own deadline, when it has one
	rn    *Runner
	who   string // the caller's key, set before state is settled by Call
	f     func(context.Context, Req) (Res, error)
	req   Req
	ctx   context.Context // &cc, or the request's context
	state atomic.Int32    // callRunning, then callReturned (by exec) or callGiven (by Call)
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
			r.res, r.err = zero, &PanicError{Value: p, Stack: debug.Stack()}
		}
		if !r.state.CompareAndSwap(callRunning, callReturned) {
			if r.cc.parent != nil {
				r.cc.finish()
			}
			r.rn.returnedLate(r.who, r.err, time.Since(r.cc.deadline), r.cc.parent != nil)
		}
		close(r.done)
	}()
	r.res, r.err = r.f(r.ctx, r.req)
}

// returnedLate logs a callback that returned after its call gave up on it
// and stops counting it.
func (rn *Runner) returnedLate(who string, err error, late time.Duration, ownDeadline bool) {
	n := rn.ab.remove(who)
	if rn.log == nil {
		return
	}
	// This runs on the callback's goroutine, where a panicking log handler
	// would end the process: nothing else may be lost with it.
	defer func() { _ = recover() }()
	attrs := []slog.Attr{slog.Int("abandoned", n)}
	if ownDeadline {
		attrs = append(attrs, slog.Duration("late", late))
	}
	if pe, ok := err.(*PanicError); ok {
		attrs = append(attrs, slog.String("panic", fmt.Sprint(pe.Value)), slog.String("stack", string(pe.Stack)))
	}
	rn.log.LogAttrs(context.Background(), slog.LevelWarn, "inventory: an abandoned callback returned; its result was dropped", attrs...)
}

// refused logs, at most once per refusalLogEvery, that the runner
// refuses calls: how full it is, never whose calls.
func (rn *Runner) refused(err error) {
	n, now := rn.ab.refusal()
	if !now || rn.log == nil {
		return
	}
	full := "runner"
	if err == errCallerFull {
		full = "caller"
	}
	rn.log.LogAttrs(context.Background(), slog.LevelWarn, "inventory: abandoned callbacks refuse calls",
		slog.String("full", full), slog.Int("abandoned", rn.Abandoned()), slog.Int("callers", rn.ab.holders()),
		slog.Int("max_callers", MaxAbandoned), slog.Int64("refused", n))
}

// PanicError carries a recovered callback panic to the logger.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return "inventory: callback panicked" }

// AbandonedError is the error of a call whose callback did not return by
// its deadline or the request's end. It matches the context's error.
type AbandonedError struct{ cause error }

func (e *AbandonedError) Error() string {
	return "inventory: the callback did not return by its deadline (" + e.cause.Error() + "); the request was answered without it"
}

func (e *AbandonedError) Unwrap() error { return e.cause }

// LimitError refuses a call while its caller's share, or the runner's
// bound, of abandoned callbacks is used up. It matches
// context.DeadlineExceeded, so that it is logged as a missed deadline.
type LimitError struct{ caller bool }

func (e *LimitError) Error() string {
	if e.caller {
		return "inventory: the abandoned callbacks of this caller are still running (its share is used up); its calls fail until some return"
	}
	return fmt.Sprintf("inventory: %d callers hold abandoned callbacks of this inventory; calls fail until some return", MaxAbandoned)
}

func (*LimitError) Unwrap() error { return context.DeadlineExceeded }

var (
	errCallerFull = &LimitError{caller: true}
	errRunnerFull = &LimitError{}
)

// callerKey is the key of who's share: its subject key, else its client
// key (marked so that no subject key equals it), else "" (the anonymous
// pool).
func callerKey(who *principal.Principal) string {
	switch {
	case who == nil:
		return ""
	case who.Subject != "":
		return who.Key()
	case who.ClientID != "":
		return "\x00client\x00" + who.ClientKey()
	}
	return ""
}

// share is the most abandoned callbacks the caller of key may hold and
// still call while holders callers hold some.
func share(key string, holders int) int {
	most := MaxAbandonedPerCaller
	if key == "" {
		most = MaxAbandonedAnonymous
	}
	return min(most, max(1, shared/max(holders, 1)))
}

// abandonment counts the abandoned callbacks of a runner by caller. The
// map holds a caller only while it has some; total lets the common case
// (fewer than the smallest share in the whole runner) admit a call
// without the lock and without computing the caller's key.
type abandonment struct {
	total   atomic.Int64
	mu      sync.Mutex
	by      map[string]int
	refused atomic.Int64 // refusals since the last log line
	logged  atomic.Int64 // unix nanoseconds of the last log line
}

// admit returns nil if who may start a callback.
func (a *abandonment) admit(who *principal.Principal) error {
	if a.total.Load() < MaxAbandonedAnonymous {
		return nil
	}
	key := callerKey(who)
	a.mu.Lock()
	defer a.mu.Unlock()
	holders := len(a.by)
	switch h := a.by[key]; {
	case h == 0 && holders >= MaxAbandoned:
		return errRunnerFull
	case h == 0:
		return nil
	case h >= share(key, holders):
		return errCallerFull
	case a.total.Load() >= shared:
		return errRunnerFull
	}
	return nil
}

// refusal counts a refused call and tells whether to log the refusals now
// (at most once per refusalLogEvery), and how many there were.
func (a *abandonment) refusal() (int64, bool) {
	a.refused.Add(1)
	now := time.Now().UnixNano()
	last := a.logged.Load()
	if now-last < int64(refusalLogEvery) || !a.logged.CompareAndSwap(last, now) {
		return 0, false
	}
	return a.refused.Swap(0), true
}

// holders returns how many callers hold abandoned callbacks.
func (a *abandonment) holders() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.by)
}

func (a *abandonment) add(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by == nil {
		a.by = make(map[string]int)
	}
	a.by[key]++
	a.total.Add(1)
}

// remove stops counting one callback of key and returns how many the
// runner still has.
func (a *abandonment) remove(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := a.by[key] - 1; n <= 0 {
		delete(a.by, key)
	} else {
		a.by[key] = n
	}
	return int(a.total.Add(-1))
}

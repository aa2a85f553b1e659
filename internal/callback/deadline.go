package callback

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is the context of one callback call: its parent's values
// and cancellation, and a deadline of its own (the callback timeout). The
// deadline's timer is armed only when the callback asks for Done or for a
// value (context.Cause and AfterFunc find the deadline through both); Err
// and Deadline read the clock. A callback that never looks at its context
// (one that slices prepared data, say) costs no timer and no registration
// with the parent. Either way the callback sees a context that is done at
// its deadline or when its parent is, and call checks Err after it
// returned, so the rule holds: a callback never runs past the callback
// timeout or the request deadline with its result trusted.
type callContext struct {
	parent   context.Context
	deadline time.Time

	mu       sync.Mutex
	inner    context.Context // context.WithDeadline(parent, deadline), once armed
	cancel   context.CancelFunc
	finished bool // the call returned: the context is cancelled
}

var _ context.Context = (*callContext)(nil)

// closedDone is the Done channel of a context cancelled before it was armed.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// arm returns the real context, making it on first use; nil after finish
// when it was never armed.
func (c *callContext) arm() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil && !c.finished {
		c.inner, c.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	return c.inner
}

// Deadline returns the callback's deadline.
func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done arms the context and returns its channel.
func (c *callContext) Done() <-chan struct{} {
	if inner := c.arm(); inner != nil {
		return inner.Done()
	}
	return closedDone
}

// Err reports the armed context's error, or, unarmed, the parent's, the
// deadline's (from the clock) or cancellation after the call returned.
func (c *callContext) Err() error {
	c.mu.Lock()
	inner, finished := c.inner, c.finished
	c.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case finished:
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Value arms the context and looks key up in it (the context package
// finds a context's cancellation state through Value).
func (c *callContext) Value(key any) any {
	if inner := c.arm(); inner != nil {
		return inner.Value(key)
	}
	return c.parent.Value(key)
}

// finish cancels the context once the call has returned, releasing its
// timer if it was armed.
func (c *callContext) finish() {
	c.mu.Lock()
	c.finished = true
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// expiry returns a channel that is closed at deadline or at most a grain
// after it: a hundredth of the callback timeout, at most 10 ms (10 ms for
// the default 10 s), never before the deadline. Calls whose deadlines fall
// in the same grain share one timer and one channel, so that a callback
// call costs no timer of its own (a timer's start and stop cost about as
// much as listing a page of prepared entries; see BenchmarkCallOverhead).
// Timers are not stopped: each fires once and closes its channel, so at
// most about a hundred per timeout value are pending at once.
func expiry(deadline time.Time, timeout time.Duration) <-chan struct{} {
	grain := min(max(timeout/100, time.Microsecond), 10*time.Millisecond)
	base := monoBase()
	n := int64((deadline.Sub(base) + grain - 1) / grain)
	slot := &ticks[uint64(n^int64(grain))%uint64(len(ticks))]
	if t := slot.Load(); t != nil && t.n == n && t.grain == grain {
		return t.c
	}
	t := &tick{grain: grain, n: n, c: make(chan struct{})}
	// base has a monotonic reading: the timer fires at or after deadline
	// whatever the wall clock does.
	time.AfterFunc(time.Until(base.Add(time.Duration(n)*grain)), func() { close(t.c) })
	slot.Store(t) // a tick it replaces still closes for its own waiters
	return t.c
}

// tick is one shared deadline: its channel is closed at monoBase + n·grain.
type tick struct {
	grain time.Duration
	n     int64
	c     chan struct{}
}

// ticks holds the most recent tick of a few grains and times; a collision
// only costs a new timer.
var ticks [16]atomic.Pointer[tick]

// monoBase is the process's reference time for ticks (a monotonic reading).
var monoBase = sync.OnceValue(time.Now)

package inventory

import (
	"context"
	"sync"
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

func newCallContext(parent context.Context, deadline time.Time) *callContext {
	return &callContext{parent: parent, deadline: deadline}
}

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

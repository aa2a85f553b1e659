// Package fakeclock is the one fake clock of the kit's tests: a time source
// that moves only when a test says so, safe for concurrent use, whose Now
// method value fits every Now option of the kit (authn, inventory,
// sealedcursor, notify, ratelimit, the stores).
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable time source. The zero Clock reads the zero time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock reading t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d (backwards when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

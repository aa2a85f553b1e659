package redisstore

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is what a store answers, without a round trip, for a
// while after Redis could not be reached: see the package documentation
// (Faults). Callers treat it as any other failure of the store.
var ErrUnavailable = errors.New("redisstore: redis unavailable")

// How long a gate stays shut after a failure: the first wait, doubled on
// each failed probe up to the last. Redis is tried again, by one call,
// when the wait is over, so a store comes back within maxGateWait of Redis.
const (
	minGateWait = 50 * time.Millisecond
	maxGateWait = time.Second
)

// gate spares the callers of a store that cannot reach Redis the wait of
// a connection attempt each (up to the client's DialTimeout when the
// network drops packets, times its retries): after a failure to reach
// Redis, calls fail at once with ErrUnavailable until the wait is over;
// then one call probes, and its success opens the gate for everyone. Its
// zero value is open. It is safe for concurrent use.
type gate struct {
	until atomic.Int64 // unix ns until which calls fail at once; 0: open
	wait  atomic.Int64 // the current wait, ns
}

// allow reports whether a call may go to Redis now.
func (g *gate) allow() bool {
	u := g.until.Load()
	if u == 0 {
		return true
	}
	now := time.Now().UnixNano()
	if now < u {
		return false
	}
	// One probe: the others keep failing at once while it runs.
	return g.until.CompareAndSwap(u, now+g.wait.Load())
}

// done records the outcome of a call that allow let through. An answer
// from Redis, even an error (a script error, OOM, READONLY), opens the
// gate: Redis was reached. The caller's own cancellation changes nothing.
func (g *gate) done(ctx context.Context, err error) {
	var re redis.Error
	if err == nil || errors.As(err, &re) {
		if g.until.Load() != 0 {
			g.until.Store(0)
			g.wait.Store(0)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	w := min(max(2*g.wait.Load(), int64(minGateWait)), int64(maxGateWait))
	g.wait.Store(w)
	g.until.Store(time.Now().UnixNano() + w)
}

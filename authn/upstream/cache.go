package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/evict"
)

// token is an upstream access token and when it stops being used.
type token struct {
	value   string
	expires time.Time
}

// flight is one fetch in progress: the callers asking for the same key
// while it runs wait for its answer.
type flight struct {
	done chan struct{}
	tok  token
	err  error
}

// cache holds access tokens by key until they expire, bounded, and runs
// at most one fetch per key at a time (single flight).
type cache struct {
	mu      sync.Mutex
	entries map[string]token
	flights map[string]*flight
	max     int
	now     func() time.Time
	joined  int // callers that waited on another's fetch (tests)
}

func newCache(max int, now func() time.Time) *cache {
	return &cache{entries: map[string]token{}, flights: map[string]*flight{}, max: max, now: now}
}

// get returns the token of key: the cached one while it is fresh,
// otherwise fetch's, fetched once for every caller waiting on key. A
// caller whose ctx ends stops waiting; the fetch goes on for the others
// under a context of its own (fetchCtx), so one caller's cancellation
// does not fail everyone.
func (c *cache) get(ctx context.Context, key string, fetch func(context.Context) (token, error)) (string, error) {
	c.mu.Lock()
	if t, ok := c.entries[key]; ok {
		if c.now().Before(t.expires) {
			c.mu.Unlock()
			return t.value, nil
		}
		delete(c.entries, key)
	}
	f, running := c.flights[key]
	if !running {
		f = &flight{done: make(chan struct{})}
		c.flights[key] = f
		go c.run(ctx, key, f, fetch)
	} else {
		c.joined++
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.tok.value, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// fetchTimeout bounds one fetch that runs on after its first caller left.
const fetchTimeout = 30 * time.Second

func (c *cache) run(ctx context.Context, key string, f *flight, fetch func(context.Context) (token, error)) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	f.tok, f.err = fetch(fctx)
	c.mu.Lock()
	delete(c.flights, key)
	if f.err == nil && c.now().Before(f.tok.expires) {
		if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
			now := c.now()
			evict.Sample(c.entries, func(t token) bool { return !now.Before(t.expires) })
		}
		c.entries[key] = f.tok
	}
	c.mu.Unlock()
	close(f.done)
}

// drop forgets key's token if it is still value (an upstream refused it).
func (c *cache) drop(key, value string) {
	c.mu.Lock()
	if t, ok := c.entries[key]; ok && (value == "" || t.value == value) {
		delete(c.entries, key)
	}
	c.mu.Unlock()
}

// joins returns how many callers waited on another's fetch.
func (c *cache) joins() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joined
}

// len returns the number of cached tokens.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

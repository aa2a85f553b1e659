package sessions

import (
	"context"
	"sync"
)

// What stays in the process: a stream is a connection. The counter bounds
// the open streams; the attachments tie each legacy session to the GET
// stream open for it here, so that a new GET, the session's end, or its
// eviction ends that stream at once.

// counter bounds the open event streams, in all and per principal.
type counter struct {
	max, perKey int

	mu      sync.Mutex
	total   int
	byKey   map[string]int
	drained chan struct{} // closed when total drops to zero; nil: nobody waits
}

func newCounter(max, perKey int) *counter {
	return &counter{max: max, perKey: perKey, byKey: map[string]int{}}
}

// acquire counts a new stream of key, or returns errStreamsCaller or
// errStreamsFull. The caller releases what it acquired.
func (c *counter) acquire(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.byKey[key] >= c.perKey:
		return errStreamsCaller
	case c.total >= c.max:
		return errStreamsFull
	}
	c.total++
	c.byKey[key]++
	return nil
}

func (c *counter) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byKey[key]--; c.byKey[key] <= 0 {
		delete(c.byKey, key)
	}
	if c.total == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// wait returns nil once no stream is open, or ctx's error.
func (c *counter) wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.total == 0 {
			c.mu.Unlock()
			return nil
		}
		if c.drained == nil {
			c.drained = make(chan struct{})
		}
		drained := c.drained
		c.mu.Unlock()
		select {
		case <-drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// open returns the number of open streams in all and of key.
func (c *counter) open(key string) (total, own int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.byKey[key]
}

// attachments are the GET streams of legacy sessions open in this process.
type attachments struct {
	mu   sync.Mutex
	seq  uint64
	byID map[string][]*attached // by session id: one stream, briefly two on a reconnect
}

// attached is one GET stream of a session; stop is closed to end it.
type attached struct {
	seq     uint64
	stop    chan struct{}
	stopped bool
}

func (a *attached) stopLocked() {
	if !a.stopped {
		a.stopped = true
		close(a.stop)
	}
}

// add registers a stream of session id that is about to open, ending no
// other: the session is not checked yet.
func (as *attachments) add(id string) *attached {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.seq++
	a := &attached{seq: as.seq, stop: make(chan struct{})}
	if as.byID == nil {
		as.byID = map[string][]*attached{}
	}
	as.byID[id] = append(as.byID[id], a)
	return a
}

// replace ends the streams of session id registered before a: a new GET
// replaces the stream of a reconnecting client, so that no message goes
// to two streams.
func (as *attachments) replace(id string, a *attached) {
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, o := range as.byID[id] {
		if o.seq < a.seq {
			o.stopLocked()
		}
	}
}

// remove forgets a, a stream of session id that ended.
func (as *attachments) remove(id string, a *attached) {
	as.mu.Lock()
	defer as.mu.Unlock()
	list := as.byID[id]
	for i, o := range list {
		if o == a {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(as.byID, id)
	} else {
		as.byID[id] = list
	}
	a.stopLocked()
}

// end ends the streams of the sessions ids: sessions that ended.
func (as *attachments) end(ids ...string) {
	if len(ids) == 0 {
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, id := range ids {
		for _, a := range as.byID[id] {
			a.stopLocked()
		}
	}
}

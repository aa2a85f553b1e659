package ratelimit

import (
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/principal"
)

// The calls each caller has in flight (Limits.MaxInFlight): a caller that
// sends one call after another never meets the limit, however fast it
// goes; a flood of calls at once is refused past it. Local to the process
// (a Store shares the buckets, not this: concurrency is what costs an
// instance), sharded like the buckets, an entry only while a call is in
// flight.

type inflightTable struct {
	shards [rateShards]inflightShard
}

type inflightShard struct {
	mu sync.Mutex
	m  map[uint64]int32
	_  [48]byte // a cache line of its own
}

// begin counts a call of the caller hashed to key in flight, if it has
// fewer than max; it reports whether it did.
func (t *inflightTable) begin(key uint64, max int32) bool {
	s := &t.shards[key>>(64-6)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[uint64]int32)
	}
	n := s.m[key]
	if n >= max {
		return false
	}
	s.m[key] = n + 1
	return true
}

// end counts a call begun before out.
func (t *inflightTable) end(key uint64) {
	s := &t.shards[key>>(64-6)]
	s.mu.Lock()
	if n := s.m[key] - 1; n > 0 {
		s.m[key] = n
	} else {
		delete(s.m, key)
	}
	s.mu.Unlock()
}

// beginCall admits a call into flight: ok false means the caller has
// MaxInFlight calls in flight already. With held, call endCall(key) once
// the call is served.
func (l *Limiter) beginCall(r *http.Request, caller *principal.Principal, k *callerKey) (key uint64, held, ok bool) {
	if l.maxInFlight <= 0 {
		return 0, false, true
	}
	key = l.keyOf(k, r, caller)
	if !l.inflight.begin(key, l.maxInFlight) {
		return key, false, false
	}
	return key, true, true
}

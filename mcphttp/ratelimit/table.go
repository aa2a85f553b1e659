package ratelimit

import (
	"sync"
	"time"
)

// The Limiter's state: the token buckets of every caller seen lately,
// in shards with a lock each, so that callers in different shards never
// wait for each other.

const (
	rateShards = 64 // a power of two
	// minSweepEvery bounds how often one shard is swept for refilled
	// buckets (at most once per refill time, and not more often than this).
	minSweepEvery = int64(time.Second)
	// evictSample is how many callers a full shard samples to forget the
	// least recently seen one.
	evictSample = 8
)

// buckets is one caller's token buckets, one per class, brought up to
// date at last (unix nanoseconds).
type buckets struct {
	last   int64
	tokens [numClasses]float32
}

type bucketTable struct {
	perShard int
	shards   [rateShards]shard
}

type shard struct {
	mu        sync.Mutex
	m         map[uint64]buckets // by the caller's key hash
	lastSweep int64
	_         [40]byte // a cache line of its own
}

func (t *bucketTable) init(maxCallers int) {
	t.perShard = max(1, (maxCallers+rateShards-1)/rateShards)
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]buckets)
	}
}

func (t *bucketTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// take takes a token of class from the caller hashed to key at now.
func (t *bucketTable) take(key uint64, class int, now int64, l *Limiter) (bool, time.Duration) {
	s := &t.shards[key>>(64-6)] // the top bits: the map uses the low ones
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	if !ok {
		s.makeRoom(now, t.perShard, l.fill)
		b.last = now
		for i := range l.rates {
			b.tokens[i] = l.rates[i].burst
		}
	} else {
		b.refill(now, l)
	}
	if b.tokens[class] < 1 {
		need := float64(1 - b.tokens[class])
		s.m[key] = b
		return false, time.Duration(need / l.rates[class].perNano)
	}
	b.tokens[class]--
	s.m[key] = b
	return true, 0
}

// peek reports whether the caller hashed to key has a token of class at
// now, taking nothing (an unknown caller has a full bucket).
func (t *bucketTable) peek(key uint64, class int, now int64, l *Limiter) (bool, time.Duration) {
	s := &t.shards[key>>(64-6)]
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	if !ok {
		return true, 0
	}
	b.refill(now, l)
	s.m[key] = b
	if b.tokens[class] < 1 {
		return false, time.Duration(float64(1-b.tokens[class]) / l.rates[class].perNano)
	}
	return true, 0
}

// refill brings b up to date at now.
func (b *buckets) refill(now int64, l *Limiter) {
	elapsed := now - b.last
	if elapsed <= 0 {
		return // the clock went back, or no time passed: nothing to add
	}
	b.last = now
	for i := range l.rates {
		r := &l.rates[i]
		if r.perNano == 0 {
			continue
		}
		b.tokens[i] = min(r.burst, b.tokens[i]+float32(float64(elapsed)*r.perNano))
	}
}

// makeRoom runs before a new caller is added: now and then it forgets the
// callers whose buckets have refilled (which changes nothing), and in a
// full shard it forgets the least recently seen of a few sampled callers.
func (s *shard) makeRoom(now int64, perShard int, fill int64) {
	if now-s.lastSweep >= max(fill, minSweepEvery) { // never more: a flood of new callers must not sweep each time
		s.lastSweep = now
		for k, b := range s.m {
			if now-b.last >= fill {
				delete(s.m, k)
			}
		}
	}
	if len(s.m) < perShard {
		return
	}
	var oldest uint64
	oldestAt, n := int64(0), 0
	for k, b := range s.m { // map order is random: a sample
		if n == 0 || b.last < oldestAt {
			oldest, oldestAt = k, b.last
		}
		if n++; n == evictSample {
			break
		}
	}
	delete(s.m, oldest)
}

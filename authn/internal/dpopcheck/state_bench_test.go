package dpopcheck

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// preShareReplayCache is the replay cache as it was before per-caller
// shares (one global pool), frozen here as the baseline of
// BenchmarkReplayShareInterleaved.
type preShareReplayCache struct {
	max       int
	period    time.Duration
	mu        sync.Mutex
	rotated   time.Time
	cur, prev map[[16]byte]struct{}
}

func (c *preShareReplayCache) add(k [16]byte, now time.Time) replayResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch d := now.Sub(c.rotated); {
	case c.rotated.IsZero() || d >= 2*c.period:
		clear(c.prev)
		clear(c.cur)
		c.rotated = now
	case d >= c.period:
		c.prev, c.cur = c.cur, c.prev
		clear(c.cur)
		c.rotated = c.rotated.Add(c.period)
	}
	if _, ok := c.cur[k]; ok {
		return replaySeen
	}
	if _, ok := c.prev[k]; ok {
		return replaySeen
	}
	if len(c.cur)+len(c.prev) >= c.max {
		return replayFull
	}
	c.cur[k] = struct{}{}
	return replayFresh
}

// BenchmarkReplayShareInterleaved measures what per-caller shares add to
// the replay memory's cost of an accepted proof: the identity hash of the
// verified principal and the add with its counters, against the pre-share
// cache's add, in alternating blocks of 256 proofs in one loop (so that
// load from other processes hits both alike). The steady state is the
// default's: 100 000 entries, a generation rotating every 50 000 proofs,
// 1 000 callers (issuer-qualified subjects) taking turns, each under its
// share. Reported: each one's mean per proof and the ratio shares/pre.
func BenchmarkReplayShareInterleaved(b *testing.B) {
	const block, callers, perGen = 256, 1000, 50_000
	period := 2*defaultProofWindow + time.Second
	step := period / perGen
	c := &Checker{replay: newReplayCache(defaultMaxReplay, defaultMaxReplay/replayShares, period)}
	pre := &preShareReplayCache{max: defaultMaxReplay, period: period, cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{}}
	ps := make([]principal.Principal, callers)
	for i := range ps {
		ps[i] = principal.Principal{Issuer: "https://issuer.example", Subject: fmt.Sprintf("user-%04d@example.com", i), ClientID: "client-1",
			DPoPThumbprint: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"}
	}
	base := time.Unix(1_800_000_000, 0)
	var preTime, shareTime time.Duration
	var seq uint64
	b.ReportAllocs()
	for b.Loop() {
		s := seq
		t0 := time.Now()
		for i := range uint64(block) {
			var k [16]byte
			binary.LittleEndian.PutUint64(k[:], s+i)
			if pre.add(k, base.Add(time.Duration(s+i)*step)) != replayFresh {
				b.Fatal("pre: not fresh")
			}
		}
		t1 := time.Now()
		for i := range uint64(block) {
			var k [16]byte
			binary.LittleEndian.PutUint64(k[:], s+i)
			if res, _, _ := c.replay.add(k, c.identity(&ps[(s+i)%callers]), base.Add(time.Duration(s+i)*step)); res != replayFresh {
				b.Fatal("shares: not fresh")
			}
		}
		shareTime += time.Since(t1)
		preTime += t1.Sub(t0)
		seq += block
	}
	n := float64(seq)
	b.ReportMetric(float64(preTime.Nanoseconds())/n, "pre-ns/proof")
	b.ReportMetric(float64(shareTime.Nanoseconds())/n, "shares-ns/proof")
	b.ReportMetric(float64(shareTime)/float64(preTime), "shares/pre")
}

// BenchmarkReplayCacheMemory reports the heap a full replay cache holds
// (MaxReplayEntries live proofs, both generations), per proof, worst case
// for the counters (every proof another caller's) and with the pre-share
// cache beside it.
func BenchmarkReplayCacheMemory(b *testing.B) {
	period := 2*defaultProofWindow + time.Second
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for b.Loop() {
		before := heap()
		pre := &preShareReplayCache{max: defaultMaxReplay, period: period, cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{}}
		for i := range uint64(defaultMaxReplay) {
			var k [16]byte
			binary.LittleEndian.PutUint64(k[:], i)
			pre.add(k, time.Unix(0, 0).Add(time.Duration(i)*period/defaultMaxReplay*2))
		}
		mid := heap()
		c := newReplayCache(defaultMaxReplay, 1, period)
		for i := range uint64(defaultMaxReplay) {
			var k [16]byte
			binary.LittleEndian.PutUint64(k[:], i)
			c.add(k, i, time.Unix(0, 0).Add(time.Duration(i)*period/defaultMaxReplay*2))
		}
		after := heap()
		if n, callers := c.len(); n != defaultMaxReplay || callers != defaultMaxReplay {
			b.Fatalf("cache holds %d proofs of %d callers", n, callers)
		}
		b.ReportMetric(float64(mid-before)/defaultMaxReplay, "pre-B/proof")
		b.ReportMetric(float64(after-mid)/defaultMaxReplay, "shares-B/proof")
		b.ReportMetric(float64(after-mid)/1e6, "shares-MB")
		runtime.KeepAlive(pre)
		runtime.KeepAlive(c)
	}
}

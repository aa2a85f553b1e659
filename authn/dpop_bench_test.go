package authn

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/testissuer"
)

// BenchmarkDPoPInterleaved measures what a DPoP proof costs per request:
// every iteration authenticates a plain bearer request (a cached token:
// the baseline) and a DPoP request (the same cached verification, plus
// the proof: parse, key, signature, htu, ath, thumbprint, replay memory),
// alternately, so that load from other processes hits both alike. The
// proof is signed outside the timed part. Reported: each one's mean, the
// proof's own cost (dpop − bearer), the ratio dpop/bearer, and, timed in
// the same iteration, the bare signature check of the proof (jwx's
// verifier with the parsed key: what no implementation can skip) with the
// rest of the proof's cost beside it (other = proof − sig).
func BenchmarkDPoPInterleaved(b *testing.B) {
	for _, kt := range []struct {
		name string
		t    testissuer.KeyType
	}{{"ES256", testissuer.EC256}, {"EdDSA", testissuer.Ed25519}} {
		b.Run(kt.name, func(b *testing.B) {
			e := newEnvTB(b)
			o := e.opts()
			o.Logger = discardLogger()
			o.Now = nil
			v, err := NewJWTVerifier(b.Context(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			a, err := NewAuthenticator(NewCache(v, CacheOptions{}), Options{Resource: testResource, Logger: discardLogger(),
				DPoP: DPoPOptions{Mode: DPoPAllowed, MaxReplayEntries: 1 << 22}})
			if err != nil {
				b.Fatal(err)
			}
			k, err := testissuer.NewProofKey(kt.t)
			if err != nil {
				b.Fatal(err)
			}
			jkt, _ := k.Thumbprint()
			iat := time.Now().Add(time.Hour)
			bound := claims("alice", "read")
			bound.DPoPThumbprint = jkt
			bound.ExpiresAt, bound.IssuedAt = iat.Add(time.Hour), iat.Add(-time.Hour)
			plainC := claims("alice", "read")
			plainC.ExpiresAt, plainC.IssuedAt = bound.ExpiresAt, bound.IssuedAt
			tok := e.is.Token(b, bound, testissuer.WithKey(testissuer.KidES256))
			plain := e.is.Token(b, plainC, testissuer.WithKey(testissuer.KidES256))
			bearerReq := httptest.NewRequest(http.MethodPost, dpopURL, nil)
			bearerReq.Header.Set("Authorization", "Bearer "+plain)
			dpopReq := httptest.NewRequest(http.MethodPost, dpopURL, nil)
			dpopReq.Header.Set("Authorization", "DPoP "+tok)
			var bearerTime, dpopTime, sigTime time.Duration
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				b.StopTimer()
				proof, err := k.Sign(testissuer.Proof{Method: http.MethodPost, URL: dpopURL, Token: tok})
				if err != nil {
					b.Fatal(err)
				}
				dpopReq.Header.Set("DPoP", proof)
				pr, err := parseProof(proof, defaultMaxProofBytes, a.dpop.allowed)
				if err != nil {
					b.Fatal(err)
				}
				vf := a.dpop.verifiers[pr.alg]
				b.StartTimer()
				t0 := time.Now()
				if _, err := a.Authenticate(bearerReq); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := a.Authenticate(dpopReq); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if vf.Verify([]byte(pr.input), pr.sig, pr.key) != nil {
					b.Fatal("signature")
				}
				sigTime += time.Since(t2)
				dpopTime += t2.Sub(t1)
				bearerTime += t1.Sub(t0)
				n++
			}
			b.ReportMetric(float64(bearerTime.Nanoseconds())/float64(n), "bearer-ns/op")
			b.ReportMetric(float64(dpopTime.Nanoseconds())/float64(n), "dpop-ns/op")
			b.ReportMetric(float64((dpopTime-bearerTime).Nanoseconds())/float64(n), "proof-ns/op")
			b.ReportMetric(float64(dpopTime)/float64(bearerTime), "dpop/bearer")
			b.ReportMetric(float64(sigTime.Nanoseconds())/float64(n), "sig-ns/op")
			b.ReportMetric(float64((dpopTime-bearerTime-sigTime).Nanoseconds())/float64(n), "other-ns/op")
		})
	}
}

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
	c := &dpopChecker{replay: newReplayCache(defaultMaxReplay, defaultMaxReplay/replayShares, period)}
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

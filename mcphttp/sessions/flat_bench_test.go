package sessions

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/principal"
)

// fullStore returns a store holding n live sessions, its bound.
func fullStore(b *testing.B, n int) *MemoryStore {
	b.Helper()
	st, err := NewMemoryStore(Limits{MaxSessions: n, MaxSessionsPerPrincipal: 8, IdleTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := st.Create(ctx, newID(), &principal.Principal{Subject: "u" + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkFlatSessionCreateFull: a Create into a full store of N live
// sessions (refused: ErrFull) against one into a full store of 1,000;
// and a bystander's Find on the full store of N against the same on the
// store of 1,000 (issue 41: the full store swept every session under its
// lock). Ratios near 1: flat.
func BenchmarkFlatSessionCreateFull(b *testing.B) {
	small := fullStore(b, 1000)
	by := &principal.Principal{Subject: "bystander"}
	for _, n := range []int{10000, 100000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			big := fullStore(b, n)
			// The bystanders' sessions: made before the stores filled up.
			smallBy, bigBy := newID(), newID()
			small.mu.Lock()
			small.lim.MaxSessions++
			small.mu.Unlock()
			big.mu.Lock()
			big.lim.MaxSessions++
			big.mu.Unlock()
			if _, err := small.Create(ctx, smallBy, by); err != nil {
				b.Fatal(err)
			}
			if _, err := big.Create(ctx, bigBy, by); err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = small.End(ctx, smallBy, by)
				small.lim.MaxSessions--
			}()
			p := &principal.Principal{Subject: "newcomer"}
			var base, other, findBase, findOther time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := small.Create(ctx, newID(), p); err != ErrFull {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := big.Create(ctx, newID(), p); err != ErrFull {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := small.Find(ctx, smallBy, by); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if _, err := big.Find(ctx, bigBy, by); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				base, other = base+t1.Sub(t0), other+t2.Sub(t1)
				findBase, findOther = findBase+t3.Sub(t2), findOther+t4.Sub(t3)
			}
			k := strconv.Itoa(n/1000) + "k"
			benchpair.Report(b, "create", "1k", base, k, other)
			b.ReportMetric(float64(findOther)/float64(findBase), "find-"+k+"/1k")
		})
	}
}

// BenchmarkFlatKeepAlive: one full turn of the keep-alive wheel with N
// streams on it (each signalled once, and its signal taken), per stream,
// against 1,000 streams. The wheel's timer fires keepAliveSlots times per
// interval whatever N is; near 1: the cost per stream does not grow.
func BenchmarkFlatKeepAlive(b *testing.B) {
	wheel := func(n int) (*pinger, []*ping) {
		p := newPinger(time.Hour * keepAliveSlots) // turned by hand
		pgs := make([]*ping, n)
		for i := range pgs {
			pgs[i] = p.add(nil)
		}
		return p, pgs
	}
	turn := func(p *pinger, pgs []*ping) {
		for range keepAliveSlots {
			p.tick()
		}
		for _, pg := range pgs {
			<-pg.c
		}
	}
	small, smallPgs := wheel(1000)
	for _, n := range []int{10000, 100000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			big, bigPgs := wheel(n)
			var base, other time.Duration
			for b.Loop() {
				t0 := time.Now()
				turn(small, smallPgs)
				t1 := time.Now()
				turn(big, bigPgs)
				base, other = base+t1.Sub(t0), other+time.Since(t1)
			}
			base *= time.Duration(n / 1000) // per stream
			benchpair.Report(b, "turn", "1k-scaled", base, strconv.Itoa(n/1000)+"k", other)
			big.mu.Lock()
			big.timer.Stop()
			big.mu.Unlock()
		})
	}
	small.mu.Lock()
	small.timer.Stop()
	small.mu.Unlock()
}

// BenchmarkKeepAlivePath: a full turn of the wheel over 256 detached TCP
// streams whose clients read, the wheel writing each keep-alive itself
// (the path of a detached stream over TCP), against the wheel signalling
// each stream's goroutine, which writes it (the path of a stream kept in
// its handler, or over TLS; every stream's before; here a goroutine that
// waits on its signal alone, cheaper to wake than a stream's). Reports
// the time per keep-alive of each and the ratio.
func BenchmarkKeepAlivePath(b *testing.B) {
	if !canRawWrite {
		b.Skip("the stream's goroutine writes every keep-alive on this system")
	}
	const n = 256
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	direct := newPinger(time.Hour * keepAliveSlots) // both turned by hand
	signalled := newPinger(time.Hour * keepAliveSlots)
	var written sync.WaitGroup
	var pgs []*ping
	for i := range 2 * n {
		server, client := tcpPair(b, ln)
		go func() { _, _ = io.Copy(io.Discard, client) }()
		s := detached(server)
		if i < n {
			pgs = append(pgs, direct.add(s))
			continue
		}
		pg := signalled.add(nil)
		pgs = append(pgs, pg)
		go func() {
			for range pg.c {
				_ = s.comment("keep-alive")
				written.Done()
			}
		}()
	}
	turn := func(p *pinger) {
		for range keepAliveSlots {
			p.tick()
		}
	}
	var base, other time.Duration
	for b.Loop() {
		t0 := time.Now()
		written.Add(n)
		turn(signalled)
		written.Wait()
		t1 := time.Now()
		turn(direct)
		base, other = base+t1.Sub(t0), other+time.Since(t1)
	}
	benchpair.Report(b, "keep-alive", "signalled", base/n, "direct", other/n)
	for _, p := range []*pinger{direct, signalled} {
		p.mu.Lock()
		p.timer.Stop()
		p.mu.Unlock()
	}
	for _, pg := range pgs[n:] {
		close(pg.c)
	}
}

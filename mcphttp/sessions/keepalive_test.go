package sessions

import (
	"io"
	"maps"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pending(pg *ping) bool {
	select {
	case <-pg.c:
		return true
	default:
		return false
	}
}

// The wheel, turned by hand: a stream is signalled one full turn after it
// joined and every turn after, never twice pending, and not after it
// left; the timer stops with the last stream. One timer serves them all.
func TestPingerWheel(t *testing.T) {
	p := newPinger(time.Hour * keepAliveSlots) // the timer never fires in the test: the test turns it
	a := p.add(nil)
	require.NotNil(t, p.timer, "the timer runs while streams are held")
	timer := p.timer
	for range 5 {
		p.tick()
	}
	b := p.add(nil)
	assert.Same(t, timer, p.timer, "one timer for every stream")
	for i := 5; i < keepAliveSlots-1; i++ {
		p.tick()
		assert.False(t, pending(a), "a: not before a full turn (tick %d)", i+1)
	}
	p.tick()
	assert.True(t, pending(a), "a: one interval after it joined")
	assert.False(t, pending(b))
	for range 4 {
		p.tick()
		assert.False(t, pending(b))
	}
	p.tick()
	assert.True(t, pending(b), "b: one interval after it joined")

	// Two turns unanswered leave one signal pending, not two.
	for range 2 * keepAliveSlots {
		p.tick()
	}
	assert.True(t, pending(a))
	assert.False(t, pending(a))

	p.remove(a)
	p.remove(a) // twice: no harm
	for range keepAliveSlots {
		p.tick()
	}
	assert.False(t, pending(a), "no keep-alive after the stream left")
	assert.True(t, pending(b))
	assert.Equal(t, 1, p.n)
	p.remove(b)
	p.tick()
	assert.Nil(t, p.timer, "the timer stops with the last stream")
	c := p.add(nil)
	assert.NotNil(t, p.timer, "and starts again with the next")
	p.remove(c)
	p.mu.Lock()
	p.timer.Stop()
	p.mu.Unlock()
}

// Many streams, one timer: every stream is signalled within an interval
// by the real timer.
func TestPingerSignalsEveryStream(t *testing.T) {
	p := newPinger(32 * time.Millisecond)
	var pgs []*ping
	for range 1000 {
		pgs = append(pgs, p.add(nil))
	}
	for i, pg := range pgs {
		select {
		case <-pg.c:
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %d: no keep-alive", i)
		}
	}
	for _, pg := range pgs {
		p.remove(pg)
	}
	assert.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.timer == nil
	}, 10*time.Second, time.Millisecond, "the timer stops once the wheel is empty")
}

// tcpPair returns the two ends of a loopback TCP connection, the server's
// first; small buffers, so that a client that does not read blocks the
// server's writes soon.
func tcpPair(t testing.TB, ln net.Listener) (net.Conn, net.Conn) {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server := <-accepted
	require.NotNil(t, server)
	require.NoError(t, client.(*net.TCPConn).SetReadBuffer(4096))
	require.NoError(t, server.(*net.TCPConn).SetWriteBuffer(4096))
	t.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
	})
	return server, client
}

// detached returns a stream output attached to conn, as sse.detach leaves
// it.
func detached(conn net.Conn) *sse {
	s := &sse{}
	s.attach(conn)
	return s
}

// readKeepAlive reads one keep-alive chunk from a detached stream's client.
func readKeepAlive(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	got := make([]byte, len(keepAliveChunk))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, string(keepAliveChunk), string(got))
}

// The wheel writes a detached TCP stream's keep-alive itself, without
// waking the stream; a write deadline the stream's messages left behind,
// now past, does not stop it.
func TestKeepAliveWrittenByTheWheel(t *testing.T) {
	if !canRawWrite {
		t.Skip("the stream's goroutine writes every keep-alive on this system")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	server, client := tcpPair(t, ln)
	s := detached(server)
	p := newPinger(time.Hour * keepAliveSlots)
	pg := p.add(s)
	defer p.remove(pg)
	for range keepAliveSlots {
		p.tick()
	}
	readKeepAlive(t, client)
	assert.False(t, pending(pg), "the stream was not woken")

	require.NoError(t, s.message("", []byte(`{}`)))
	require.NoError(t, server.SetWriteDeadline(time.Now().Add(-time.Second)))
	chunk := make([]byte, 64)
	require.NoError(t, client.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := client.Read(chunk)
	require.NoError(t, err)
	assert.Contains(t, string(chunk[:n]), "data: {}")
	assert.True(t, s.keepAlive())
	readKeepAlive(t, client)

	// Once the stream has ended, nothing more.
	s.close()
	assert.True(t, s.keepAlive())
	rest, err := io.ReadAll(client)
	require.NoError(t, err)
	assert.Equal(t, "0\r\n\r\n", string(rest), "the last chunk, and no keep-alive after it")
}

// A keep-alive the wheel wrote in part is finished by the stream's next
// write, or by its end, before anything else: the chunks stay whole.
func TestKeepAliveRestFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	for _, end := range []bool{false, true} {
		server, client := tcpPair(t, ln)
		s := detached(server)
		_, err := server.Write(keepAliveChunk[:5])
		require.NoError(t, err)
		s.rest = keepAliveChunk[5:]
		assert.False(t, s.keepAlive(), "a stream with a rest to write writes it itself")
		if end {
			s.close()
		} else {
			require.NoError(t, s.comment("keep-alive"))
			readKeepAlive(t, client)
			s.close()
		}
		readKeepAlive(t, client)
		rest, err := io.ReadAll(client)
		require.NoError(t, err)
		assert.Equal(t, "0\r\n\r\n", string(rest))
	}
}

// Clients that stop reading never hold the wheel up: streams whose socket
// is full are handed to their goroutines, streams whose own write is
// stuck are passed over, and an honest stream beside them gets its
// keep-alive from the same turn. (A wheel that waited would wait out the
// stuck writes' deadline, streamWriteTimeout.)
func TestKeepAliveStuckClients(t *testing.T) {
	if !canRawWrite {
		t.Skip("the stream's goroutine writes every keep-alive on this system")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	p := newPinger(time.Hour * keepAliveSlots)
	var full, writing []*ping
	var stuck sync.WaitGroup
	var conns []net.Conn
	for i := range 20 {
		server, _ := tcpPair(t, ln) // a client that never reads
		conns = append(conns, server)
		s := detached(server)
		if i%2 == 0 {
			// Its socket is full, and stays full: the kernel may still
			// move what was sent to the client's side (at once, or later
			// on another CPU: receive packet steering), freeing room, so
			// it is filled until a write after a pause finds no room.
			big := make([]byte, 64<<10)
			for refused := 0; refused < 3; {
				n, err := rawWrite(s.raw, big)
				if n == 0 && err != nil {
					require.ErrorIs(t, err, syscall.EAGAIN)
					refused++
					time.Sleep(20 * time.Millisecond)
					continue
				}
				refused = 0
			}
			full = append(full, p.add(s))
			continue
		}
		// Its goroutine is stuck in a write (its deadline: a minute).
		started := make(chan struct{})
		stuck.Go(func() {
			s.mu.Lock()
			close(started)
			_ = server.SetWriteDeadline(time.Now().Add(time.Minute))
			_, _ = server.Write(make([]byte, 8<<20))
			s.mu.Unlock()
		})
		<-started
		writing = append(writing, p.add(s))
	}
	server, client := tcpPair(t, ln)
	honest := p.add(detached(server))

	turned := make(chan struct{})
	go func() {
		for range keepAliveSlots {
			p.tick()
		}
		close(turned)
	}()
	select {
	case <-turned:
	case <-time.After(10 * time.Second):
		t.Fatal("the wheel waits for stuck clients")
	}
	readKeepAlive(t, client)
	assert.False(t, pending(honest))
	for _, pg := range full {
		assert.True(t, pending(pg), "a full socket: the stream's goroutine writes the keep-alive (and meets its deadline)")
	}
	for _, pg := range writing {
		assert.False(t, pending(pg), "a stream that is writing needs no keep-alive")
	}
	for _, pg := range append(append(full, writing...), honest) {
		p.remove(pg)
	}
	for _, c := range conns {
		_ = c.Close() // the stuck writes return
	}
	stuck.Wait()
}

// Refreshes on the wheel, turned by hand with a clock of the test's: a
// stream's refresh runs at the first turn that reaches it once due, and
// again every interval after; a quiet stream (a legacy handler's, with
// keep-alives of its own) is refreshed, never signalled; a session found
// gone closes gone once, and is not asked for again.
func TestPingerRefreshes(t *testing.T) {
	p := newPinger(time.Hour * keepAliveSlots)
	now := time.Unix(1e9, 0)
	p.now = func() time.Time { return now }
	turn := func(n int) {
		for range n {
			now = now.Add(p.turn)
			p.tick()
		}
		require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.refreshers == 0 }, 5*time.Second, time.Millisecond)
	}
	require.False(t, p.refreshes(p.every-1), "a refresh more frequent than a keep-alive is not the wheel's")
	require.True(t, p.refreshes(p.every))

	var mu sync.Mutex
	calls := map[string]int{}
	alive := map[string]bool{"a": true, "q": true, "g": true}
	refresh := func(name string) func(time.Duration) bool {
		return func(time.Duration) bool {
			mu.Lock()
			defer mu.Unlock()
			calls[name]++
			return alive[name]
		}
	}
	count := func(name string) int { mu.Lock(); defer mu.Unlock(); return calls[name] }
	a := p.addRefresh(nil, false, 2*p.every, refresh("a"))
	q := p.addRefresh(nil, true, p.every, refresh("q"))
	turn(keepAliveSlots)
	assert.Equal(t, 0, count("a"), "a: not due before its interval")
	assert.Equal(t, 1, count("q"), "q: due after one interval")
	assert.True(t, pending(a), "a is signalled for its keep-alive")
	assert.False(t, pending(q), "a quiet stream gets no keep-alive")
	turn(keepAliveSlots)
	assert.Equal(t, 1, count("a"))
	assert.Equal(t, 2, count("q"))
	turn(2 * keepAliveSlots)
	assert.Equal(t, 2, count("a"), "every interval")

	g := p.addRefresh(nil, false, p.every, refresh("g"))
	mu.Lock()
	alive["g"] = false
	mu.Unlock()
	turn(keepAliveSlots)
	select {
	case <-g.gone:
	default:
		t.Fatal("a session found gone ends its stream")
	}
	turn(3 * keepAliveSlots)
	assert.Equal(t, 1, count("g"), "not asked for again")
	select {
	case <-a.gone:
		t.Fatal("a live session's stream goes on")
	case <-q.gone:
		t.Fatal("a live session's stream goes on")
	default:
	}
	before := count("a") + count("q")
	p.remove(a)
	p.remove(q)
	p.remove(g)
	turn(4 * keepAliveSlots)
	assert.Equal(t, before, count("a")+count("q"), "no refresh after the stream left")
}

// A store that does not answer: a stuck refresh holds up one lane, not
// the other refreshes of its batch; when every refresh is stuck, at most
// maxRefreshers batches wait and the turns go on, every stream's
// keep-alive on time; once the store answers, every stream is refreshed
// again within one revolution. Each refresh is given a timeout no longer
// than refreshTimeout nor a KeepAlive.
func TestPingerSlowStore(t *testing.T) {
	p := newPinger(time.Hour * keepAliveSlots)
	now := time.Unix(1e9, 0)
	p.now = func() time.Time { return now }
	idle := func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.refreshers == 0 }
	turn := func() { now = now.Add(p.turn); p.tick() }

	var mu sync.Mutex
	counts := map[int]int{}
	var timeouts []time.Duration
	stuckOne := make(chan struct{}) // ping 0's store call
	stuckAll := make(chan struct{}) // closed: every call answers
	allStuck := false
	var pings []*ping
	for i := range 2 * keepAliveSlots { // two streams a slot
		pings = append(pings, p.addRefresh(nil, false, p.every, func(timeout time.Duration) bool {
			mu.Lock()
			counts[i]++
			timeouts = append(timeouts, timeout)
			wait := allStuck
			mu.Unlock()
			if i == 0 {
				<-stuckOne
			}
			if wait {
				<-stuckAll
			}
			return true
		}))
		if i%2 == 1 {
			turn()
		}
	}
	settled := func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.refreshers <= 1 } // ping 0's batch waits
	// Slot 0's batch (pings 0 and 1) went out at the last turn; the other
	// slots' now, at the pace batches end.
	for range keepAliveSlots - 1 {
		turn()
		require.Eventually(t, settled, 5*time.Second, time.Millisecond)
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(counts) == len(pings)
	}, 5*time.Second, time.Millisecond, "ping 0's store call is stuck; the rest of its batch and the other batches are refreshed: %v", counts)
	close(stuckOne)
	require.Eventually(t, idle, 5*time.Second, time.Millisecond)

	mu.Lock()
	allStuck = true
	mu.Unlock()
	for range 2 * keepAliveSlots {
		turn()
	}
	p.mu.Lock()
	assert.Equal(t, maxRefreshers, p.refreshers, "batches under way while the store is stuck: bounded")
	p.mu.Unlock()
	for i, pg := range pings {
		assert.True(t, pending(pg), "stream %d: its keep-alive came on time", i)
	}
	mu.Lock()
	allStuck = false
	before := maps.Clone(counts)
	mu.Unlock()
	close(stuckAll)
	require.Eventually(t, idle, 5*time.Second, time.Millisecond)
	for range keepAliveSlots {
		turn()
		require.Eventually(t, idle, 5*time.Second, time.Millisecond)
	}
	mu.Lock()
	for i := range pings {
		assert.Greater(t, counts[i], before[i], "stream %d: refreshed within a revolution once the store answers", i)
	}
	for _, d := range timeouts {
		assert.True(t, d > 0 && d <= refreshTimeout && d <= p.every, "timeout %v", d)
	}
	mu.Unlock()
	for _, pg := range pings {
		p.remove(pg)
	}
}

package sessions

import (
	"sync"
	"sync/atomic"
	"time"
)

// Keep-alives are scheduled by one timer per Part, not one per stream: a
// wheel of keepAliveSlots slots turns by one slot every KeepAlive /
// keepAliveSlots, and each turn serves the streams of the slot it reaches.
// A stream joins the slot that has just been served, so its first
// keep-alive comes one interval after it opened (less one turn at most),
// and every next one an interval after the last. The process wakes
// keepAliveSlots times per interval whatever the number of streams,
// instead of once per stream, and the timer runs only while streams are
// open.
//
// The turn writes the keep-alive itself where the stream allows it (a
// detached stream on a TCP connection: see sse.keepAlive), with one
// write that never waits: the stream's goroutine stays asleep, and a
// client that stops reading cannot hold the wheel up. Where it cannot (a
// stream kept in its handler, a TLS connection, a socket whose buffer is
// full, a write of the stream's under way), it signals the stream, whose
// goroutine writes the keep-alive as it writes its messages.
const keepAliveSlots = 16

// The wheel also re-checks the sessions of legacy GET streams (see
// refreshInterval) whose refresh is no more frequent than a keep-alive:
// a turn that reaches a stream whose refresh is due hands it to a
// refresher, a goroutine that asks the store for a batch of sessions one
// after the other. A stream's goroutine wakes only when its session is
// gone. At most maxRefreshers batches run at once, each on up to
// refreshLanes goroutines, each refresh given at most refreshTimeout (a
// refresh that times out counts the session alive, as any store failure
// does): a store that answers slowly for some sessions (a shard failing
// over) holds up a lane, not the batch, delays the refreshes of a turn
// at worst (they are due again a KeepAlive later, well within the
// session's idle time), and never the keep-alives.
const (
	maxRefreshers  = 4
	refreshLanes   = 8
	refreshTimeout = 5 * time.Second
)

// pinger is a Part's keep-alive wheel.
type pinger struct {
	turn  time.Duration // KeepAlive / keepAliveSlots
	every time.Duration // KeepAlive: how often a turn reaches a slot
	now   func() time.Time

	mu         sync.Mutex
	slots      [keepAliveSlots]map[*ping]struct{}
	cur        int         // the slot served last
	n          int         // streams held
	timer      *time.Timer // nil while no stream is held and no turn is due
	refreshers int         // batches of refreshes under way
}

// ping is one stream's place on the wheel: c receives a value when the
// stream must write a keep-alive itself (one pending at most).
type ping struct {
	c    chan struct{}
	slot int
	w    keepAliver // nil: always through c
	// quiet: no keep-alives (a legacy handler's stream has its own); the
	// stream is on the wheel for its refresh only.
	quiet bool

	// refresh, when not nil, tells the store that the stream's session
	// is in use, within the time given, and reports whether it lives on;
	// run every refreshEvery, by a refresher. gone is closed when it
	// reported false.
	refresh      func(timeout time.Duration) bool
	refreshEvery time.Duration
	gone         chan struct{}
	// Under the pinger's lock: when the next refresh is due; whether gone
	// is closed.
	due    time.Time
	closed bool
}

// keepAliver is a stream's output that the wheel may write a keep-alive
// to directly.
type keepAliver interface {
	// keepAlive writes a keep-alive without ever waiting, or does nothing
	// when none is needed, and reports true; false when the stream's
	// goroutine must write it.
	keepAlive() bool
}

func newPinger(every time.Duration) *pinger {
	turn := max(every/keepAliveSlots, time.Millisecond)
	return &pinger{turn: turn, every: turn * keepAliveSlots, now: time.Now}
}

// add puts a stream on the wheel; w, if not nil, is its output, which the
// wheel tries first.
func (p *pinger) add(w keepAliver) *ping {
	return p.addPing(&ping{c: make(chan struct{}, 1), w: w})
}

// refreshes reports whether the wheel can run a refresh every d: it
// reaches each stream once every KeepAlive, so d must be no shorter.
func (p *pinger) refreshes(d time.Duration) bool { return d >= p.every }

// addRefresh puts a stream on the wheel with its session's refresh, run
// every d (see refreshes); quiet: no keep-alives.
func (p *pinger) addRefresh(w keepAliver, quiet bool, d time.Duration, refresh func(timeout time.Duration) bool) *ping {
	pg := &ping{c: make(chan struct{}, 1), w: w, quiet: quiet, refresh: refresh, refreshEvery: d,
		gone: make(chan struct{}), due: p.now().Add(d)}
	return p.addPing(pg)
}

func (p *pinger) addPing(pg *ping) *ping {
	p.mu.Lock()
	defer p.mu.Unlock()
	pg.slot = p.cur
	if p.slots[pg.slot] == nil {
		p.slots[pg.slot] = map[*ping]struct{}{}
	}
	p.slots[pg.slot][pg] = struct{}{}
	p.n++
	if p.timer == nil {
		p.timer = time.AfterFunc(p.turn, p.tick)
	}
	return pg
}

// remove takes a stream off the wheel. A turn under way may still serve
// it once: its output must refuse writes once the stream has ended (see
// sse.close).
func (p *pinger) remove(pg *ping) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.slots[pg.slot][pg]; ok {
		delete(p.slots[pg.slot], pg)
		p.n--
	}
}

// tick turns the wheel by one slot and serves its streams, outside the
// wheel's lock (streams come and go meanwhile); the timer stops when the
// wheel is empty.
func (p *pinger) tick() {
	p.mu.Lock()
	p.cur = (p.cur + 1) % keepAliveSlots
	due := make([]*ping, 0, len(p.slots[p.cur]))
	var refresh []*ping
	now := p.now()
	for pg := range p.slots[p.cur] {
		if !pg.quiet {
			due = append(due, pg)
		}
		if pg.refresh != nil && !pg.closed && !now.Before(pg.due) && p.refreshers < maxRefreshers {
			refresh = append(refresh, pg)
			pg.due = now.Add(pg.refreshEvery)
		}
	}
	if len(refresh) > 0 {
		p.refreshers++
		go p.refreshAll(refresh)
	}
	if p.n == 0 {
		p.timer = nil
	} else {
		p.timer.Reset(p.turn)
	}
	p.mu.Unlock()
	for _, pg := range due {
		if pg.w != nil && pg.w.keepAlive() {
			continue
		}
		select {
		case pg.c <- struct{}{}:
		default: // the last one is still pending
		}
	}
}

// refreshAll runs the refreshes of a turn on up to refreshLanes
// goroutines, and ends the streams whose sessions are gone.
func (p *pinger) refreshAll(batch []*ping) {
	defer func() {
		p.mu.Lock()
		p.refreshers--
		p.mu.Unlock()
	}()
	timeout := min(refreshTimeout, p.every)
	var next atomic.Int64
	lane := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(batch) {
				return
			}
			pg := batch[i]
			if pg.refresh(timeout) {
				continue
			}
			p.mu.Lock()
			if !pg.closed {
				pg.closed = true
				close(pg.gone)
			}
			p.mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for range min(len(batch), refreshLanes) - 1 {
		wg.Go(lane)
	}
	lane()
	wg.Wait()
}

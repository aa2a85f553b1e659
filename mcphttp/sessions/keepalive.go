package sessions

import (
	"sync"
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

// pinger is a Part's keep-alive wheel.
type pinger struct {
	turn time.Duration // KeepAlive / keepAliveSlots

	mu    sync.Mutex
	slots [keepAliveSlots]map[*ping]struct{}
	cur   int         // the slot served last
	n     int         // streams held
	timer *time.Timer // nil while no stream is held and no turn is due
}

// ping is one stream's place on the wheel: c receives a value when the
// stream must write a keep-alive itself (one pending at most).
type ping struct {
	c    chan struct{}
	slot int
	w    keepAliver // nil: always through c
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
	return &pinger{turn: max(every/keepAliveSlots, time.Millisecond)}
}

// add puts a stream on the wheel; w, if not nil, is its output, which the
// wheel tries first.
func (p *pinger) add(w keepAliver) *ping {
	pg := &ping{c: make(chan struct{}, 1), w: w}
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
	for pg := range p.slots[p.cur] {
		due = append(due, pg)
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

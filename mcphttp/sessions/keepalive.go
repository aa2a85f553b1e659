package sessions

import (
	"sync"
	"time"
)

// Keep-alives are scheduled by one timer per Part, not one per stream: a
// wheel of keepAliveSlots slots turns by one slot every KeepAlive /
// keepAliveSlots, and each turn signals the streams of the slot it reaches,
// which then write their keep-alive comment. A stream joins the slot that
// has just been signalled, so its first keep-alive comes one interval
// after it opened (less one turn at most), and every next one an interval
// after the last. The process wakes keepAliveSlots times per interval
// whatever the number of streams, instead of once per stream, and the
// timer runs only while streams are open.
const keepAliveSlots = 16

// pinger is a Part's keep-alive wheel.
type pinger struct {
	turn time.Duration // KeepAlive / keepAliveSlots

	mu    sync.Mutex
	slots [keepAliveSlots]map[*ping]struct{}
	cur   int         // the slot signalled last
	n     int         // streams held
	timer *time.Timer // nil while no stream is held and no turn is due
}

// ping is one stream's place on the wheel: c receives a value when a
// keep-alive is due (one pending at most).
type ping struct {
	c    chan struct{}
	slot int
}

func newPinger(every time.Duration) *pinger {
	return &pinger{turn: max(every/keepAliveSlots, time.Millisecond)}
}

// add puts a stream on the wheel.
func (p *pinger) add() *ping {
	pg := &ping{c: make(chan struct{}, 1)}
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

// remove takes a stream off the wheel.
func (p *pinger) remove(pg *ping) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.slots[pg.slot][pg]; ok {
		delete(p.slots[pg.slot], pg)
		p.n--
	}
}

// tick turns the wheel by one slot and signals its streams; the timer
// stops when the wheel is empty.
func (p *pinger) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = (p.cur + 1) % keepAliveSlots
	for pg := range p.slots[p.cur] {
		select {
		case pg.c <- struct{}{}:
		default: // the last one is still pending
		}
	}
	if p.n == 0 {
		p.timer = nil
		return
	}
	p.timer.Reset(p.turn)
}

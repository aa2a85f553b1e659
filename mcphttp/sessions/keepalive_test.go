package sessions

import (
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
	a := p.add()
	require.NotNil(t, p.timer, "the timer runs while streams are held")
	timer := p.timer
	for range 5 {
		p.tick()
	}
	b := p.add()
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
	c := p.add()
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
		pgs = append(pgs, p.add())
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

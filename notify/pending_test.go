package notify

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// switchLog is a MemoryLog that fails while down is set.
type switchLog struct {
	*MemoryLog
	down atomic.Bool
}

func (l *switchLog) Append(ctx context.Context, key string, e Event) (string, error) {
	if l.down.Load() {
		return "", errors.New("down")
	}
	return l.MemoryLog.Append(ctx, key, e)
}

// switchBroker is a memBroker whose Publish fails while down is set.
type switchBroker struct {
	memBroker
	down   atomic.Bool
	refuse atomic.Pointer[string] // a URI it fails to send, while set
}

func (b *switchBroker) Publish(ctx context.Context, e Event) error {
	if r := b.refuse.Load(); b.down.Load() || r != nil && *r == e.URI {
		return errors.New("down")
	}
	return b.memBroker.Publish(ctx, e)
}

// lockedBuffer is a log sink safe for the hub's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// nextEvent waits for s's next event.
func nextEvent(t *testing.T, s *Subscription) Event {
	t.Helper()
	select {
	case e := <-s.Events():
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

// Events published while the shared log and the broker are down (Redis
// down) are delivered at once on the publishing instance, and to every
// other instance, with an id, once both are back: nothing is dropped
// silently. Identical events wait as one. Before the change the other
// instance got none.
func TestHubSendsAgainWhatFailed(t *testing.T) {
	ctx := context.Background()
	b := &switchBroker{memBroker: memBroker{ready: make(chan struct{}, 2)}}
	elog := &switchLog{MemoryLog: NewMemoryLog(MemoryLogOptions{})}
	one, two := New(Options{Broker: b, Log: elog}), New(Options{Broker: b, Log: elog})
	defer one.Close()
	defer two.Close()
	<-b.ready
	<-b.ready
	here, there := one.Subscribe("bob"), two.Subscribe("bob")

	elog.down.Store(true)
	b.down.Store(true)
	one.ResourceUpdated(ctx, "bob", "docs://a")
	one.ResourceUpdated(ctx, "bob", "docs://a")
	one.ResourceUpdated(ctx, "bob", "docs://b")
	for _, u := range []string{"a", "a", "b"} {
		assert.Equal(t, Event{Subject: "bob", Kind: ResourceUpdated, URI: "docs://" + u}, nextEvent(t, here), "delivered here at once, without an id")
	}
	assert.Empty(t, drain(there))

	elog.down.Store(false)
	b.down.Store(false)
	for _, u := range []string{"a", "b"} {
		e := nextEvent(t, there)
		assert.True(t, ValidID(e.ID), "with an id")
		e.ID = ""
		assert.Equal(t, Event{Subject: "bob", Kind: ResourceUpdated, URI: "docs://" + u}, e)
	}
	for range 2 {
		nextEvent(t, here) // again, with its id
	}
	assert.Empty(t, drain(there), "identical events waited as one")
}

// An event the log recorded but the broker could not send (SPUBLISH
// failing during a stall) is recorded and sent again, with an id newer
// than those of the events sent meanwhile: a listener cut off then
// catches up from the last id it delivered, and finds it after that.
func TestHubPublishesAgainWhatTheBrokerRefused(t *testing.T) {
	ctx := context.Background()
	b := &switchBroker{memBroker: memBroker{ready: make(chan struct{}, 2)}}
	elog := NewMemoryLog(MemoryLogOptions{})
	one, two := New(Options{Broker: b, Log: elog}), New(Options{Broker: b, Log: elog})
	defer one.Close()
	defer two.Close()
	<-b.ready
	<-b.ready
	there := two.Subscribe("bob")
	first := "docs://first"
	b.refuse.Store(&first) // a stall, for this event's attempts
	one.ResourceUpdated(ctx, "bob", first)
	assert.Empty(t, drain(there))
	one.ResourceUpdated(ctx, "bob", "docs://second")
	second := nextEvent(t, there)
	require.Equal(t, "docs://second", second.URI)
	b.refuse.Store(nil)
	again := nextEvent(t, there)
	assert.Equal(t, first, again.URI, "sent again")
	evs, ok, err := two.Since(ctx, "bob", second.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, evs, 1)
	assert.Equal(t, again, evs[0], "recorded again after what was sent meanwhile")
}

// A hub that closes with events still waiting logs them as lost; past the
// bound, an event is logged as lost at once.
func TestHubLogsWhatItGivesUp(t *testing.T) {
	var sink lockedBuffer
	b := &switchBroker{memBroker: memBroker{ready: make(chan struct{}, 1)}}
	b.down.Store(true)
	h := New(Options{Broker: b, Log: failingLog{}, Logger: slog.New(slog.NewTextHandler(&sink, nil))})
	<-b.ready
	ctx := context.Background()
	for i := range maxPending + 1 {
		h.ResourceUpdated(ctx, "bob", "docs://"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))
	}
	require.Contains(t, sink.String(), "lost")
	h.Close()
	assert.Contains(t, sink.String(), "events=4096")
}

// A Missed reaches the subscriptions of its subject, or of every subject
// when it has none; Publish drops it (nothing crosses the wire).
func TestHubDeliversMissed(t *testing.T) {
	h := New(Options{})
	defer h.Close()
	alice, bob := h.Subscribe("alice"), h.Subscribe("bob")
	h.deliver(Event{Subject: "alice", Kind: Missed})
	assert.Equal(t, []Event{{Subject: "alice", Kind: Missed}}, drain(alice))
	assert.Empty(t, drain(bob))
	h.deliver(Event{Kind: Missed})
	assert.Equal(t, []Event{{Subject: "alice", Kind: Missed}}, drain(alice))
	assert.Equal(t, []Event{{Subject: "bob", Kind: Missed}}, drain(bob))
	h.deliver(Event{Kind: Missed, URI: "docs://x"})
	h.Publish(context.Background(), Event{Subject: "bob", Kind: Missed})
	assert.Empty(t, drain(bob))
}

// An event the log could not record but the broker sent is delivered
// everywhere at once, without an id, and recorded when the log is back
// (a stream resuming from before it is given it), not sent again.
func TestHubRecordsLaterWhatTheLogRefused(t *testing.T) {
	ctx := context.Background()
	b := &switchBroker{memBroker: memBroker{ready: make(chan struct{}, 2)}}
	elog := &switchLog{MemoryLog: NewMemoryLog(MemoryLogOptions{})}
	one, two := New(Options{Broker: b, Log: elog}), New(Options{Broker: b, Log: elog})
	defer one.Close()
	defer two.Close()
	<-b.ready
	<-b.ready
	there := two.Subscribe("bob")
	mark, err := two.Mark(ctx, "bob")
	require.NoError(t, err)
	elog.down.Store(true)
	one.ResourceUpdated(ctx, "bob", "docs://a")
	assert.Equal(t, Event{Subject: "bob", Kind: ResourceUpdated, URI: "docs://a"}, nextEvent(t, there), "delivered at once, without an id")
	elog.down.Store(false)
	require.Eventually(t, func() bool {
		evs, ok, err := two.Since(ctx, "bob", mark)
		return err == nil && ok && len(evs) == 1 && evs[0].URI == "docs://a"
	}, 10*time.Second, 5*time.Millisecond, "recorded later")
	b.mu.Lock()
	assert.Equal(t, 1, b.published, "not sent again")
	b.mu.Unlock()
	assert.Empty(t, drain(there))
}

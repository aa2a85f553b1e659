package notify

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
)

func mustAppend(t *testing.T, l EventLog, key string, e Event) string {
	t.Helper()
	id, err := l.Append(context.Background(), key, e)
	require.NoError(t, err)
	require.True(t, ValidID(id), "id %q", id)
	return id
}

func TestMemoryLogSince(t *testing.T) {
	ctx := context.Background()
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	l := NewMemoryLog(MemoryLogOptions{Events: 3, Age: time.Minute, Now: clk.Now})
	a1 := mustAppend(t, l, "alice", Event{Kind: ListChanged})
	b1 := mustAppend(t, l, "bob", Event{Kind: ListChanged})
	a2 := mustAppend(t, l, "alice", Event{Kind: ResourceUpdated, URI: "docs://documents/1"})
	a3 := mustAppend(t, l, "alice", Event{Kind: ListChanged})

	evs, ok, err := l.Since(ctx, "alice", a1)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []Event{
		{Subject: "alice", Kind: ResourceUpdated, URI: "docs://documents/1", ID: a2},
		{Subject: "alice", Kind: ListChanged, ID: a3},
	}, evs)

	evs, ok, _ = l.Since(ctx, "alice", a3)
	assert.True(t, ok, "the latest id: nothing missed")
	assert.Empty(t, evs)

	for name, id := range map[string]string{
		"another key's id (bob's, presented as alice's)": b1,
		"malformed":                        "nonsense",
		"another log's (another process)":  NewMemoryLog(MemoryLogOptions{}).epoch + "-1",
		"a sequence number never given":    l.epoch + "-99",
		"leading zero (one event, one id)": l.epoch + "-02",
		"empty":                            "",
	} {
		evs, ok, err := l.Since(ctx, "alice", id)
		assert.NoError(t, err, name)
		assert.False(t, ok, name)
		assert.Empty(t, evs, name)
	}

	// Bounded per key: a fourth event drops the first, whose id is now too old.
	a4 := mustAppend(t, l, "alice", Event{Kind: ListChanged})
	_, ok, _ = l.Since(ctx, "alice", a1)
	assert.False(t, ok, "dropped: too old")
	evs, ok, _ = l.Since(ctx, "alice", a2)
	assert.True(t, ok)
	assert.Len(t, evs, 2)

	// Bounded in age.
	clk.Advance(time.Minute)
	_, ok, _ = l.Since(ctx, "alice", a4)
	assert.False(t, ok, "older than Age")
}

func TestMemoryLogKeysBound(t *testing.T) {
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	l := NewMemoryLog(MemoryLogOptions{Keys: 2, Age: time.Minute, Now: clk.Now})
	a := mustAppend(t, l, "alice", Event{Kind: ListChanged})
	b := mustAppend(t, l, "bob", Event{Kind: ListChanged})
	mustAppend(t, l, "alice", Event{Kind: ListChanged}) // alice is now the most recent
	mustAppend(t, l, "carol", Event{Kind: ListChanged}) // makes room: bob goes
	_, ok, _ := l.Since(context.Background(), "bob", b)
	assert.False(t, ok)
	_, ok, _ = l.Since(context.Background(), "alice", a)
	assert.True(t, ok)
	assert.Len(t, l.keys, 2)

	clk.Advance(time.Minute)
	mustAppend(t, l, "dave", Event{Kind: ListChanged})
	assert.Len(t, l.keys, 1, "keys whose events are all too old are swept")
	_, err := l.Append(context.Background(), "", Event{Kind: ListChanged})
	assert.Error(t, err)
}

// failingLog is a log whose engine is out of reach.
type failingLog struct{}

func (failingLog) Append(context.Context, string, Event) (string, error) {
	return "", errors.New("down")
}

func (failingLog) Since(context.Context, string, string) ([]Event, bool, error) {
	return nil, false, errors.New("down")
}

// TestHubAssignsIDs: the hub records every event it publishes; the id goes
// to every instance through the broker; Since is scoped to the key.
func TestHubAssignsIDs(t *testing.T) {
	ctx := context.Background()
	b := &memBroker{ready: make(chan struct{}, 2)}
	shared := NewMemoryLog(MemoryLogOptions{})
	one, two := New(Options{Broker: b, Log: shared}), New(Options{Broker: b, Log: shared})
	defer one.Close()
	defer two.Close()
	<-b.ready
	<-b.ready
	onTwo := two.Subscribe("alice")
	one.ListChanged(ctx, "alice")
	one.ResourceUpdated(ctx, "bob", "docs://documents/b")
	one.ResourceUpdated(ctx, "alice", "docs://documents/1")
	first, second := <-onTwo.Events(), <-onTwo.Events()
	require.NotEmpty(t, first.ID)
	require.NotEmpty(t, second.ID)

	evs, ok, err := two.Since(ctx, "alice", first.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []Event{second}, evs, "what a stream on the other instance missed, with the same id")
	_, ok, _ = two.Since(ctx, "bob", first.ID)
	assert.False(t, ok, "alice's id is not bob's")
	_, ok, _ = two.Since(ctx, "", first.ID)
	assert.False(t, ok)
}

func TestHubDeliversWhenTheLogFails(t *testing.T) {
	h := New(Options{Log: failingLog{}})
	defer h.Close()
	s := h.Subscribe("alice")
	h.ListChanged(context.Background(), "alice")
	e := <-s.Events()
	assert.Equal(t, Event{Subject: "alice", Kind: ListChanged}, e, "delivered live, without an id")
	_, ok, err := h.Since(context.Background(), "alice", "x-1")
	assert.Error(t, err)
	assert.False(t, ok)
}

// TestHubDropsInvalidIDs: an id a broker's message carries that no log
// gives (a newline, say, which would split an SSE field) is dropped.
func TestHubDropsInvalidIDs(t *testing.T) {
	h := New(Options{})
	defer h.Close()
	s := h.Subscribe("alice")
	for _, id := range []string{"a\nid: 5", "with space", string(make([]byte, MaxIDLen+1))} {
		h.deliver(Event{Subject: "alice", Kind: ListChanged, ID: id})
		assert.Empty(t, (<-s.Events()).ID, "%q", id)
	}
	h.deliver(Event{Subject: "alice", Kind: ListChanged, ID: "ok-1"})
	assert.Equal(t, "ok-1", (<-s.Events()).ID)
}

func BenchmarkMemoryLog(b *testing.B) {
	l := NewMemoryLog(MemoryLogOptions{})
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = l.Append(ctx, keys[i%len(keys)], Event{Kind: ListChanged})
		i++
	}
}

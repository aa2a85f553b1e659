package pgnotify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

// Two instances (two pools, two brokers, two hubs) on one channel: an
// event published on either reaches its subject's subscriptions on both,
// and nobody else's; an instance on another channel hears nothing.
// TestCarriesIDs: the id the publishing hub's log gave an event reaches
// every instance with it.
func TestCarriesIDs(t *testing.T) {
	channel := testChannel(t)
	a, b := newInstance(t, channel, Options{}), newInstance(t, channel, Options{})
	onA, onB := a.hub.Subscribe("bob"), b.hub.Subscribe("bob")
	defer onA.Close()
	defer onB.Close()
	a.hub.ResourceUpdated(context.Background(), "bob", "docs://documents/1")
	fromA, fromB := nextWithID(t, onA), nextWithID(t, onB)
	require.True(t, notify.ValidID(fromA.ID), "%+v", fromA)
	assert.Equal(t, fromA, fromB, "the same id on every instance")
}

func TestTwoInstances(t *testing.T) {
	channel := testChannel(t)
	a, b := newInstance(t, channel, Options{}), newInstance(t, channel, Options{})
	other := newInstance(t, testChannel(t), Options{}) // another application
	ctx := context.Background()

	bobA, bobB := a.hub.Subscribe("bob"), b.hub.Subscribe("bob")
	carolB, aliceA := b.hub.Subscribe("carol"), a.hub.Subscribe("alice")
	bobOther := other.hub.Subscribe("bob")
	for _, s := range []*notify.Subscription{bobA, bobB, carolB, aliceA, bobOther} {
		defer s.Close()
	}

	a.hub.ListChanged(ctx, "bob")
	assert.Equal(t, listChanged("bob"), next(t, bobB), "from A to B")
	assert.Equal(t, listChanged("bob"), next(t, bobA), "from A to A: through the database too")
	uri := "docs://documents/q3Xv0c7mS8e2N9Rk1pLwGA"
	b.hub.ResourceUpdated(ctx, "alice", uri)
	assert.Equal(t, updated("alice", uri), next(t, aliceA), "from B to A")

	// Markers, published after everything else: the first event each
	// subscription sees next is its marker, so nothing else reached it.
	// (Notifications arrive in commit order.)
	b.hub.ResourceUpdated(ctx, "carol", "marker://carol")
	a.hub.ResourceUpdated(ctx, "bob", "marker://bob")
	a.hub.ResourceUpdated(ctx, "alice", "marker://alice")
	other.hub.ResourceUpdated(ctx, "bob", "marker://other")
	assert.Equal(t, updated("carol", "marker://carol"), next(t, carolB), "carol got nothing before")
	assert.Equal(t, updated("bob", "marker://bob"), next(t, bobA), "alice's event did not reach bob")
	assert.Equal(t, updated("bob", "marker://bob"), next(t, bobB))
	assert.Equal(t, updated("alice", "marker://alice"), next(t, aliceA))
	assert.Equal(t, updated("bob", "marker://other"), next(t, bobOther), "another channel hears nothing")

	for _, in := range []*instance{a, b} {
		s := in.broker.Stats()
		assert.Equal(t, uint64(1), s.Connects)
		assert.Equal(t, uint64(0), s.Malformed)
	}
	waitStats(t, a.broker, func(s Stats) bool { return s.Delivered == 5 }, "A delivers the five events of its channel to its hub")
}

// Payloads that are not valid events are ignored and logged by size only;
// the listener carries on with the next one.
func TestMalformedPayloadsIgnored(t *testing.T) {
	channel := testChannel(t)
	logs := &syncBuffer{}
	in := newInstance(t, channel, Options{Logger: bufferLogger(logs)})
	bob := in.hub.Subscribe("bob")
	defer bob.Close()
	ctx := context.Background()

	bad := []string{
		``,
		`SECRET-not-json`,
		`null`,
		`["SECRET-array"]`,
		`"SECRET-string"`,
		`{"subject":"bob"}`,
		`{"subject":"bob","kind":"SECRET-kind"}`,
		`{"subject":"bob","kind":"resource_updated"}`,
		`{"subject":"bob","kind":"list_changed","uri":"SECRET-uri"}`,
		`{"subject":"","kind":"list_changed"}`,
		`{"kind":"list_changed"}`,
		`{"subject":"bob","kind":1}`,
		`{"subject":"bob","kind":"list_changed"} SECRET-trailing`,
		`{"subject":"bob","kind":"list_changed"`,
	}
	raw, err := pgx.Connect(ctx, postgresDSN(t))
	require.NoError(t, err)
	defer raw.Close(ctx)
	for _, p := range bad {
		_, err := raw.Exec(ctx, "SELECT pg_notify($1, $2)", channel, p)
		require.NoError(t, err)
	}
	// The same connection then publishes a valid event: it is the first
	// (and only) one bob receives.
	_, err = raw.Exec(ctx, "SELECT pg_notify($1, $2)", channel, `{"subject":"bob","kind":"list_changed","future":"ignored"}`)
	require.NoError(t, err)
	assert.Equal(t, listChanged("bob"), next(t, bob))
	in.hub.ResourceUpdated(ctx, "bob", "marker://bob")
	assert.Equal(t, updated("bob", "marker://bob"), next(t, bob))

	assert.Equal(t, uint64(len(bad)), in.broker.Stats().Malformed)
	assert.Equal(t, uint64(2), in.broker.Stats().Delivered)
	assert.Equal(t, len(bad), strings.Count(logs.String(), "ignored a malformed notification"))
	assert.NotContains(t, logs.String(), "SECRET", "payloads are never logged")
}

// Killing the listener's connection (a restart, a failover) is survived:
// the broker reconnects, listens again and delivers what follows.
func TestReconnectAfterTerminate(t *testing.T) {
	channel := testChannel(t)
	logs := &syncBuffer{}
	in := newInstance(t, channel, Options{Logger: bufferLogger(logs), MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	bob := in.hub.Subscribe("bob")
	defer bob.Close()
	ctx := context.Background()
	in.hub.ListChanged(ctx, "bob")
	require.Equal(t, listChanged("bob"), next(t, bob))

	for round := uint64(1); round <= 2; round++ {
		require.Equal(t, 1, terminateListeners(t, in.broker), "exactly one listener connection")
		waitStats(t, in.broker, func(s Stats) bool { return s.Connects == round+1 }, "the listener never came back")
		assert.Equal(t, notify.Event{Subject: "bob", Kind: notify.Missed}, next(t, bob), "round %d: told it may have missed events", round)
		uri := "docs://documents/after-reconnect"
		in.hub.ResourceUpdated(ctx, "bob", uri)
		assert.Equal(t, updated("bob", uri), next(t, bob), "round %d", round)
	}
	assert.Contains(t, logs.String(), "listener connection lost")
	assert.Contains(t, logs.String(), "listening again")
}

// terminateListeners kills the backends listening on b's channel and
// returns how many there were.
func terminateListeners(t testing.TB, b *Broker) int {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, postgresDSN(t))
	require.NoError(t, err)
	defer admin.Close(ctx)
	var n int
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE query = $1 AND pid <> pg_backend_pid()`, b.listen).Scan(&n))
	return n
}

// listeners counts the backends listening on b's channel.
func listeners(t testing.TB, b *Broker) int {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, postgresDSN(t))
	require.NoError(t, err)
	defer admin.Close(ctx)
	var n int
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query = $1`, b.listen).Scan(&n))
	return n
}

// Listen returns ctx's error when ctx ends, whether it is listening or
// waiting to reconnect, and leaves no connection behind.
func TestListenReturnsOnCancel(t *testing.T) {
	t.Run("listening", func(t *testing.T) {
		b, err := New(newPool(t), Options{Channel: testChannel(t)})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Listen(ctx, func(notify.Event) {}) }()
		waitStats(t, b, func(s Stats) bool { return s.Connects == 1 }, "never listened")
		require.Equal(t, 1, listeners(t, b))
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("Listen did not return")
		}
		// The connection was closed, not leaked (the server notices the
		// goodbye asynchronously).
		deadline := time.Now().Add(10 * time.Second)
		for listeners(t, b) != 0 {
			require.True(t, time.Now().Before(deadline), "the listener's connection is still open")
			time.Sleep(5 * time.Millisecond)
		}
	})
	t.Run("reconnecting", func(t *testing.T) {
		// A closed pool: every attempt fails at once, Listen backs off.
		pool := lazyPool(t)
		pool.Close()
		logs := &syncBuffer{}
		b, err := New(pool, Options{Logger: bufferLogger(logs), MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Listen(ctx, func(notify.Event) {}) }()
		for strings.Count(logs.String(), "listener connection lost") < 3 {
			select {
			case err := <-done:
				t.Fatalf("Listen returned %v before ctx ended", err)
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("Listen did not return")
		}
		assert.Equal(t, uint64(0), b.Stats().Connects)
	})
}

// The payload limit is PostgreSQL's: 7999 bytes go through, 8000 are
// refused by Publish before the database would refuse them.
func TestPayloadLimitAgainstServer(t *testing.T) {
	in := newInstance(t, testChannel(t), Options{})
	sub := in.hub.Subscribe("bob")
	defer sub.Close()
	ctx := context.Background()
	overhead := len(`{"subject":"bob","kind":"resource_updated","uri":""}`)
	longest := "docs://" + strings.Repeat("x", MaxPayloadBytes-overhead-len("docs://"))
	payload, err := encodePayload(updated("bob", longest))
	require.NoError(t, err)
	require.Len(t, payload, MaxPayloadBytes)

	require.NoError(t, in.broker.Publish(ctx, updated("bob", longest)))
	assert.Equal(t, updated("bob", longest), next(t, sub))
	assert.ErrorIs(t, in.broker.Publish(ctx, updated("bob", longest+"x")), ErrPayloadTooLarge)

	// What Publish refuses, PostgreSQL would have refused too.
	_, err = in.pool.Exec(ctx, "SELECT pg_notify($1, $2)", in.broker.Channel(), string(payload)+"x")
	assert.Error(t, err, "PostgreSQL's own limit")
}

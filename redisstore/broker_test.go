package redisstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
)

// instance is one process of a fleet: a broker and the hub using it.
type instance struct {
	broker *redisstore.Broker
	hub    *notify.Hub
}

func newInstance(t testing.TB, client redis.UniversalClient, o redisstore.BrokerOptions) *instance {
	t.Helper()
	return newInstanceQueue(t, client, o, 0)
}

// newInstanceQueue is newInstance with the hub's QueueSize.
func newInstanceQueue(t testing.TB, client redis.UniversalClient, o redisstore.BrokerOptions, queue int) *instance {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := redisstore.NewBroker(client, o)
	require.NoError(t, err)
	no := notify.Options{Broker: b, Logger: o.Logger, QueueSize: queue}
	if o.Log != nil {
		no.Log = o.Log
	}
	hub := notify.New(no)
	t.Cleanup(hub.Close)
	channels := uint64(1)
	if _, ok := client.(*redis.ClusterClient); ok {
		channels = redisstore.BrokerShards // one subscription each
	}
	waitStats(t, b, func(s redisstore.BrokerStats) bool { return s.Connects >= channels }, "the broker never subscribed")
	return &instance{broker: b, hub: hub}
}

func listChanged(s string) notify.Event { return notify.Event{Subject: s, Kind: notify.ListChanged} }
func missed(s string) notify.Event      { return notify.Event{Subject: s, Kind: notify.Missed} }
func updated(s, uri string) notify.Event {
	return notify.Event{Subject: s, Kind: notify.ResourceUpdated, URI: uri}
}

// next returns the subscription's next event, failing after 10 s,
// without its id (TestBrokerCarriesIDs checks those).
func next(t testing.TB, s *notify.Subscription) notify.Event {
	t.Helper()
	select {
	case e := <-s.Events():
		e.ID = ""
		return e
	case <-s.Done():
		t.Fatal("subscription ended")
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return notify.Event{}
}

func waitStats(t testing.TB, b *redisstore.Broker, ok func(redisstore.BrokerStats) bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(b.Stats()) {
		require.True(t, time.Now().Before(deadline), "%s: %+v", msg, b.Stats())
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNewBrokerRejects(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	_, err := redisstore.NewBroker(nil, redisstore.BrokerOptions{})
	assert.Error(t, err)
	for name, o := range map[string]redisstore.BrokerOptions{
		"space in channel":     {Channel: "a b"},
		"control in channel":   {Channel: "a\nb"},
		"non-ASCII channel":    {Channel: "café"},
		"long channel":         {Channel: strings.Repeat("c", 201)},
		"negative backoff":     {MinBackoff: -1},
		"max below min":        {MinBackoff: time.Second, MaxBackoff: time.Millisecond},
		"negative healthcheck": {HealthCheck: -1},
	} {
		_, err := redisstore.NewBroker(client, o)
		assert.Error(t, err, name)
	}
	b, err := redisstore.NewBroker(client, redisstore.BrokerOptions{})
	require.NoError(t, err)
	assert.Equal(t, redisstore.DefaultChannel, b.Channel())
	// Bad events fail before touching Redis (which is not there).
	assert.ErrorIs(t, b.Publish(context.Background(), listChanged("")), redisstore.ErrInvalidEvent)
	assert.ErrorIs(t, b.Publish(context.Background(), listChanged(strings.Repeat("x", 9000))), redisstore.ErrPayloadTooLarge)
	assert.Error(t, b.Publish(context.Background(), listChanged("bob")), "no Redis")
}

// Two instances on one channel: an event published on either reaches its
// subject's subscriptions on both, and nobody else's; an instance on
// another channel hears nothing.
func TestBrokerTwoInstances(t *testing.T) {
	srv, client := startRedis(t)
	a := newInstance(t, client, redisstore.BrokerOptions{Channel: "app:notify"})
	b := newInstance(t, srv.Client(t), redisstore.BrokerOptions{Channel: "app:notify"})
	other := newInstance(t, srv.Client(t), redisstore.BrokerOptions{Channel: "other:notify"})
	ctx := context.Background()

	bobA, bobB := a.hub.Subscribe("bob"), b.hub.Subscribe("bob")
	carolB, aliceA := b.hub.Subscribe("carol"), a.hub.Subscribe("alice")
	bobOther := other.hub.Subscribe("bob")
	for _, s := range []*notify.Subscription{bobA, bobB, carolB, aliceA, bobOther} {
		defer s.Close()
	}

	a.hub.ListChanged(ctx, "bob")
	assert.Equal(t, listChanged("bob"), next(t, bobB), "from A to B")
	assert.Equal(t, listChanged("bob"), next(t, bobA), "from A to A: through Redis too")
	uri := "docs://documents/q3Xv0c7mS8e2N9Rk1pLwGA"
	b.hub.ResourceUpdated(ctx, "alice", uri)
	assert.Equal(t, updated("alice", uri), next(t, aliceA), "from B to A")

	// Markers, published last: the first event each subscription sees
	// next is its marker, so nothing else reached it (Redis delivers a
	// channel's messages in order).
	b.hub.ResourceUpdated(ctx, "carol", "marker://carol")
	a.hub.ResourceUpdated(ctx, "bob", "marker://bob")
	a.hub.ResourceUpdated(ctx, "alice", "marker://alice")
	other.hub.ResourceUpdated(ctx, "bob", "marker://other")
	assert.Equal(t, updated("carol", "marker://carol"), next(t, carolB), "carol got nothing before")
	assert.Equal(t, updated("bob", "marker://bob"), next(t, bobA), "alice's event did not reach bob")
	assert.Equal(t, updated("bob", "marker://bob"), next(t, bobB))
	assert.Equal(t, updated("alice", "marker://alice"), next(t, aliceA))
	assert.Equal(t, updated("bob", "marker://other"), next(t, bobOther), "another channel hears nothing")
	waitStats(t, a.broker, func(s redisstore.BrokerStats) bool { return s.Delivered == 5 }, "A delivers the five events of its channel")
	assert.Equal(t, uint64(1), a.broker.Stats().Connects)
}

// The id the publishing hub's log gave an event reaches every instance
// with it.
func TestBrokerCarriesIDs(t *testing.T) {
	srv, client := startBackend(t)
	a, b := newInstance(t, client, redisstore.BrokerOptions{}), newInstance(t, srv.Client(t), redisstore.BrokerOptions{})
	onA, onB := a.hub.Subscribe("bob"), b.hub.Subscribe("bob")
	defer onA.Close()
	defer onB.Close()
	a.hub.ResourceUpdated(context.Background(), "bob", "docs://documents/1")
	var fromA, fromB notify.Event
	select {
	case fromA = <-onA.Events():
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	select {
	case fromB = <-onB.Events():
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	require.True(t, notify.ValidID(fromA.ID), "%+v", fromA)
	assert.Equal(t, fromA, fromB, "the same id on every instance")
}

// Messages that are not valid events are ignored and logged by size
// only; the listener carries on.
func TestBrokerMalformedIgnored(t *testing.T) {
	_, client := startBackend(t)
	log, logs := newLogger()
	in := newInstance(t, client, redisstore.BrokerOptions{Logger: log})
	bob := in.hub.Subscribe("bob")
	defer bob.Close()
	ctx := context.Background()
	bad := []string{
		``, `SECRET-not-json`, `null`, `{"subject":"bob"}`, `{"subject":"bob","kind":"SECRET-kind"}`,
		`{"subject":"bob","kind":"list_changed","uri":"SECRET-uri"}`, `{"subject":"bob","subject":"SECRET","kind":"list_changed"}`,
		`{"subject":"bob","kind":"list_changed"} SECRET-trailing`, strings.Repeat("SECRET", 2000),
	}
	for _, p := range bad {
		require.NoError(t, client.Publish(ctx, redisstore.DefaultChannel, p).Err())
	}
	require.NoError(t, client.Publish(ctx, redisstore.DefaultChannel, `{"subject":"bob","kind":"list_changed","future":"ignored"}`).Err())
	assert.Equal(t, listChanged("bob"), next(t, bob), "the first and only event bob receives")
	waitStats(t, in.broker, func(s redisstore.BrokerStats) bool { return s.Malformed == uint64(len(bad)) }, "malformed counted")
	assert.Equal(t, uint64(1), in.broker.Stats().Delivered)
	assert.Equal(t, len(bad), strings.Count(logs.String(), "ignored a malformed message"))
	assert.NotContains(t, logs.String(), "SECRET", "messages are never logged")
}

// Listen returns ctx's error when ctx ends, whether listening or waiting
// to subscribe again, and leaves no subscribed connection behind.
func TestBrokerListenReturnsOnCancel(t *testing.T) {
	_, client := startBackend(t)
	ctx := context.Background()
	subscribers := func() int64 {
		n, err := client.PubSubNumSub(ctx, redisstore.DefaultChannel).Result()
		require.NoError(t, err)
		return n[redisstore.DefaultChannel]
	}
	b, err := redisstore.NewBroker(client, redisstore.BrokerOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Listen(lctx, func(notify.Event) {}) }()
	waitStats(t, b, func(s redisstore.BrokerStats) bool { return s.Connects == 1 }, "never listened")
	require.Equal(t, int64(1), subscribers())
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return")
	}
	deadline := time.Now().Add(10 * time.Second)
	for subscribers() != 0 {
		require.True(t, time.Now().Before(deadline), "the subscription is still open")
		time.Sleep(5 * time.Millisecond)
	}

	// Against nothing: every attempt fails, Listen backs off, and returns
	// when ctx ends.
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer dead.Close()
	log, logs := newLogger()
	b, err = redisstore.NewBroker(dead, redisstore.BrokerOptions{Logger: log, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	require.NoError(t, err)
	lctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, b.Listen(lctx, func(notify.Event) {}), context.DeadlineExceeded)
	assert.Greater(t, strings.Count(logs.String(), "broker connection lost"), 3, "it kept trying")
	assert.Zero(t, b.Stats().Connects)
}

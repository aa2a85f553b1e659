package redisstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
)

// logKey is the Redis key of key's events with the default prefix.
func logKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return redisstore.DefaultEventLogPrefix + base64.RawURLEncoding.EncodeToString(sum[:])
}

func appendOK(t *testing.T, l notify.EventLog, key string, e notify.Event) string {
	t.Helper()
	id, err := l.Append(context.Background(), key, e)
	require.NoError(t, err)
	require.True(t, notify.ValidID(id), id)
	return id
}

func TestEventLogSince(t *testing.T) {
	_, client := startBackend(t)
	ctx := context.Background()
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{Age: time.Hour})
	require.NoError(t, err)
	a1 := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	b1 := appendOK(t, l, "bob", notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/b"})
	a2 := appendOK(t, l, "alice", notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/1"})
	a3 := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	a4 := appendOK(t, l, "alice", notify.Event{Kind: notify.ElicitationComplete, URI: "el-1"})

	evs, ok, err := l.Since(ctx, "alice", a1)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []notify.Event{
		{Subject: "alice", Kind: notify.ResourceUpdated, URI: "docs://documents/1", ID: a2},
		{Subject: "alice", Kind: notify.ListChanged, ID: a3},
		{Subject: "alice", Kind: notify.ElicitationComplete, URI: "el-1", ID: a4},
	}, evs)
	evs, ok, err = l.Since(ctx, "alice", a4)
	require.NoError(t, err)
	assert.True(t, ok, "the latest: nothing missed")
	assert.Empty(t, evs)

	for name, id := range map[string]string{
		"a position never given":  "1-1",
		"leading zeros":           "0" + a1,
		"malformed":               "nonsense",
		"beyond 64 bits":          "18446744073709551616-0",
		"a memory log's":          "AAAAAAAAAAA-1",
		"an id of Redis's but *":  "*",
		"the start of the stream": "-",
	} {
		evs, ok, err := l.Since(ctx, "alice", id)
		assert.NoError(t, err, name)
		assert.False(t, ok, name)
		assert.Empty(t, evs, name)
	}
	// Ids are unique per key only (Redis gives each stream its own, from
	// its clock): bob's may name a position in alice's stream too, but
	// only alice's events ever come back for alice.
	evs, _, err = l.Since(ctx, "alice", b1)
	assert.NoError(t, err)
	for _, e := range evs {
		assert.Equal(t, "alice", e.Subject)
		assert.NotEqual(t, "docs://documents/b", e.URI, "never bob's")
	}
	_, ok, err = l.Since(ctx, "carol", a1)
	assert.NoError(t, err)
	assert.False(t, ok, "a key without events")

	// Keys name no identity, and expire.
	keys, err := allKeys(client, "*")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{logKey("alice"), logKey("bob")}, keys)
	ttl, err := client.PTTL(ctx, logKey("alice")).Result()
	require.NoError(t, err)
	assert.True(t, ttl > 0 && ttl <= time.Hour, "expires: %s", ttl)

	_, err = l.Append(ctx, "alice", notify.Event{Kind: notify.ListChanged, URI: "x"})
	assert.ErrorIs(t, err, redisstore.ErrInvalidEvent)
	_, err = l.Append(ctx, "", notify.Event{Kind: notify.ListChanged})
	assert.ErrorIs(t, err, redisstore.ErrInvalidEvent)
}

// TestEventLogSharedID: Redis numbers each stream's entries on its own
// (ms-seq, from its clock), so an id of carol's events is a position of
// bob's too when both had an entry in that millisecond. Since answers
// from the stream of the key asked about, with its events only.
func TestEventLogSharedID(t *testing.T) {
	_, client := startBackend(t)
	ctx := context.Background()
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{Age: time.Hour})
	require.NoError(t, err)
	shared := appendOK(t, l, "carol", notify.Event{Kind: notify.ListChanged})
	// bob's entry of the same id, as Redis gives when both are appended
	// in one millisecond.
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: logKey("bob"), ID: shared, Values: []string{"k", "l", "r", runGen(t, client, logKey("bob"))}}).Err())
	b := appendOK(t, l, "bob", notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/b"})
	c := appendOK(t, l, "carol", notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/c"})

	evs, ok, err := l.Since(ctx, "bob", shared)
	require.NoError(t, err)
	assert.True(t, ok, "a position of bob's")
	assert.Equal(t, []notify.Event{{Subject: "bob", Kind: notify.ResourceUpdated, URI: "docs://documents/b", ID: b}}, evs)
	evs, ok, err = l.Since(ctx, "carol", shared)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []notify.Event{{Subject: "carol", Kind: notify.ResourceUpdated, URI: "docs://documents/c", ID: c}}, evs)
}

// TestEventLogTrims: the stream is bounded; an id trimmed away is too old.
func TestEventLogTrims(t *testing.T) {
	_, client := startBackend(t)
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{Events: 10})
	require.NoError(t, err)
	var ids []string
	for i := range 400 {
		ids = append(ids, appendOK(t, l, "alice", notify.Event{Kind: notify.ResourceUpdated, URI: fmt.Sprintf("docs://documents/%d", i)}))
	}
	n, err := client.XLen(context.Background(), logKey("alice")).Result()
	require.NoError(t, err)
	assert.True(t, n >= 10 && n <= 10+100, "MAXLEN ~ 10 holds %d", n)
	_, ok, err := l.Since(context.Background(), "alice", ids[0])
	require.NoError(t, err)
	assert.False(t, ok, "trimmed: too old")
	evs, ok, err := l.Since(context.Background(), "alice", ids[len(ids)-10])
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, evs, 9)
	assert.Equal(t, "docs://documents/399", evs[8].URI)
}

// TestEventLogFaults: Redis down, both calls fail (the hub then delivers
// live and the stream restarts); back, it works again, and an id of the
// Redis that restarted empty is unknown.
func TestEventLogFaults(t *testing.T) {
	srv, client := startRedis(t)
	ctx := context.Background()
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	require.NoError(t, err)
	id := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	srv.Stop()
	_, err = l.Append(ctx, "alice", notify.Event{Kind: notify.ListChanged})
	assert.Error(t, err)
	_, ok, err := l.Since(ctx, "alice", id)
	assert.Error(t, err)
	assert.False(t, ok)

	srv.Restart(t)
	require.Eventually(t, func() bool {
		_, err := l.Append(ctx, "alice", notify.Event{Kind: notify.ListChanged})
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the log comes back")
	_, ok, err = l.Since(ctx, "alice", id)
	assert.NoError(t, err)
	assert.False(t, ok, "forgotten: the stream starts over")
}

// Three instances sharing sessions, notifications and the event log in
// one Redis: a legacy stream that reconnects to another instance with
// Last-Event-ID gets the notifications sent while it was away, in order,
// once; an id of bob's presented by alice gets a clean restart.
func TestResumeAcrossAFleet(t *testing.T) {
	srv, _ := startRedis(t)
	is, nodes := newNodes(t, srv, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	alice := is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1"})
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "client-1"})
	session, bobSession := a.initialize(t, alice), b.initialize(t, bob)
	status, _, code := c.call(t, alice, session, "resources/subscribe", map[string]any{"uri": welcome})
	require.Equal(t, http.StatusOK, status)
	require.Zero(t, code)
	ctx := context.Background()
	listChanged := `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
	updated := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + welcome + `"}}`

	resp := a.get(t, alice, session, "")
	events := sseEvents(resp)
	require.Eventually(t, func() bool { return a.hub.Subscribers("alice") == 1 }, 5*time.Second, time.Millisecond)
	c.hub.ListChanged(ctx, "alice")
	first := nextEvent(t, events)
	require.Equal(t, listChanged, first.data)
	resp.Body.Close() // the connection drops
	require.Eventually(t, func() bool { return a.hub.Subscribers("alice") == 0 }, 5*time.Second, time.Millisecond)

	c.hub.ResourceUpdated(ctx, "alice", welcome)
	c.hub.ResourceUpdated(ctx, "bob", welcome)
	c.hub.ListChanged(ctx, "alice")

	resp = b.get(t, alice, session, first.id)
	defer resp.Body.Close()
	events = sseEvents(resp)
	up, lc := nextEvent(t, events), nextEvent(t, events)
	assert.Equal(t, updated, up.data)
	assert.Equal(t, listChanged, lc.data)
	require.Eventually(t, func() bool { return b.hub.Subscribers("alice") == 1 }, 5*time.Second, time.Millisecond)
	a.hub.ListChanged(ctx, "alice")
	live := nextEvent(t, events)
	assert.Equal(t, listChanged, live.data)
	assert.NotEqual(t, lc.id, live.id)
	select {
	case e := <-events:
		t.Fatalf("unexpected %v", e)
	case <-time.After(50 * time.Millisecond):
	}

	// bob's id, in alice's session: a restart, nothing of bob's.
	bobResp := c.get(t, bob, bobSession, "")
	bobEvents := sseEvents(bobResp)
	require.Eventually(t, func() bool { return c.hub.Subscribers("bob") == 1 }, 5*time.Second, time.Millisecond)
	a.hub.ListChanged(ctx, "bob")
	bobID := nextEvent(t, bobEvents).id
	bobResp.Body.Close()
	resp2 := c.get(t, alice, session, bobID)
	defer resp2.Body.Close()
	events2 := sseEvents(resp2)
	assert.Equal(t, sseEvent{data: listChanged}, nextEvent(t, events2))
	assert.Equal(t, sseEvent{data: updated}, nextEvent(t, events2))
}

// get opens a GET stream, resuming after lastID unless it is "".
func (n *node) get(t *testing.T, token, session, lastID string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, n.srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := n.srv.Client().Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp
}

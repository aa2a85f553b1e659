package sessions_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// newMissedInstance is one instance on an in-process broker that the test
// holds, to deliver what a broker's listener does after a cut
// (notify.Missed), and a shared log.
func newMissedInstance(t *testing.T) (*instance, *broker) {
	f, b, _ := newMissedInstanceStore(t)
	return f, b
}

func newMissedInstanceStore(t *testing.T) (*instance, *broker, *sessions.MemoryStore) {
	t.Helper()
	base := mcptest.New(t, mcptest.Options{})
	b := &broker{}
	hub := notify.New(notify.Options{Broker: b})
	store, err := sessions.NewMemoryStore(sessions.Limits{})
	require.NoError(t, err)
	part, err := sessions.New(hub, sessions.Options{Store: store, KeepAlive: time.Hour})
	require.NoError(t, err)
	ep, err := mcphttp.New(base.Inv, mcphttp.Options{Authenticator: base.Auth}, part)
	require.NoError(t, err)
	srv := httptest.NewServer(ep)
	t.Cleanup(func() { hub.Close(); srv.Close() })
	fx := *base
	fx.EP = ep
	require.Eventually(t, func() bool { return b.len() == 1 }, 5*time.Second, time.Millisecond)
	return &instance{fixture: &fixture{Server: &mcptest.Server{Fixture: &fx, Hub: hub, Srv: srv}, part: part}, ep: ep}, b, store
}

// missed delivers what a broker's listener does when it cannot tell what
// subject missed.
func (b *broker) missed(subject string) {
	b.mu.Lock()
	ls := b.listeners
	b.mu.Unlock()
	for _, l := range ls {
		l(notify.Event{Subject: subject, Kind: notify.Missed})
	}
}

// A legacy GET stream whose events may have been lost (notify.Missed) is
// ended with a retry field; resuming with its Last-Event-ID gives what
// the log holds after it (here: the update published meanwhile). Before
// the change the stream went on as if nothing had been lost.
func TestMissedEndsALegacyStream(t *testing.T) {
	f, b := newMissedInstance(t)
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	uri := "docs://documents/alice-0001"
	require.Nil(t, decodeResp(t, f.Post(t, alice, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": uri}), nil)).Error)
	s := openStream(t, f.Get(t, alice, session, nil))
	defer s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.Hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.Next(t), "list_changed")
	last := s.LastEventID()
	require.NotEmpty(t, last)

	b.missed("bob")
	s.None(t)
	b.missed("alice")
	ended(t, s, "a stream that may have missed events is ended")
	assert.NotEmpty(t, s.Retry(), "with a retry field: the client resumes")

	f.Hub.ResourceUpdated(context.Background(), "alice", uri) // published while the client is away
	again := openStream(t, f.Get(t, alice, session, map[string]string{"Last-Event-ID": last}))
	defer again.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`, again.Next(t))
}

// A subscriptions/listen stream has no event ids to resume from: told
// that its events may have been lost (notify.Missed, of its subject or of
// every subject), it stays open and is sent what makes its client list
// and read again — list_changed and updated for each URI of its filter —
// then goes on. Before the change it was sent nothing.
func TestMissedRestartsAListenStream(t *testing.T) {
	f, b := newMissedInstance(t)
	alice := f.Token(t, "alice")
	uri := "docs://documents/alice-0001"
	body, hdr := mcptest.Modern(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{
		"resourcesListChanged": true, "resourceSubscriptions": []string{uri, "docs://documents/bob-0001"}}})
	s := openStream(t, f.Post(t, alice, "", body, hdr))
	defer s.Close()
	ack := s.Next(t)
	assert.Contains(t, ack, "notifications/subscriptions/acknowledged")
	agreed := []string{uri}
	if strings.Contains(ack, "bob-0001") {
		agreed = append(agreed, "docs://documents/bob-0001")
	}
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)

	for _, subject := range []string{"alice", ""} {
		b.missed(subject)
		assert.Contains(t, s.Next(t), "notifications/resources/list_changed")
		for _, u := range agreed {
			up := s.Next(t)
			assert.Contains(t, up, "notifications/resources/updated")
			assert.Contains(t, up, `"uri":"`+u+`"`)
			assert.Contains(t, up, `"io.modelcontextprotocol/subscriptionId":1`)
		}
	}
	f.Hub.ResourceUpdated(context.Background(), "alice", uri)
	assert.True(t, strings.Contains(s.Next(t), uri), "and goes on")
}

// Through a legacy handler in front (Part.Listen, mcphttp/intercept) the
// stream is legacy's, without the part's ids: told that events may have
// been lost, it is sent what makes the client list and read again —
// list_changed and updated for the session's subscriptions — and goes on,
// rather than ending (which would leave legacy's stream without the
// endpoint's notifications).
func TestMissedRestartsALegacyHandlersStream(t *testing.T) {
	f, b, store := newMissedInstanceStore(t)
	ctx := context.Background()
	caller := principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}}
	require.True(t, f.part.Adopt(ctx, "legacy-session-1", caller))
	uri := "docs://documents/alice-0001"
	require.NoError(t, store.Subscribe(ctx, "legacy-session-1", &caller, uri))
	msgs := make(chan string, 16)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.part.Listen(lctx, "legacy-session-1", caller, func(m []byte) error { msgs <- string(m); return nil })
	}()
	defer func() { cancel(); <-done }()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	next := func() string {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("nothing sent")
		}
		return ""
	}
	b.missed("alice")
	assert.Contains(t, next(), "notifications/resources/list_changed")
	assert.Contains(t, next(), `"uri":"`+uri+`"`)
	f.Hub.ListChanged(ctx, "alice")
	assert.Contains(t, next(), "notifications/resources/list_changed", "and goes on")
}

package sessions_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

const (
	msgListChanged = `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
	aliceDoc       = "docs://documents/alice-0001"
	aliceOther     = "docs://documents/alice-0002"
	bobDoc         = "docs://documents/bob-0001"
)

func msgUpdated(uri string) string {
	return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`
}

// resumeFleet is a fleet of n instances sharing a session store and an
// event log, as with redisstore's (whose tests run this too, on Redis).
func resumeFleet(t *testing.T, n int, elog notify.EventLog) []*instance {
	t.Helper()
	store, err := sessions.NewMemoryStore(sessions.Limits{})
	require.NoError(t, err)
	return newFleetLog(t, n, store, sessions.Limits{}, nil, elog)
}

// lastEventID is the header of a GET that resumes after id.
func lastEventID(id string) map[string]string { return map[string]string{"Last-Event-ID": id} }

// subscribe subscribes session to uri through f.
func subscribe(t *testing.T, f *instance, token, session, uri string) {
	t.Helper()
	r := decodeResp(t, f.Post(t, token, session, mcptest.Legacy(7, "resources/subscribe", map[string]any{"uri": uri}), nil))
	require.Nil(t, r.Error)
}

// TestStreamEventsCarryIDs: a legacy GET stream's messages carry SSE ids,
// each of its own, of the caller's tag; a modern listen's carry none
// (SEP-2575).
func TestStreamEventsCarryIDs(t *testing.T) {
	f := resumeFleet(t, 1, nil)[0]
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	s := openStream(t, f.Get(t, alice, f.initialize(t, alice), nil))
	defer s.Close()
	sb := openStream(t, f.Get(t, bob, f.initialize(t, bob), nil))
	defer sb.Close()
	l := openStream(t, f.listen(t, alice))
	defer l.Close()
	l.Next(t) // the acknowledgement
	mcptest.WaitSubscribers(t, f.Hub, "alice", 2)
	mcptest.WaitSubscribers(t, f.Hub, "bob", 1)

	ctx := context.Background()
	f.Hub.ListChanged(ctx, "alice")
	f.Hub.ListChanged(ctx, "alice")
	f.Hub.ListChanged(ctx, "bob")
	one, two, b := s.NextEvent(t), s.NextEvent(t), sb.NextEvent(t)
	for _, e := range []mcptest.Event{one, two, b} {
		assert.Equal(t, msgListChanged, e.Data)
		require.NotEmpty(t, e.ID)
		for _, c := range e.ID {
			assert.True(t, c > ' ' && c <= '~', "an SSE id is printable ASCII")
		}
	}
	assert.NotEqual(t, one.ID, two.ID)
	assert.Equal(t, strings.SplitN(one.ID, ".", 2)[0], strings.SplitN(two.ID, ".", 2)[0], "one principal, one tag")
	assert.NotEqual(t, strings.SplitN(one.ID, ".", 2)[0], strings.SplitN(b.ID, ".", 2)[0], "another principal, another tag")
	assert.Empty(t, l.NextEvent(t).ID, "subscriptions/listen has no event ids")
}

// TestResumeDeliversWhatWasMissed: a client that reconnects with
// Last-Event-ID, to the same instance or another sharing the log, gets
// exactly the notifications it missed, in order, each once, then the live
// ones.
func TestResumeDeliversWhatWasMissed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reopenOn int // the instance of the second GET
	}{
		{"same instance", 0},
		{"another instance", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fleet := resumeFleet(t, 3, notify.NewMemoryLog(notify.MemoryLogOptions{}))
			a, c := fleet[0], fleet[2]
			alice := a.Token(t, "alice")
			session := a.initialize(t, alice)
			subscribe(t, a, alice, session, aliceDoc)
			ctx := context.Background()

			s := openStream(t, a.Get(t, alice, session, nil))
			mcptest.WaitSubscribers(t, a.Hub, "alice", 1)
			c.Hub.ListChanged(ctx, "alice")
			first := s.NextEvent(t)
			require.Equal(t, msgListChanged, first.Data)
			s.Close()
			mcptest.WaitSubscribers(t, a.Hub, "alice", 0)

			// Published while no stream is open, through the third instance.
			c.Hub.ResourceUpdated(ctx, "alice", aliceDoc)
			c.Hub.ResourceUpdated(ctx, "alice", aliceOther) // not subscribed: nothing to deliver
			c.Hub.ResourceUpdated(ctx, "bob", bobDoc)       // bob's
			c.Hub.ListChanged(ctx, "bob")
			c.Hub.ListChanged(ctx, "alice")

			on := fleet[tc.reopenOn]
			s = openStream(t, on.Get(t, alice, session, lastEventID(first.ID)))
			defer s.Close()
			up, lc := s.NextEvent(t), s.NextEvent(t)
			assert.Equal(t, msgUpdated(aliceDoc), up.Data)
			assert.Equal(t, msgListChanged, lc.Data)
			assert.NotEmpty(t, up.ID)
			assert.NotEqual(t, up.ID, lc.ID)

			mcptest.WaitSubscribers(t, on.Hub, "alice", 1)
			a.Hub.ListChanged(ctx, "alice")
			live := s.NextEvent(t)
			assert.Equal(t, msgListChanged, live.Data)
			s.None(t)

			// And again from the replayed one: the rest.
			s.Close()
			mcptest.WaitSubscribers(t, on.Hub, "alice", 0)
			s = openStream(t, c.Get(t, alice, session, lastEventID(up.ID)))
			defer s.Close()
			assert.Equal(t, mcptest.Event{ID: lc.ID, Data: msgListChanged}, s.NextEvent(t))
			assert.Equal(t, live, s.NextEvent(t))
			s.None(t)
		})
	}
}

// racyLog publishes an event through the hub while a stream asks what it
// missed: the event is both in the replay and delivered live.
type racyLog struct {
	notify.EventLog
	publish atomic.Pointer[func()] // taken by the next Since
}

func (l *racyLog) Since(ctx context.Context, key, id string) ([]notify.Event, bool, error) {
	if p := l.publish.Swap(nil); p != nil {
		(*p)()
	}
	return l.EventLog.Since(ctx, key, id)
}

// TestResumeDoesNotRepeat: an event published between the stream's
// subscription and the replay reaches it both ways; it is sent once.
func TestResumeDoesNotRepeat(t *testing.T) {
	log := &racyLog{EventLog: notify.NewMemoryLog(notify.MemoryLogOptions{})}
	f := resumeFleet(t, 1, log)[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	subscribe(t, f, alice, session, aliceDoc)
	ctx := context.Background()
	s := openStream(t, f.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.Hub.ListChanged(ctx, "alice")
	first := s.NextEvent(t)
	s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
	f.Hub.ListChanged(ctx, "alice") // missed
	publish := func() { f.Hub.ResourceUpdated(ctx, "alice", aliceDoc) }
	log.publish.Store(&publish)

	s = openStream(t, f.Get(t, alice, session, lastEventID(first.ID)))
	defer s.Close()
	assert.Equal(t, msgListChanged, s.Next(t))
	assert.Equal(t, msgUpdated(aliceDoc), s.Next(t))
	f.Hub.ListChanged(ctx, "alice")
	assert.Equal(t, msgListChanged, s.Next(t), "the live update was not sent again")
	s.None(t)
}

// failingLog is an event log out of reach.
type failingLog struct{}

func (failingLog) Append(context.Context, string, notify.Event) (string, error) {
	return "", errors.New("log: connection refused")
}

func (failingLog) Since(context.Context, string, string) ([]notify.Event, bool, error) {
	return nil, false, errors.New("log: connection refused")
}

// TestResumeRestarts: an id that cannot tell what was missed — forged,
// another caller's, too old, unknown, two of them, or a log that fails —
// gets a clean restart (list_changed, then updated for the session's
// subscriptions), never anyone else's events.
func TestResumeRestarts(t *testing.T) {
	log := notify.NewMemoryLog(notify.MemoryLogOptions{Events: 2})
	fleet := resumeFleet(t, 2, log)
	f := fleet[0]
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	aliceSession, bobSession := f.initialize(t, alice), f.initialize(t, bob)
	subscribe(t, f, alice, aliceSession, aliceDoc)
	subscribe(t, f, bob, bobSession, bobDoc)
	ctx := context.Background()

	// Ids as each caller saw them.
	idOf := func(token, session, subject string, publish func()) string {
		s := openStream(t, f.Get(t, token, session, nil))
		defer s.Close()
		mcptest.WaitSubscribers(t, f.Hub, subject, 1)
		publish()
		e := s.NextEvent(t)
		require.NotEmpty(t, e.ID)
		return e.ID
	}
	bobID := idOf(bob, bobSession, "bob", func() { f.Hub.ResourceUpdated(ctx, "bob", bobDoc) })
	mcptest.WaitSubscribers(t, f.Hub, "bob", 0)
	aliceOld := idOf(alice, aliceSession, "alice", func() { f.Hub.ListChanged(ctx, "alice") })
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
	for range 2 { // the log keeps 2 events of alice's: the first is gone
		f.Hub.ListChanged(ctx, "alice")
	}
	f.Hub.ResourceUpdated(ctx, "bob", bobDoc)
	aliceTag, _, _ := strings.Cut(aliceOld, ".")
	_, bobLogID, _ := strings.Cut(bobID, ".")

	restart := []string{msgListChanged, msgUpdated(aliceDoc)}
	for _, tc := range []struct{ name, header string }{
		{"too old", aliceOld},
		{"another caller's id", bobID},
		{"another caller's event under the caller's tag", aliceTag + "." + bobLogID},
		{"forged log id under the caller's tag", aliceTag + ".AAAAAAAAAAA-1"},
		{"malformed", "garbage"},
		{"a tag and nothing", aliceTag + "."},
		{"empty", ""},
		{"a tab and a space", aliceTag + ".x\t1 2"},
		{"too long", aliceTag + "." + strings.Repeat("1", 65)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, fleet[1].Srv.URL, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+alice)
			req.Header.Set("Mcp-Session-Id", aliceSession)
			req.Header["Last-Event-Id"] = []string{tc.header}
			resp, err := fleet[1].Srv.Client().Do(req)
			require.NoError(t, err)
			s := openStream(t, resp)
			defer s.Close()
			for _, want := range restart {
				e := s.NextEvent(t)
				assert.Equal(t, want, e.Data)
				assert.Empty(t, e.ID, "a restart gives no position")
			}
			s.None(t)
		})
	}

	t.Run("two ids", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, f.Srv.URL, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Mcp-Session-Id", aliceSession)
		req.Header["Last-Event-Id"] = []string{bobID, aliceOld}
		resp, err := f.Srv.Client().Do(req)
		require.NoError(t, err)
		s := openStream(t, resp)
		defer s.Close()
		assert.Equal(t, restart, []string{s.Next(t), s.Next(t)})
		s.None(t)
	})
}

// TestResumeWithAFailingLog: events still go out live (without ids), and
// a reconnect restarts.
func TestResumeWithAFailingLog(t *testing.T) {
	f := resumeFleet(t, 1, failingLog{})[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	subscribe(t, f, alice, session, aliceDoc)
	s := openStream(t, f.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.Hub.ListChanged(context.Background(), "alice")
	assert.Equal(t, mcptest.Event{Data: msgListChanged}, s.NextEvent(t), "delivered live without an id")
	s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)

	s = openStream(t, f.Get(t, alice, session, lastEventID("AAAAAAAAAAAA.x-1")))
	defer s.Close()
	assert.Equal(t, []string{msgListChanged, msgUpdated(aliceDoc)}, []string{s.Next(t), s.Next(t)})
}

// TestResumeLateEvents: events that reach an instance late (its broker's
// delivery delayed) after the client resumed there are delivered — the
// log's order is not the order the client received them in, so one the
// log places before the resume point may be one the client never had (B
// published e2 before C published e1, logged first) — except the event
// the client resumed from, which it has. An id the log cannot place is
// delivered too.
func TestResumeLateEvents(t *testing.T) {
	fleet := resumeFleet(t, 2, notify.NewMemoryLog(notify.MemoryLogOptions{}))
	a, b := fleet[0], fleet[1]
	alice := a.Token(t, "alice")
	session := a.initialize(t, alice)
	subscribe(t, a, alice, session, aliceDoc)
	subscribe(t, a, alice, session, aliceOther)
	ctx := context.Background()

	s := openStream(t, b.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, b.Hub, "alice", 1)
	b.Hub.ListChanged(ctx, "alice") // once it arrives, the stream's opening replay is over
	require.Equal(t, msgListChanged, s.Next(t))
	// e1 is logged first but its delivery is held; e2, logged after it,
	// reaches B's stream at once; the client resumes from e2.
	a.broker.holdIf(func(e notify.Event) bool { return e.URI == aliceOther })
	a.Hub.ResourceUpdated(ctx, "alice", aliceOther) // e1: logged, held on its way
	b.Hub.ResourceUpdated(ctx, "alice", aliceDoc)   // e2
	e2 := s.NextEvent(t)
	assert.Equal(t, msgUpdated(aliceDoc), e2.Data)
	s.Close()
	mcptest.WaitSubscribers(t, b.Hub, "alice", 0)

	again := openStream(t, a.Get(t, alice, session, lastEventID(e2.ID)))
	defer again.Close()
	mcptest.WaitSubscribers(t, a.Hub, "alice", 1)
	// e2 again, late (the anchor: skipped), then e1 (never seen: delivered).
	a.broker.holdIf(func(notify.Event) bool { return true })
	require.NoError(t, a.broker.Publish(ctx, notify.Event{Subject: "alice", Kind: notify.ResourceUpdated, URI: aliceDoc, ID: idOf(t, e2.ID)}))
	a.broker.release()
	got := again.NextEvent(t)
	assert.Equal(t, msgUpdated(aliceOther), got.Data, "e1, logged before the resume point but never received: delivered")
	require.NoError(t, a.broker.Publish(ctx, notify.Event{Subject: "alice", Kind: notify.ResourceUpdated, URI: aliceDoc, ID: "another-log-7"}))
	got = again.NextEvent(t)
	assert.Equal(t, msgUpdated(aliceDoc), got.Data, "an id the log cannot place is delivered")
	assert.True(t, strings.HasSuffix(got.ID, ".another-log-7"), got.ID)
	again.None(t)
}

// idOf returns the log id of a stream's SSE event id.
func idOf(t *testing.T, sse string) string {
	t.Helper()
	_, id, ok := strings.Cut(sse, ".")
	require.True(t, ok, sse)
	return id
}

package sessions_test

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/notify"
)

// primed waits for the priming event of s and returns its id.
func primed(t *testing.T, s *mcptest.Stream) string {
	t.Helper()
	require.Eventually(t, func() bool { return s.LastEventID() != "" }, 5*time.Second, time.Millisecond, "no priming event")
	return s.LastEventID()
}

// TestGetStreamStartsWithPrimingEvent: the first bytes of a legacy GET
// stream are an event with an id of the caller's tag and empty data — no
// comment, no message before it.
func TestGetStreamStartsWithPrimingEvent(t *testing.T) {
	f := resumeFleet(t, 1, nil)[0]
	alice := f.Token(t, "alice")
	resp := f.Get(t, alice, f.initialize(t, alice), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	r := bufio.NewReader(resp.Body)
	var lines []string
	for len(lines) < 3 {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	require.True(t, strings.HasPrefix(lines[0], "id: "), "the stream starts with an id: %q", lines)
	assert.Equal(t, []string{"data: ", ""}, lines[1:], "and empty data")
	id := strings.TrimPrefix(lines[0], "id: ")
	tag, logID, ok := strings.Cut(id, ".")
	require.True(t, ok)
	assert.Len(t, tag, 12)
	assert.True(t, notify.ValidID(logID))
}

// TestStreamCutBeforeItsFirstEventResumes: a stream cut right after its
// priming event, an edit published (on another instance) while the client
// is away, and a reconnection with the primed id as Last-Event-ID (on a
// third instance): the missed edit arrives, with an id, then live ones.
// Before priming events, the client had no id to give and the edit was
// lost.
func TestStreamCutBeforeItsFirstEventResumes(t *testing.T) {
	fleet := resumeFleet(t, 3, notify.NewMemoryLog(notify.MemoryLogOptions{}))
	a, b, c := fleet[0], fleet[1], fleet[2]
	alice := a.Token(t, "alice")
	session := a.initialize(t, alice)
	subscribe(t, a, alice, session, aliceDoc)

	s := openStream(t, a.Get(t, alice, session, nil))
	id := primed(t, s)
	s.Close()
	mcptest.WaitSubscribers(t, a.Hub, "alice", 0)

	ctx := context.Background()
	b.Hub.ResourceUpdated(ctx, "alice", aliceDoc) // the edit, while alice is away
	b.Hub.ResourceUpdated(ctx, "bob", bobDoc)     // not alice's

	s = openStream(t, c.Get(t, alice, session, lastEventID(id)))
	defer s.Close()
	missed := s.NextEvent(t)
	assert.Equal(t, msgUpdated(aliceDoc), missed.Data)
	assert.NotEmpty(t, missed.ID)
	mcptest.WaitSubscribers(t, c.Hub, "alice", 1)
	b.Hub.ListChanged(ctx, "alice")
	assert.Equal(t, msgListChanged, s.Next(t))
	s.None(t)
}

// markRaceLog publishes an event right after the stream's mark is
// recorded, before the stream subscribes: the event is not live for the
// stream, and comes after the mark in the log.
type markRaceLog struct {
	notify.EventLog
	publish atomic.Pointer[func()] // run after the next mark
}

func (l *markRaceLog) Append(ctx context.Context, key string, e notify.Event) (string, error) {
	id, err := l.EventLog.Append(ctx, key, e)
	if e.URI == "<stream start>" { // a mark (notify.Hub.Mark)
		if p := l.publish.Swap(nil); p != nil {
			(*p)()
		}
	}
	return id, err
}

// TestEventBetweenMarkAndSubscriptionArrives: an event published after a
// new stream's mark but before it subscribed is replayed right after the
// priming event, once.
func TestEventBetweenMarkAndSubscriptionArrives(t *testing.T) {
	log := &markRaceLog{EventLog: notify.NewMemoryLog(notify.MemoryLogOptions{})}
	f := resumeFleet(t, 1, log)[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	ctx := context.Background()
	publish := func() { f.Hub.ListChanged(ctx, "alice") }
	log.publish.Store(&publish)

	s := openStream(t, f.Get(t, alice, session, nil))
	defer s.Close()
	e := s.NextEvent(t)
	assert.Equal(t, msgListChanged, e.Data)
	assert.NotEmpty(t, e.ID)
	s.None(t)
}

// TestRestartPrimesAfterItsMessages: a Last-Event-ID the log cannot
// resume from gets the restart (list_changed) first, then the priming
// event with a fresh id, which resumes.
func TestRestartPrimesAfterItsMessages(t *testing.T) {
	f := resumeFleet(t, 1, notify.NewMemoryLog(notify.MemoryLogOptions{}))[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	s := openStream(t, f.Get(t, alice, session, lastEventID("not-an-id")))
	first := s.NextEvent(t)
	assert.Equal(t, mcptest.Event{Data: msgListChanged}, first, "the restart, without an id")
	id := primed(t, s)
	assert.NotEqual(t, "not-an-id", id)
	s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
	f.Hub.ListChanged(context.Background(), "alice")
	s = openStream(t, f.Get(t, alice, session, lastEventID(id)))
	defer s.Close()
	e := s.NextEvent(t)
	assert.Equal(t, msgListChanged, e.Data)
	assert.NotEmpty(t, e.ID, "the primed id resumed: a replay, not another restart")
}

// TestServerCloseSendsRetry: a legacy stream the server closes on purpose
// (here: its session ends) gets a retry field before the connection
// closes; a modern listen ends with its request and gets none.
func TestServerCloseSendsRetry(t *testing.T) {
	f := resumeFleet(t, 1, nil)[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	s := openStream(t, f.Get(t, alice, session, nil))
	primed(t, s)
	assert.Empty(t, s.Retry())
	f.del(t, alice, session).Body.Close()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end with its session")
	}
	ms, err := strconv.Atoi(s.Retry())
	require.NoError(t, err, "a retry field before the close")
	assert.True(t, ms >= 1000 && ms < 2000, "retry %d ms", ms)
}

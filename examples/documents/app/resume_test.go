package app

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/redisstore"
)

// idStream is a legacy GET stream read with each message's SSE id.
type idStream struct {
	resp   *http.Response
	events chan idMessage
	done   chan struct{}
}

type idMessage struct {
	id   string // "" when the message carries none
	note note
}

// openResume opens a legacy session's GET stream on s, with Last-Event-ID
// lastID when not empty, and waits until s's hub counts want
// subscriptions of subject.
func (s *testServer) openResume(t *testing.T, token, subject, session, lastID string, want int) *idStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.mcpURL(), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st := &idStream{resp: res, events: make(chan idMessage, 1000), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			} else if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" { // empty: a priming event
				st.events <- idMessage{id: id, note: decodeNote(data)}
			} else if line == "" {
				id = ""
			}
		}
	}()
	t.Cleanup(st.close)
	waitSubscribers(t, s.app.hub, subject, want)
	return st
}

// decodeNote is parseNote for the reading goroutine, which must not fail
// the test: a message it cannot decode is a note of its own.
func decodeNote(data string) note {
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return note{Method: "undecodable: " + data}
	}
	n := note{Method: m.Method, URI: m.Params.URI}
	switch m.Method {
	case "notifications/resources/list_changed":
		n.Method = "list_changed"
	case "notifications/resources/updated":
		n.Method = "updated"
	}
	return n
}

func (st *idStream) next(t *testing.T) idMessage {
	t.Helper()
	m, err := st.wait()
	if err != "" {
		t.Fatal(err)
	}
	return m
}

// wait returns the next message, or why there is none.
func (st *idStream) wait() (idMessage, string) {
	select {
	case m := <-st.events:
		return m, ""
	case <-st.done:
		select {
		case m := <-st.events:
			return m, ""
		default:
			return idMessage{}, "the stream ended"
		}
	case <-time.After(10 * time.Second):
		return idMessage{}, "no event within 10s"
	}
}

func (st *idStream) close() { st.resp.Body.Close(); <-st.done }

// untilMarker returns the messages before the marker (an update of
// AboutURI carrying an id), and the marker's id.
func (st *idStream) untilMarker(t *testing.T) ([]idMessage, string) {
	t.Helper()
	var out []idMessage
	for {
		m, err := st.wait()
		if err != "" {
			t.Fatalf("%s; before the marker: %v", err, out)
		}
		if m.note == updatedNote(AboutURI) && m.id != "" {
			return out, m.id
		}
		out = append(out, m)
		require.Less(t, len(out), 20, "no marker among %v", out)
	}
}

// Two instances sharing one database and one Redis (-redis: the hub's
// event log is redisstore's), the notifications on Redis pub/sub (SQLite)
// or on LISTEN/NOTIFY (PostgreSQL), each carrying the event id: bob's
// legacy stream on A, closed; changes meanwhile; the stream reconnects to
// B with Last-Event-ID and is given what it missed, once, with ids that
// resume again; an id it cannot place (forged, or carol's) restarts it
// with list_changed and the updates of its subscriptions, never anything
// of carol's.
func TestRedisResume(t *testing.T) {
	t.Run("redis pub/sub", func(t *testing.T) {
		db := "sqlite:" + t.TempDir() + "/documents.db"
		testResume(t, func(c *Config) { c.DB = db }, func(t *testing.T, s *testServer) {
			require.NotNil(t, s.app.redis.broker)
			waitRedisListening(t, s.app.redis.broker)
		})
	})
	t.Run("postgres LISTEN/NOTIFY", func(t *testing.T) {
		dsn, channel := testPostgres(t)
		testResume(t, func(c *Config) { c.DB, c.NotifyChannel = dsn, channel }, func(t *testing.T, s *testServer) {
			require.Nil(t, s.app.redis.broker)
			require.NotNil(t, s.app.broker)
			waitListening(t, s.app.broker)
		})
	})
}

func testResume(t *testing.T, db func(*Config), listening func(*testing.T, *testServer)) {
	rs := startRedis(t)
	idp := startIdentityProvider(t, prodResource)
	cfg := func(c *Config) { jwtConfig(idp)(c); db(c); c.Redis = rs.url() }
	a, b := start(t, cfg), start(t, cfg)
	for _, s := range []*testServer{a, b} {
		require.NotNil(t, s.app.redis.events)
		listening(t, s)
	}
	ctx := context.Background()
	alice := idp.token(t, "alice", ScopeRead, ScopeShare)
	bob, carol := idp.token(t, "bob", ScopeRead), idp.token(t, "carol", ScopeRead)
	id := a.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	// carol's stream, and a change of hers before bob's log has anything:
	// its log id is no position of bob's log. (Redis numbers each
	// stream's entries on its own, ms-seq from its clock: an id of
	// carol's names a position of bob's too when both logs have an entry
	// in that millisecond; TestRedisResumeSharedID resumes from one.)
	carolW := watch(t, b, a, carol, "carol")
	carolGET, carolFirst := carolW.stream, carolW.first
	waitRedisPast(t, rs, carolW.logID)

	session := a.initialize(t, bob)
	a.subscribe(t, bob, session, AboutURI)
	a.subscribe(t, bob, session, uri)
	onA := a.openResume(t, bob, "bob", session, "", 1)
	a.share(t, alice, id, "bob")
	first := onA.next(t)
	assert.Equal(t, listChangedNote(), first.note)
	require.NotEmpty(t, first.id, "a legacy stream's event carries an id")
	onA.close()
	waitSubscribers(t, a.app.hub, "bob", 0)

	_, firstLogID, ok := strings.Cut(first.id, ".")
	require.True(t, ok, first.id)
	require.True(t, streamIDAfter(t, firstLogID, carolW.logID), "bob's events come after carol's change: %s, %s", first.id, carolFirst.id)

	// While bob has no stream: alice edits (on A), and carol hears of a
	// change of her own.
	a.update(t, alice, id, "Edited while bob was away.")
	a.app.hub.ListChanged(ctx, "carol") // after carolFirst: what resuming from it would replay

	// bob reconnects to B: the update he missed, with an id, then nothing
	// more before the marker (no duplicate of the replay).
	onB := b.openResume(t, bob, "bob", session, first.id, 1)
	missed := onB.next(t)
	assert.Equal(t, updatedNote(uri), missed.note, "the notification sent while the stream was down")
	require.NotEmpty(t, missed.id)
	assert.NotEqual(t, first.id, missed.id)
	a.app.hub.ResourceUpdated(ctx, "bob", AboutURI)
	rest, marker := onB.untilMarker(t)
	nothingMore(t, rest, uri, "nothing replayed twice, nothing of carol's", []string{missed.id}, a, b)
	onB.close()
	waitSubscribers(t, b.app.hub, "bob", 0)

	// Resuming from the last id, on A this time: nothing missed.
	again := a.openResume(t, bob, "bob", session, marker, 1)
	a.app.hub.ResourceUpdated(ctx, "bob", AboutURI)
	rest, _ = again.untilMarker(t)
	nothingMore(t, rest, uri, "nothing missed since the marker (resumed from "+marker+")", []string{missed.id}, a, b)
	again.close()
	waitSubscribers(t, a.app.hub, "bob", 0)

	// Ids the log cannot place for bob: a clean restart, without ids
	// (list_changed, the tool watcher's, the updates of his subscriptions).
	restart := []idMessage{{note: listChangedNote()}, {note: note{Method: "notifications/tools/list_changed"}},
		{note: updatedNote(AboutURI)}, {note: updatedNote(uri)}}
	tag, _, _ := strings.Cut(first.id, ".")
	for name, last := range map[string]string{
		"forged":                         "forged",
		"bob's tag, unknown log id":      tag + ".1-1",
		"carol's":                        carolFirst.id,
		"carol's log id under bob's tag": tag + "." + carolW.logID,
	} {
		st := b.openResume(t, bob, "bob", session, last, 1)
		got := make([]idMessage, 0, len(restart))
		for range restart {
			got = append(got, st.next(t))
		}
		assert.Equal(t, restart, got, name)
		a.app.hub.ResourceUpdated(ctx, "bob", AboutURI)
		rest, _ := st.untilMarker(t)
		assert.Empty(t, rest, name)
		st.close()
		waitSubscribers(t, b.app.hub, "bob", 0)
	}
	b.app.hub.ResourceUpdated(ctx, "carol", AboutURI)
	rest, _ = carolGET.untilMarker(t)
	assert.Equal(t, []idMessage{{id: rest[0].id, note: listChangedNote()}}, rest, "carol's second change, and nothing of bob's")
}

// An id of carol's log that is also a position of bob's (both logs had
// an entry in that millisecond: Redis numbers each stream's entries on
// its own), under bob's tag: bob's stream resumes from his own position,
// and is given his own events after it, nothing of carol's.
func TestRedisResumeSharedID(t *testing.T) {
	rs := startRedis(t)
	idp := startIdentityProvider(t, prodResource)
	db := "sqlite:" + t.TempDir() + "/documents.db"
	s := start(t, func(c *Config) { jwtConfig(idp)(c); c.DB, c.Redis = db, rs.url() })
	require.NotNil(t, s.app.redis.events)
	waitRedisListening(t, s.app.redis.broker)
	ctx := context.Background()
	bob, carol := idp.token(t, "bob", ScopeRead), idp.token(t, "carol", ScopeRead)

	// bob's tag, from an event of his.
	bobW := watch(t, s, s, bob, "bob")
	session, tag := bobW.session, bobW.tag
	bobW.stream.close()
	waitSubscribers(t, s.app.hub, "bob", 0)
	waitRedisPast(t, rs, bobW.logID)

	// A change of carol's; bob's log is given an entry of the same id, as
	// Redis does when both are appended in one millisecond.
	carolW := watch(t, s, s, carol, "carol")
	carolGET, shared := carolW.stream, carolW.logID
	rc := rs.client(t)
	// The entry carries the Redis history that wrote it, as the log's do
	// (redisstore: ":run:replid", the first 12 digits of the run id and
	// of the replication id, outside a cluster); without, the log would
	// take the stream for one a restarted Redis may have lost entries of,
	// and start it over.
	info, err := rc.Info(ctx, "server", "replication").Result()
	require.NoError(t, err)
	_, run, _ := strings.Cut(info, "run_id:")
	_, repl, _ := strings.Cut(info, "master_replid:")
	require.GreaterOrEqual(t, len(run), 12)
	require.GreaterOrEqual(t, len(repl), 12)
	require.NoError(t, rc.XAdd(ctx, &redis.XAddArgs{Stream: eventLogKey("bob"), ID: shared, Values: []string{"k", "l", "r", ":" + run[:12] + ":" + repl[:12]}}).Err())

	// After it: an update of bob's, and a change of carol's.
	s.app.hub.ResourceUpdated(ctx, "bob", AboutURI)
	s.app.hub.ListChanged(ctx, "carol")

	st := s.openResume(t, bob, "bob", session, tag+"."+shared, 1)
	missed := st.next(t)
	assert.Equal(t, updatedNote(AboutURI), missed.note, "bob's own event after the shared id")
	missedTag, missedLogID, _ := strings.Cut(missed.id, ".")
	assert.Equal(t, tag, missedTag)
	assert.True(t, streamIDAfter(t, missedLogID, shared), missed.id)
	s.app.hub.ResourceUpdated(ctx, "bob", AboutURI)
	rest, _ := st.untilMarker(t)
	assert.Empty(t, rest, "nothing of carol's")

	s.app.hub.ResourceUpdated(ctx, "carol", AboutURI)
	rest, _ = carolGET.untilMarker(t)
	require.Len(t, rest, 1, "carol's second change, and nothing of bob's")
	assert.Equal(t, listChangedNote(), rest[0].note)
}

// watched is a legacy stream of a subject subscribed to AboutURI, and
// the first event it was given: a list change.
type watched struct {
	session string
	stream  *idStream
	first   idMessage
	tag     string // first.id's tag (the subject's)
	logID   string // first.id's position in the subject's log
}

// watch opens subject's session and stream on s, subscribed to AboutURI,
// has via's hub announce a list change for subject, and returns the
// stream with that first event.
func watch(t *testing.T, s, via *testServer, token, subject string) watched {
	t.Helper()
	w := watched{session: s.initialize(t, token)}
	s.subscribe(t, token, w.session, AboutURI)
	w.stream = s.openResume(t, token, subject, w.session, "", 1)
	via.app.hub.ListChanged(context.Background(), subject)
	w.first = w.stream.next(t)
	require.Equal(t, listChangedNote(), w.first.note)
	var ok bool
	w.tag, w.logID, ok = strings.Cut(w.first.id, ".")
	require.True(t, ok, w.first.id)
	return w
}

// eventLogKey is the Redis stream of subject's events in redisstore's
// EventLog with the default prefix (the prefix and the base64url of the
// SHA-256 of the key).
func eventLogKey(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return redisstore.DefaultEventLogPrefix + base64.RawURLEncoding.EncodeToString(sum[:])
}

// waitRedisPast waits until rs's clock is past the millisecond of the
// stream id id: every entry appended after it has a greater millisecond.
func waitRedisPast(t *testing.T, rs *redisServer, id string) {
	t.Helper()
	ms, _, ok := strings.Cut(id, "-")
	require.True(t, ok, id)
	at, err := strconv.ParseInt(ms, 10, 64)
	require.NoError(t, err, id)
	c := rs.client(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		now, err := c.Time(context.Background()).Result()
		require.NoError(t, err)
		if now.UnixMilli() > at {
			return
		}
		require.True(t, time.Now().Before(deadline), "Redis's clock stays at %d", now.UnixMilli())
		time.Sleep(time.Millisecond)
	}
}

// streamIDAfter reports whether the stream id a ("ms-seq") comes after b.
func streamIDAfter(t *testing.T, a, b string) bool {
	t.Helper()
	parse := func(id string) (uint64, uint64) {
		ms, seq, ok := strings.Cut(id, "-")
		require.True(t, ok, id)
		m, err := strconv.ParseUint(ms, 10, 64)
		require.NoError(t, err, id)
		n, err := strconv.ParseUint(seq, 10, 64)
		require.NoError(t, err, id)
		return m, n
	}
	am, as := parse(a)
	bm, bs := parse(b)
	return am > bm || am == bm && as > bs
}

// One instance without -redis: the hub's own notify.MemoryLog gives the
// ids, and a stream that reconnects to the same instance is given what
// it missed.
func TestResumeSingleInstance(t *testing.T) {
	s := start(t, nil)
	require.Nil(t, s.app.redis)
	ctx := context.Background()
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	id := s.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	session := s.initialize(t, bob)
	s.subscribe(t, bob, session, uri)
	st := s.openResume(t, bob, "bob", session, "", 1)
	s.share(t, alice, id, "bob")
	first := st.next(t)
	assert.Equal(t, listChangedNote(), first.note)
	require.NotEmpty(t, first.id)
	st.close()
	waitSubscribers(t, s.app.hub, "bob", 0)

	s.update(t, alice, id, "Edited while bob was away.")
	st = s.openResume(t, bob, "bob", session, first.id, 1)
	missed := st.next(t)
	assert.Equal(t, updatedNote(uri), missed.note)
	assert.NotEmpty(t, missed.id)
	s.app.hub.ListChanged(ctx, "bob")
	end := st.next(t)
	assert.Equal(t, listChangedNote(), end.note, "nothing replayed twice")
	assert.NotEmpty(t, end.id)
}

// nothingMore fails t unless rest is empty, or holds only updates of uri
// that are the edit the client had already (had: its ids) arriving late
// on this instance — delivery is at least once: a late event may be one
// the client lacks, so the server sends it (see sessions' resume) — or
// sent again, recorded anew, by a hub that logged a failure to record or
// publish it (notify.Hub.Publish's documented recovery). Never anything
// else, never carol's.
func nothingMore(t *testing.T, rest []idMessage, uri, what string, had []string, servers ...*testServer) {
	t.Helper()
	if len(rest) == 0 {
		return
	}
	var logs strings.Builder
	failed := false
	for i, s := range servers {
		for line := range strings.Lines(s.logs.String()) {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				fmt.Fprintf(&logs, "server %d: %s", i, line)
			}
			if strings.Contains(line, "notify: recording an event failed") || strings.Contains(line, "notify: publishing an event failed") {
				failed = true
			}
		}
	}
	for _, m := range rest {
		if m.note != updatedNote(uri) || m.id == "" || !failed && !slices.Contains(had, m.id) {
			t.Errorf("%s: got %v\nthe servers' warnings:\n%s", what, rest, logs.String())
			return
		}
	}
	t.Logf("%s: %v again (late, or after a failure the hub logged):\n%s", what, rest, logs.String())
}

package intercept_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/principal"
)

// fakeSessions stands for the sessions part: it adopts every signed-in
// caller's session (unless refuse), lets only the session's caller
// listen, and sends what the test puts in notes.
type fakeSessions struct {
	refuse bool
	notes  chan []byte   // what Listen sends next
	sent   chan error    // the outcome of each send
	listen chan struct{} // a Listen began

	mu      sync.Mutex
	adopted map[string]principal.Principal
	ended   []string
	active  int // Listen calls that have not returned
}

func newFakeSessions() *fakeSessions {
	return &fakeSessions{notes: make(chan []byte), sent: make(chan error, 10), listen: make(chan struct{}, 10),
		adopted: map[string]principal.Principal{}}
}

func (s *fakeSessions) Adopt(_ context.Context, id string, caller principal.Principal) bool {
	if s.refuse {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adopted[id] = caller
	return true
}

func (s *fakeSessions) Listen(ctx context.Context, id string, caller principal.Principal, send func([]byte) error) error {
	s.mu.Lock()
	owner, ok := s.adopted[id]
	if !ok || owner.Key() != caller.Key() {
		s.mu.Unlock()
		return errors.New("not this caller's session")
	}
	s.active++
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.active--; s.mu.Unlock() }()
	s.listen <- struct{}{}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-s.notes:
			err := send(m)
			s.sent <- err
			if err != nil {
				return err
			}
		}
	}
}

func (s *fakeSessions) End(_ context.Context, id string, caller *principal.Principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	who := "anonymous"
	if caller != nil {
		who = caller.Subject
	}
	s.ended = append(s.ended, id+" by "+who)
	if owner, ok := s.adopted[id]; ok && caller != nil && owner.SessionKey() == caller.SessionKey() {
		delete(s.adopted, id)
	}
}

func (s *fakeSessions) Bound(_ context.Context, id string, caller principal.Principal) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.adopted[id]
	return ok && owner.SessionKey() == caller.SessionKey(), nil
}

func (s *fakeSessions) listening() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// streamLegacy is a stateful legacy handler: initialize begins
// "legacy-session"; its GET stream writes what the test sends on steps
// (acknowledging each on wrote) until steps is closed or the client
// leaves; DELETE of it succeeds, of anything else is 404.
type streamLegacy struct {
	steps chan string
	wrote chan struct{}
	auth  guarded[principal.Principal] // the principal in the context of the last request
}

// guarded is a value guarded by a mutex.
type guarded[T any] struct {
	mu sync.Mutex
	v  T
	ok bool
}

func (a *guarded[T]) set(v T, ok bool) { a.mu.Lock(); a.v, a.ok = v, ok; a.mu.Unlock() }
func (a *guarded[T]) get() (T, bool)   { a.mu.Lock(); defer a.mu.Unlock(); return a.v, a.ok }

func newStreamLegacy() *streamLegacy {
	return &streamLegacy{steps: make(chan string), wrote: make(chan struct{})}
}

func (l *streamLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.auth.set(principal.FromContext(r.Context()))
	switch r.Method {
	case http.MethodDelete:
		if r.Header.Get("Mcp-Session-Id") != "legacy-session" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		if r.Header.Get("Mcp-Session-Id") != "legacy-session" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case s, ok := <-l.steps:
				if !ok {
					return
				}
				_, _ = io.WriteString(w, s)
				w.(http.Flusher).Flush()
				l.wrote <- struct{}{}
			}
		}
	default:
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"initialize"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "legacy-session")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`)
	}
}

// write has legacy write s on its stream, and waits until it has.
func (l *streamLegacy) write(t *testing.T, s string) {
	t.Helper()
	select {
	case l.steps <- s:
	case <-time.After(5 * time.Second):
		t.Fatal("legacy's stream is not running")
	}
	recv(t, l.wrote)
}

// recv returns the next value of ch, failing the test after 5 s.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing within 5s")
		panic("unreachable")
	}
}

// give sends v on ch, failing the test after 5 s.
func give[T any](t *testing.T, ch chan<- T, v T) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(5 * time.Second):
		t.Fatal("nobody received within 5s")
	}
}

func sessionsFixture(t *testing.T, sessions *fakeSessions, opts ...func(*intercept.Options)) (*mcptest.Fixture, *streamLegacy, http.Handler) {
	t.Helper()
	f := mcptest.New(t, mcptest.Options{}, mcphttp.PartFunc(func(s *mcphttp.Setup) error { seam.Of(s).Notifying(); return nil }))
	legacy := newStreamLegacy()
	o := intercept.Options{Sessions: sessions}
	for _, fn := range opts {
		fn(&o)
	}
	h, err := intercept.New(f.EP, legacy, o)
	require.NoError(t, err)
	return f, legacy, h
}

// initialize announces the endpoint's event streams exactly when Sessions
// adopted legacy's session, which it is told about with the caller and
// the version legacy negotiated.
func TestSessionsAdoptLegacySessions(t *testing.T) {
	sessions := newFakeSessions()
	f, legacy, h := sessionsFixture(t, sessions)
	token := f.Token(t, "alice")

	w := serve(h, request(initBody, map[string]string{"Authorization": "Bearer " + token}))
	require.Equal(t, http.StatusOK, w.Code)
	caps := capsOf(t, w, w.Body.Bytes())
	assert.JSONEq(t, `{"subscribe":true,"listChanged":true}`, string(caps["resources"]))
	assert.Equal(t, "alice", sessions.adopted["legacy-session"].Subject)
	p, ok := legacy.auth.get()
	require.True(t, ok, "legacy gets the caller in the context: authenticated once")
	assert.Equal(t, "alice", p.Subject)

	// Refused credentials and anonymous callers never reach legacy; an
	// anonymous caller forwarded (ForwardAnonymous) or a refusing
	// Sessions: not adopted.
	for _, authz := range []string{"", "Bearer not-a-token"} {
		r := request(initBody, nil)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		w = serve(h, r)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "authorization %q", authz)
	}
	anonymous := newFakeSessions()
	_, _, ha := sessionsFixture(t, anonymous, func(o *intercept.Options) { o.ForwardAnonymous = true })
	w = serve(ha, request(initBody, nil))
	caps = capsOf(t, w, w.Body.Bytes())
	assert.JSONEq(t, `{"subscribe":false,"listChanged":false}`, string(caps["resources"]))
	assert.Empty(t, anonymous.adopted)
	refusing := newFakeSessions()
	refusing.refuse = true
	f2, _, h2 := sessionsFixture(t, refusing)
	w = serve(h2, request(initBody, map[string]string{"Authorization": "Bearer " + f2.Token(t, "alice")}))
	require.Equal(t, http.StatusOK, w.Code, "a session Sessions refuses is recorded by the handler")
	caps = capsOf(t, w, w.Body.Bytes())
	assert.JSONEq(t, `{"subscribe":false,"listChanged":false}`, string(caps["resources"]))

	// A DELETE legacy accepts ends the session; one naming a session that
	// is not the caller's never reaches legacy (404); after the end, the
	// session is unknown.
	r := httptest.NewRequest(http.MethodDelete, mcptest.Resource, nil)
	r.Header.Set("Mcp-Session-Id", "other-session")
	r.Header.Set("Authorization", "Bearer "+token)
	assert.Equal(t, http.StatusNotFound, serve(h, r).Code)
	r.Header.Set("Mcp-Session-Id", "legacy-session")
	r.Header.Set("Authorization", "Bearer "+f.Token(t, "bob"))
	assert.Equal(t, http.StatusNotFound, serve(h, r).Code, "bob cannot end alice's session")
	r.Header.Del("Authorization")
	assert.Equal(t, http.StatusNotFound, serve(h, r).Code, "nor can an anonymous caller")
	r.Header.Set("Authorization", "Bearer "+token)
	assert.Equal(t, http.StatusNoContent, serve(h, r).Code)
	assert.Equal(t, http.StatusNotFound, serve(h, r).Code, "ended")
	assert.Equal(t, []string{"legacy-session by alice"}, sessions.ended)
}

// The endpoint's notifications are merged into legacy's GET stream of the
// session, each an event of its own between legacy's events — never in
// the middle of one — without an SSE id; the stream's end ends Listen.
func TestSessionsMergeIntoTheLegacyStream(t *testing.T) {
	sessions := newFakeSessions()
	f, legacy, h := sessionsFixture(t, sessions)
	token := f.Token(t, "alice")
	require.Equal(t, http.StatusOK, serve(h, request(initBody, map[string]string{"Authorization": "Bearer " + token})).Code)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // a failed test leaves no stream behind
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, mcptest.Resource, nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", "legacy-session")
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	served := make(chan struct{})
	go func() { defer close(served); h.ServeHTTP(w, r) }()
	recv(t, sessions.listen)

	const (
		legacyEvent = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
		kit1        = `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
		kit2        = "{\"jsonrpc\":\"2.0\",\n\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"docs://documents/alice-0001\"}}"
	)
	give(t, sessions.notes, []byte(kit1)) // before legacy wrote anything: between events
	require.NoError(t, recv(t, sessions.sent))
	legacy.write(t, legacyEvent)
	legacy.write(t, "event: message\r\nid: 2\r\n") // half an event, CRLF lines
	give(t, sessions.notes, []byte(kit2))
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-sessions.sent:
		t.Fatalf("a notification was written in the middle of legacy's event (%v)", err)
	default:
	}
	legacy.write(t, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n")
	require.NoError(t, recv(t, sessions.sent), "written once legacy's event ended")
	close(legacy.steps)
	recv(t, served)
	assert.Zero(t, sessions.listening(), "Listen has returned when ServeHTTP does")

	want := "event: message\ndata: " + kit1 + "\n\n" +
		legacyEvent +
		"event: message\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"docs://documents/alice-0001\"}}\n\n"
	assert.Equal(t, want, w.Body.String())
	assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
}

// Over a real connection: the client gets the endpoint's notification
// while the stream is open, and leaving ends Listen. Another caller, an
// anonymous one, or an unknown session get legacy's stream alone.
func TestSessionsStreamOverHTTP(t *testing.T) {
	sessions := newFakeSessions()
	f, _, h := sessionsFixture(t, sessions)
	srv := f.Serve(t, h, nil)
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	resp := srv.Post(t, alice, "", initBody, nil)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	st := mcptest.OpenStream(t, srv.Get(t, alice, "legacy-session", nil))
	t.Cleanup(st.Close) // before the server's Close, which waits for the stream
	recv(t, sessions.listen)
	give(t, sessions.notes, []byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	require.NoError(t, recv(t, sessions.sent))
	ev := st.NextEvent(t)
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, ev.Data)
	assert.Empty(t, ev.ID, "no SSE id of the endpoint's: legacy's resumption stays its own")
	st.Close()
	deadline := time.Now().Add(5 * time.Second)
	for sessions.listening() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Zero(t, sessions.listening(), "the client's leaving ends Listen")

	for _, tok := range []string{bob, ""} {
		resp := srv.Get(t, tok, "legacy-session", nil)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "alice's session is not for token %v", tok != "")
		assert.Zero(t, sessions.listening())
	}
	resp = srv.Get(t, alice, "unknown-session", nil)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// In the 2026-07-28 protocol the endpoint's event stream is a method it
// serves itself: subscriptions/listen is owned like any other.
func TestSubscriptionsListenIsTheEndpoints(t *testing.T) {
	listen := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		seam.Of(s).Notifying()
		s.Handle("subscriptions/listen", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
			return mcphttp.Stream(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
			}), nil
		}, mcphttp.MethodOptions{Era: mcphttp.EraModern})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{}, listen)
	legacy := &permissiveLegacy{}
	h, err := intercept.New(f.EP, legacy, intercept.Options{})
	require.NoError(t, err)
	legacy.reset() // New's probe
	body, headers := mcptest.Modern(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{}})
	headers["Authorization"] = "Bearer " + f.Token(t, "alice")
	w := serve(h, request(body, headers))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "notifications/resources/list_changed")
	_, bodies := legacy.seen()
	assert.Empty(t, bodies)
}

// A legacy stream that only flushes its header (no WriteHeader, nothing
// written yet: how an idle GET stream begins) is a stream all the same:
// the endpoint's notifications flow at once.
func TestSessionsStreamThatOnlyFlushed(t *testing.T) {
	sessions := newFakeSessions()
	f := mcptest.New(t, mcptest.Options{}, mcphttp.PartFunc(func(s *mcphttp.Setup) error { seam.Of(s).Notifying(); return nil }))
	idle := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "legacy-session")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}}`)
			return
		}
		if r.Method == http.MethodDelete { // New's probe ends its session
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	h, err := intercept.New(f.EP, idle, intercept.Options{Sessions: sessions})
	require.NoError(t, err)
	srv := f.Serve(t, h, nil)
	token := f.Token(t, "alice")
	resp := srv.Post(t, token, "", initBody, nil)
	resp.Body.Close()
	st := mcptest.OpenStream(t, srv.Get(t, token, "legacy-session", nil))
	t.Cleanup(st.Close)
	recv(t, sessions.listen)
	give(t, sessions.notes, []byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	require.NoError(t, recv(t, sessions.sent))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, st.Next(t))
}

package intercept_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// statefulLegacy stands for a stateful legacy server (go-sdk's
// StreamableHTTPHandler, mcp-go's server): initialize mints a session,
// every other request must name a live one (404 otherwise), a tools/call
// records who called in which session, GET answers an (empty) event
// stream of the session, DELETE ends it.
type statefulLegacy struct {
	mu       sync.Mutex
	next     int
	live     map[string]bool
	calls    []string // "session by subject" of each tools/call
	gets     int
	deleted  []string
	requests int // requests that reached it
}

func newStatefulLegacy() *statefulLegacy { return &statefulLegacy{live: map[string]bool{}} }

func (l *statefulLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	id := r.Header.Get("Mcp-Session-Id")
	var msg struct {
		ID     json.RawMessage
		Method string
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
	}
	if msg.Method == "initialize" {
		l.next++
		id = fmt.Sprintf("sess-%d", l.next)
		l.live[id] = true
		w.Header().Set("Mcp-Session-Id", id)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`)
		return
	}
	if !l.live[id] {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		delete(l.live, id)
		l.deleted = append(l.deleted, id)
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet:
		l.gets++
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return
	}
	if msg.Method == "tools/call" {
		who := "anonymous"
		if p, ok := principal.FromContext(r.Context()); ok {
			who = p.Subject
		}
		l.calls = append(l.calls, id+" by "+who)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[]}}`)
}

// reset forgets what legacy saw (the probe of New); its sessions stay.
func (l *statefulLegacy) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests, l.calls, l.deleted, l.gets = 0, nil, nil, 0
}

func (l *statefulLegacy) stats() (requests int, calls, deleted []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests, append([]string(nil), l.calls...), append([]string(nil), l.deleted...)
}

// bindFixture is intercept in front of a statefulLegacy, with or without
// the sessions part as its Sessions.
type bindFixture struct {
	f      *mcptest.Fixture
	legacy *statefulLegacy
	h      http.Handler
}

func newBindFixture(t *testing.T, withSessions bool, opts intercept.Options) *bindFixture {
	t.Helper()
	var parts []mcphttp.Part
	if withSessions {
		part, err := sessions.New(notify.New(notify.Options{}), sessions.Options{KeepAlive: time.Hour})
		require.NoError(t, err)
		parts = append(parts, part)
		opts.Sessions = part
	}
	f := mcptest.New(t, mcptest.Options{}, parts...)
	legacy := newStatefulLegacy()
	opts.Logger = quiet
	h, err := intercept.New(f.EP, legacy, opts)
	require.NoError(t, err)
	legacy.reset()
	return &bindFixture{f: f, legacy: legacy, h: h}
}

// do sends a request with token ("" none) naming session ("" none).
func (b *bindFixture) do(method, token, session, body string) *httptest.ResponseRecorder {
	var r *http.Request
	if method == http.MethodPost {
		r = request(body, map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	} else {
		r = httptest.NewRequest(method, mcptest.Resource, nil)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	return serve(b.h, r)
}

// initialize begins a legacy session for token and returns its id.
func (b *bindFixture) initialize(t *testing.T, token string) string {
	t.Helper()
	w := b.do(http.MethodPost, token, "", initBody)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	id := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

const callEcho = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`

// Bob, with his own valid token and alice's Mcp-Session-Id, gets 404 —
// the answer to an unknown session — for a legacy tool call, the GET
// stream and DELETE, and legacy never sees those requests; so does a
// request naming her session without credentials (forwarded anonymous
// requests allowed), one of alice's through another client (the binding
// is the principal's SessionKey), and an id nobody began. Alice is served
// throughout, and her DELETE ends the session. With and without the
// sessions part as Sessions (the binding then lives in its store).
// Before, each of bob's requests reached legacy: his tools/call ran in
// her session, his GET opened her stream and his DELETE ended it (204).
func TestLegacySessionsAreBoundToTheirCaller(t *testing.T) {
	for _, withSessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessions=%v", withSessions), func(t *testing.T) {
			b := newBindFixture(t, withSessions, intercept.Options{ForwardAnonymous: true})
			alice, bob := b.f.Token(t, "alice"), b.f.Token(t, "bob")
			aliceOtherClient := b.f.Issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-2", Scopes: []string{"docs:read"}})
			sid := b.initialize(t, alice)

			w := b.do(http.MethodPost, alice, sid, callEcho)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			before, _, _ := b.legacy.stats()

			for name, tok := range map[string]string{"bob": bob, "anonymous": "", "alice through another client": aliceOtherClient} {
				for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
					w := b.do(method, tok, sid, callEcho)
					assert.Equal(t, http.StatusNotFound, w.Code, "%s %s", name, method)
					if method == http.MethodPost {
						assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}`, w.Body.String())
					}
				}
			}
			w = b.do(http.MethodPost, alice, "sess-unknown", callEcho)
			assert.Equal(t, http.StatusNotFound, w.Code, "an id nobody began")
			after, calls, deleted := b.legacy.stats()
			assert.Equal(t, before, after, "legacy saw none of these")
			assert.Equal(t, []string{sid + " by alice"}, calls)
			assert.Empty(t, deleted)

			// Alice's session goes on: her call, her stream, her DELETE.
			assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, sid, callEcho).Code)
			assert.Equal(t, http.StatusOK, b.do(http.MethodGet, alice, sid, "").Code)
			assert.Equal(t, http.StatusNoContent, b.do(http.MethodDelete, alice, sid, "").Code)
			assert.Equal(t, http.StatusNotFound, b.do(http.MethodPost, alice, sid, callEcho).Code, "ended")
			_, calls, deleted = b.legacy.stats()
			assert.Equal(t, []string{sid + " by alice", sid + " by alice"}, calls)
			assert.Equal(t, []string{sid}, deleted)
		})
	}
}

// A session begun anonymously (anonymous requests forwarded) is nobody's:
// any caller may use it; one begun signed in refuses the anonymous.
func TestAnonymousLegacySessions(t *testing.T) {
	b := newBindFixture(t, false, intercept.Options{ForwardAnonymous: true})
	sid := b.initialize(t, "")
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, "", sid, callEcho).Code)
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, b.f.Token(t, "bob"), sid, callEcho).Code)
	signed := b.initialize(t, b.f.Token(t, "alice"))
	assert.Equal(t, http.StatusNotFound, b.do(http.MethodPost, "", signed, callEcho).Code)
}

// The record is bounded: each principal holds at most
// sessions.DefaultMaxSessionsPerPrincipal sessions; a new one ends the
// oldest, which legacy is told to end (DELETE) and nobody can use again.
func TestLegacySessionRecordIsBounded(t *testing.T) {
	b := newBindFixture(t, false, intercept.Options{})
	alice := b.f.Token(t, "alice")
	var ids []string
	for range sessions.DefaultMaxSessionsPerPrincipal + 1 {
		ids = append(ids, b.initialize(t, alice))
	}
	_, _, deleted := b.legacy.stats()
	assert.Equal(t, []string{ids[0]}, deleted, "legacy is told to end the session the record dropped")
	assert.Equal(t, http.StatusNotFound, b.do(http.MethodPost, alice, ids[0], callEcho).Code)
	for _, id := range ids[1:] {
		assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, id, callEcho).Code)
	}
	// bob's sessions are his own room: alice's are untouched.
	bob := b.f.Token(t, "bob")
	for range sessions.DefaultMaxSessionsPerPrincipal {
		b.initialize(t, bob)
	}
	assert.Equal(t, http.StatusOK, b.do(http.MethodPost, alice, ids[1], callEcho).Code)
}

// With the sessions part's store shared by a fleet, the binding holds on
// every instance: a session begun through one is refused to bob through
// another, and served to alice there.
func TestLegacySessionBindingAcrossAFleet(t *testing.T) {
	store, err := sessions.NewMemoryStore(sessions.Limits{})
	require.NoError(t, err)
	legacy := newStatefulLegacy() // the legacy sessions, reachable from both instances
	var hs []http.Handler
	var f *mcptest.Fixture
	for i := range 2 {
		part, err := sessions.New(notify.New(notify.Options{}), sessions.Options{Store: store, KeepAlive: time.Hour})
		require.NoError(t, err)
		var o mcptest.Options
		if i > 0 {
			first := f.Auth // one issuer for the fleet
			o.Endpoint = func(eo *mcphttp.Options) { eo.Authenticator = first }
		}
		fi := mcptest.New(t, o, part)
		if f == nil {
			f = fi
		}
		h, err := intercept.New(fi.EP, legacy, intercept.Options{Sessions: part, Logger: quiet})
		require.NoError(t, err)
		hs = append(hs, h)
	}
	legacy.reset()
	a := &bindFixture{f: f, legacy: legacy, h: hs[0]}
	bInst := &bindFixture{f: f, legacy: legacy, h: hs[1]}
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	sid := a.initialize(t, alice)
	assert.Equal(t, http.StatusNotFound, bInst.do(http.MethodPost, bob, sid, callEcho).Code)
	assert.Equal(t, http.StatusNotFound, bInst.do(http.MethodDelete, bob, sid, "").Code)
	assert.Equal(t, http.StatusOK, bInst.do(http.MethodPost, alice, sid, callEcho).Code)
}

package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// Sessions lets the endpoint's notifications (resources list_changed and
// updated, tools list_changed) reach the callers of legacy's sessions in
// the legacy protocols. The part that delivers them on the endpoint's own
// sessions (mcphttp/sessions) implements it; give the same value to
// [mcphttp.New] as a part and to [New] in [Options].Sessions.
//
// Legacy owns its sessions and their GET streams: the handler tells
// Sessions which session legacy began for whom (Adopt) and when it ended
// one (End), and while legacy serves a session's GET stream, it merges
// what Listen sends into that stream, each notification an event of its
// own between legacy's events, without an SSE id (legacy's event ids, and
// its resumption, stay as they are). The endpoint's methods of an adopted
// session (resources/subscribe) come with legacy's Mcp-Session-Id; so do
// those of a session it did not adopt (an anonymous caller's, one refused
// for room), which belongs to legacy alone: the implementation must serve
// them as without a session, never refuse them as an unknown session. In
// the 2026-07-28 protocol nothing of this is needed: subscriptions/listen
// is a method the endpoint serves itself.
//
// Implementations must be safe for concurrent use.
type Sessions interface {
	// Adopt is told that legacy began session id for caller in a legacy
	// protocol version (every legacy session is served alike): its answer to caller's initialize carried Mcp-Session-Id
	// id. It reports whether the endpoint will deliver notifications on
	// the session; the initialize answer then announces the endpoint's
	// capabilities with event streams (resources subscribe and
	// listChanged). Anonymous callers, and legacy handlers without
	// sessions (stateless), are never adopted.
	Adopt(ctx context.Context, id string, caller principal.Principal) bool
	// Listen delivers the endpoint's notifications for session id to
	// caller, each with one call of send (a JSON-RPC notification
	// message), until ctx is done or send fails. It returns at once, with
	// an error, for a session it did not adopt or that caller does not
	// own.
	Listen(ctx context.Context, id string, caller principal.Principal, send func(msg []byte) error) error
	// End is told that legacy ended session id: it answered a DELETE of
	// it, sent by caller (nil: anonymous), with a success.
	End(ctx context.Context, id string, caller *principal.Principal)
	// Bound reports whether id is a live session Adopt recorded for
	// caller (the same principal.Principal.SessionKey), and records its
	// use (its idle timer starts again). It reports false for a session
	// it did not adopt, one that ended or expired, and another caller's:
	// the handler answers such a request 404, as for an unknown session.
	// An error (its store failing) is answered 503.
	Bound(ctx context.Context, id string, caller principal.Principal) (bool, error)
}

// versionOf returns the protocol version of legacy's recorded answer to
// an initialize request, "" for another answer.
func (h *handler) versionOf(rec *recorder, msg jsonrpc.Message) string {
	if msg.Method != "initialize" {
		return ""
	}
	raw, ok := resultOf(rec, msg.ID.Raw())
	var result struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if !ok || json.Unmarshal(raw, &result) != nil {
		return ""
	}
	return result.ProtocolVersion
}

// serveVerb answers a request other than POST: legacy's, once its caller
// may use the session it names, with the endpoint's notifications merged
// into a session's GET stream, and the end of a session recorded.
func (h *handler) serveVerb(w http.ResponseWriter, r *http.Request) {
	r, caller := h.caller(r)
	if h.enforce {
		if err := mcpwire.AuthRefusal(r.Context()); err != nil {
			h.auth.WriteError(w, r, err)
			return
		}
	}
	if h.checkSession(w, r, caller) {
		return
	}
	if h.enforce && caller == nil && !h.opts.ForwardAnonymous {
		h.auth.WriteError(w, r, principal.ErrUnauthenticated)
		return
	}
	session := r.Header.Get(mcpwire.HeaderSessionID)
	switch {
	case session == "":
		h.legacy.ServeHTTP(w, r)
	case r.Method == http.MethodDelete:
		sw := &statusWriter{ResponseWriter: w}
		h.legacy.ServeHTTP(sw, r)
		if sw.status >= 200 && sw.status < 300 {
			h.unbind(r.Context(), session, caller)
		}
	case r.Method == http.MethodGet && h.sessions != nil && caller != nil:
		h.serveStream(w, r, session, *caller)
	default:
		h.legacy.ServeHTTP(w, r)
	}
}

// serveStream serves legacy's GET stream of session with the endpoint's
// notifications for caller merged in.
func (h *handler) serveStream(w http.ResponseWriter, r *http.Request, session string, caller principal.Principal) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	mw := &mergeWriter{ResponseWriter: w}
	mw.cond.L = &mw.mu
	var done chan struct{}
	mw.onStream = func() {
		done = make(chan struct{})
		go func() {
			defer close(done)
			_ = h.sessions.Listen(ctx, session, caller, mw.send)
		}()
	}
	h.legacy.ServeHTTP(mw, r)
	mw.close()
	cancel()
	if done != nil {
		<-done // nothing writes to w once this returns
	}
}

// errStreamClosed: legacy's stream ended.
var errStreamClosed = errors.New("intercept: the stream has ended")

// mergeWriter is the ResponseWriter of legacy's GET stream: it passes
// legacy's writes through and, once legacy has begun an event stream
// (200, text/event-stream), writes the endpoint's notifications between
// legacy's events.
type mergeWriter struct {
	http.ResponseWriter
	mu       sync.Mutex
	cond     sync.Cond
	onStream func() // called once legacy has begun an event stream

	committed bool
	streaming bool // legacy answered 200 with text/event-stream
	closed    bool // legacy's handler returned
	lineLen   int  // bytes of the current SSE line
	prevCR    bool // the last byte was a CR (a CRLF may follow)
	boundary  bool // legacy's output ends between events
}

func (m *mergeWriter) WriteHeader(status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commit(status)
}

// commit notes legacy's status; mu is held.
func (m *mergeWriter) commit(status int) {
	if m.committed {
		return
	}
	m.committed = true
	m.ResponseWriter.WriteHeader(status)
	if status == http.StatusOK && strings.HasPrefix(m.Header().Get("Content-Type"), "text/event-stream") {
		m.streaming, m.boundary = true, true
		m.onStream()
	}
}

func (m *mergeWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commit(http.StatusOK)
	n, err := m.ResponseWriter.Write(p)
	m.scan(p[:n])
	return n, err
}

// scan follows the SSE lines of legacy's output: the output is between
// events after a blank line (an event's end).
func (m *mergeWriter) scan(p []byte) {
	for _, c := range p {
		switch {
		case c == '\n' && m.prevCR:
			m.prevCR = false // the LF of a CRLF: the line ended at the CR
		case c == '\n' || c == '\r':
			m.boundary = m.lineLen == 0
			m.lineLen, m.prevCR = 0, c == '\r'
		default:
			m.lineLen++
			m.prevCR, m.boundary = false, false
		}
	}
	if m.boundary {
		m.cond.Broadcast()
	}
}

// Flush sends what was written (the header at least: 200, as net/http
// does).
func (m *mergeWriter) Flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commit(http.StatusOK)
	m.flush()
}

func (m *mergeWriter) flush() {
	if f, ok := m.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer.
func (m *mergeWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// send writes one notification as an event of its own, once legacy's
// output is between events.
func (m *mergeWriter) send(msg []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for !m.closed && !m.boundary {
		m.cond.Wait()
	}
	if m.closed {
		return errStreamClosed
	}
	if _, err := m.ResponseWriter.Write(sseEvent(msg)); err != nil {
		return err
	}
	m.flush()
	return nil
}

// close ends every send: legacy's handler has returned.
func (m *mergeWriter) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cond.Broadcast()
}

// statusWriter records the status legacy answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Flush sends what was written.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

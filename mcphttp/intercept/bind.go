package intercept

import (
	"cmp"
	"context"
	"net/http"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
)

// Legacy sessions bound to their callers. Every session legacy begins
// through the handler (an answer carrying an Mcp-Session-Id the request
// did not) is recorded with the caller who began it, and a request naming
// a session is served only for that caller: another principal's, an
// anonymous one on a session begun signed in, and a session never
// recorded (or ended, or expired) are answered 404 Session not found, as
// an unknown session is. A session begun anonymously (only when
// anonymous requests reach legacy) is nobody's: any caller may use it.
//
// With Options.Sessions, a signed-in caller's session is recorded in the
// Sessions' store (Adopt, then Bound), so that every instance of a fleet
// sharing it refuses the same requests; a session it cannot hold (its
// store full or failing) and every session without Sessions are recorded
// in the handler's own bounded record below.

// errSessionNotFound is the answer to a request naming a session that is
// not its caller's: the kit's own answer to an unknown session.
var errSessionNotFound = &mcphttp.Error{Status: http.StatusNotFound, Code: jsonrpc.CodeInvalidRequest, Message: "Session not found"}

// errNoRoom: a session begun when the record is full, or its store fails;
// legacy's session is ended, and the client may try again.
var errNoRoom = &mcphttp.Error{Status: http.StatusServiceUnavailable, Code: jsonrpc.CodeInternalError, Message: "No room for another session", RetryAfter: 1}

// nobody is the owner of the sessions begun anonymously in the record.
var nobody = principal.Principal{Subject: "\x00anonymous"}

// bindings is the handler's own record of legacy sessions: signed-in
// callers' in one bounded store (each principal holds at most
// sessions.DefaultMaxSessionsPerPrincipal sessions, a new one ending its
// oldest; the store at most sessions.DefaultMaxSessions; each ends when
// idle for sessions.DefaultIdleTimeout, after sessions.DefaultLifetime,
// or when the latest credential seen on it expires), anonymous sessions
// in another (so that a crowd of anonymous callers never takes the room
// of signed-in ones; its oldest end first).
type bindings struct {
	signed, anon *sessions.MemoryStore
}

// newBindings returns an empty record bounded by lim (its session
// fields; zero values mean the defaults).
func newBindings(lim sessions.Limits) (*bindings, error) {
	signed, err := sessions.NewMemoryStore(lim)
	if err != nil {
		return nil, err
	}
	anonLim := lim
	anonLim.MaxSessionsPerPrincipal = cmp.Or(lim.MaxSessions, sessions.DefaultMaxSessions)
	anon, err := sessions.NewMemoryStore(anonLim)
	if err != nil {
		return nil, err
	}
	return &bindings{signed: signed, anon: anon}, nil
}

// bind records legacy's new session id for caller (nil: anonymous). It
// reports whether Sessions adopted it (the endpoint's notifications are
// delivered on it), and errNoRoom when it could not be recorded. version
// is the protocol version legacy's initialize answer agreed, "" when the
// answer was not read (a batch): Sessions adopts only a session of a
// legacy version.
func (h *handler) bind(r *http.Request, id string, caller *principal.Principal, version string) (bool, error) {
	ctx := r.Context()
	owner, store := &nobody, h.bound.anon
	if caller != nil {
		owner, store = caller, h.bound.signed
		// An id legacy gave before (anonymously) is the caller's now.
		_ = h.bound.anon.End(ctx, id, &nobody)
		if h.sessions != nil && mcpwire.IsLegacyVersion(version) && h.sessions.Adopt(ctx, id, *caller) {
			return true, nil
		}
	}
	if _, err := store.Find(ctx, id, owner); err == nil {
		return false, nil // legacy named the caller's session again
	}
	ended, err := store.Create(ctx, id, owner)
	for _, old := range ended {
		h.endLegacy(r, old) // a session no request can reach again
	}
	if err != nil {
		return false, errNoRoom
	}
	return false, nil
}

// owns reports whether the session id may be used by caller (nil:
// anonymous): begun by caller, or anonymously.
func (h *handler) owns(ctx context.Context, id string, caller *principal.Principal) (bool, error) {
	if _, err := h.bound.anon.Find(ctx, id, &nobody); err == nil {
		return true, nil
	}
	if caller == nil {
		return false, nil
	}
	if _, err := h.bound.signed.Find(ctx, id, caller); err == nil {
		return true, nil
	}
	if h.sessions == nil {
		return false, nil
	}
	return h.sessions.Bound(ctx, id, *caller)
}

// unbind forgets the session id legacy ended at caller's DELETE.
func (h *handler) unbind(ctx context.Context, id string, caller *principal.Principal) {
	_ = h.bound.anon.End(ctx, id, &nobody)
	if caller != nil {
		_ = h.bound.signed.End(ctx, id, caller)
	}
	if h.sessions != nil {
		h.sessions.End(ctx, id, caller)
	}
}

// checkSession answers a request naming a session its caller may not use
// (404), or a record that cannot be read (503), and reports whether it
// did. A request naming no session passes.
func (h *handler) checkSession(w http.ResponseWriter, r *http.Request, caller *principal.Principal) bool {
	id := r.Header.Get(mcpwire.HeaderSessionID)
	if id == "" {
		return false
	}
	ok, err := h.owns(r.Context(), id, caller)
	switch {
	case err != nil:
		mcphttp.WriteError(w, errNoRoom)
	case !ok:
		mcphttp.WriteError(w, errSessionNotFound)
	default:
		return false
	}
	return true
}

// newSession returns the session legacy's answer begins: its
// Mcp-Session-Id, when the request named none or another one, and the
// answer is a success.
func newSession(r *http.Request, header http.Header, status int) string {
	id := header.Get(mcpwire.HeaderSessionID)
	if id == "" || status < 200 || status > 299 || id == r.Header.Get(mcpwire.HeaderSessionID) {
		return ""
	}
	return id
}

// endLegacy ends legacy's session id (a DELETE, in process): one the
// handler could not record, or whose record ended to make room.
func (h *handler) endLegacy(r *http.Request, id string) {
	del, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodDelete, r.URL.String(), http.NoBody)
	if err != nil {
		return
	}
	del.Header.Set(mcpwire.HeaderSessionID, id)
	for _, k := range []string{"Mcp-Protocol-Version", "Authorization"} {
		if v := r.Header.Values(k); len(v) > 0 {
			del.Header[k] = v
		}
	}
	h.legacy.ServeHTTP(&discard{h: http.Header{}}, del)
}

// discard is the ResponseWriter of a request whose answer nobody reads.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }

// sessionWriter is the ResponseWriter of a request forwarded to legacy:
// when legacy's answer begins a session, it is recorded before the answer
// is sent; one that cannot be recorded is answered 503 instead (legacy's
// answer dropped, its session ended once it returns).
type sessionWriter struct {
	http.ResponseWriter
	h         *handler
	r         *http.Request
	caller    *principal.Principal
	committed bool
	refused   string // the session that could not be recorded
}

func (s *sessionWriter) WriteHeader(status int) {
	if s.committed {
		return
	}
	s.committed = true
	if id := newSession(s.r, s.Header(), status); id != "" {
		if _, err := s.h.bind(s.r, id, s.caller, ""); err != nil {
			s.refused = id
			h := s.Header()
			for k := range h {
				delete(h, k)
			}
			mcphttp.WriteError(s.ResponseWriter, errNoRoom)
			return
		}
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionWriter) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	if s.refused != "" {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}

// Flush sends what was written.
func (s *sessionWriter) Flush() {
	s.WriteHeader(http.StatusOK)
	if f, ok := s.ResponseWriter.(http.Flusher); ok && s.refused == "" {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer.
func (s *sessionWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// forward passes r to legacy as forward does, recording the session its
// answer begins.
func (h *handler) forward(w http.ResponseWriter, r *http.Request, body []byte, caller *principal.Principal) {
	sw := &sessionWriter{ResponseWriter: w, h: h, r: r, caller: caller}
	forward(h.legacy, sw, r, body)
	if sw.refused != "" {
		h.endLegacy(r, sw.refused)
	}
}

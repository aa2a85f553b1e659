package sessions

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/principal"
)

// get serves the legacy GET stream of a session: list_changed (and the
// watchers' notifications) for the session's principal, and
// resources/updated for its subscriptions.
func (ep *endpoint) get(w http.ResponseWriter, r *http.Request, caller *principal.Principal) {
	if !acceptsSSE(r) {
		mcphttp.WriteError(w, errNotAcceptableSSE)
		return
	}
	if caller == nil {
		ep.hooks.WriteAuthError(w, r, principal.ErrUnauthenticated) // streams are per principal: there is none to deliver to
		return
	}
	id := sessionHeader(r)
	if id == "" {
		mcphttp.WriteError(w, errNoSessionHeader)
		return
	}
	// Registered before the session is checked, replacing nothing yet: a
	// DELETE that ends the session after the check ends this stream too.
	att := ep.attached.add(id)
	sess, err := ep.store.Find(r.Context(), id, caller)
	if err != nil {
		ep.attached.remove(id, att)
		if !errors.Is(err, ErrNotFound) {
			ep.storeFailed(r.Context(), "find", err)
			mcphttp.WriteError(w, errStoreFailed)
			return
		}
		mcphttp.WriteError(w, errSessionNotFound)
		return
	}
	key := caller.SessionKey()
	if err := ep.streams.acquire(key); err != nil {
		ep.attached.remove(id, att)
		mcphttp.WriteError(w, err)
		return
	}
	ep.attached.replace(id, att)
	st := &stream{ep: ep, caller: *caller, session: id, att: att,
		deadline: earliest(caller.Expires, sess.Deadline), refresh: refreshInterval(sess)}
	st.tag = eventTag(st.caller.Key())
	st.watch = ep.watch(r.Context(), &st.caller, nil)
	// The stream's priming id: a mark in the event log taken before the
	// stream subscribes, so that whatever is published after it either
	// arrives live or is replayed (see open).
	mark, err := ep.hub.Mark(r.Context(), st.caller.Key())
	if err != nil {
		ep.log.LogAttrs(context.WithoutCancel(r.Context()), slog.LevelError,
			"sessions: the event log failed; the stream starts without an event id", slog.String("err", err.Error()))
		mark = ""
	}
	st.sub = ep.hub.Subscribe(st.caller.Key())
	end := func() {
		st.sub.Close()
		select {
		case <-att.stop: // the session ended or another stream replaced this one
		default:
			// The client went: the session idles from now on.
			_, _ = ep.store.Find(context.WithoutCancel(r.Context()), id, &st.caller)
		}
		ep.attached.remove(id, att)
		ep.streams.release(key)
	}
	out := startSSE(w, r)
	st.out = out
	last, resuming := r.Header[headerLastEventID]
	if st.open(r.Context(), resuming, last, mark) != nil {
		end()
		return
	}
	out.keep(r, &st.caller, st.run, end)
}

// refreshInterval is how often a GET stream tells the store that it is
// open: a quarter of the idle time the session has, so that a session
// with an open stream never idles out, and at least every maxRefresh, so
// that a session ended through another instance, or lost by the store (a
// replica promoted before it had synced), ends the stream here within
// that time. An interval no shorter than KeepAlive is the keep-alive
// wheel's (keepalive.go), which runs it up to a KeepAlive late: within
// half the idle time still.
func refreshInterval(s Session) time.Duration {
	return min(max(time.Until(s.IdleDeadline)/4, 10*time.Millisecond), maxRefresh)
}

// maxRefresh bounds a GET stream's refresh interval: one store operation
// a minute per open stream at most.
const maxRefresh = time.Minute

// delete ends a legacy session (DELETE with Mcp-Session-Id) and its
// stream.
func (ep *endpoint) delete(w http.ResponseWriter, r *http.Request, caller *principal.Principal) {
	id := sessionHeader(r)
	if id == "" {
		mcphttp.WriteError(w, errNoSessionHeader)
		return
	}
	if caller == nil {
		mcphttp.WriteError(w, errSessionNotFound)
		return
	}
	switch err := ep.store.End(r.Context(), id, caller); {
	case errors.Is(err, ErrNotFound):
		mcphttp.WriteError(w, errSessionNotFound)
		return
	case err != nil:
		ep.storeFailed(r.Context(), "end", err)
		mcphttp.WriteError(w, errStoreFailed)
		return
	}
	ep.attached.end(id)
	httpheader.SetPrivate(w.Header())
	w.WriteHeader(http.StatusNoContent)
}

package sessions

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mcpkit/mcpkit/principal"
)

// The part behind mcphttp/intercept, which implements its Sessions: the
// legacy handler owns the sessions and their GET streams, and the part
// delivers the endpoint's notifications into them. An adopted session is
// kept in the part's store under legacy's id, bound to the caller who
// began it, with the limits of any session (the per-principal cap, the
// idle time and lifetime, the credential's expiry); resources/subscribe
// through the endpoint subscribes it. Requests naming a session the part
// did not adopt are served as without a session.

// errNotAdopted: Listen for a session the part did not adopt, or not for
// this caller.
var errNotAdopted = errors.New("sessions: not an adopted session of this caller")

// errFronts: the part was set up on several endpoints, so it cannot tell
// which one is behind the legacy handler.
var errFronts = errors.New("sessions: the part serves several endpoints; give intercept a part of its endpoint's own")

// endpointOf returns the one endpoint the part serves.
func (p *Part) endpointOf() (*endpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.fronts == 0:
		return nil, errors.New("sessions: the part serves no endpoint: give it to mcphttp.New first")
	case p.fronts > 1:
		return nil, errFronts
	}
	return p.front, nil
}

// Adopt records legacy's session id for caller (see intercept.Sessions),
// and reports whether it did: not when the part is set up on no endpoint
// or several, the store is full or already holds id, or it fails
// (logged). A caller at its cap of sessions has its oldest adopted one
// ended to make room (legacy's session goes on, without the endpoint's
// notifications), as initialize does.
func (p *Part) Adopt(ctx context.Context, id string, caller principal.Principal) bool {
	ep, err := p.endpointOf()
	if err != nil {
		return false
	}
	ended, err := p.store.Create(ctx, id, &caller)
	p.attached.end(ended...)
	if err != nil {
		if !errors.Is(err, ErrFull) {
			ep.storeFailed(ctx, "adopt", err)
		}
		return false
	}
	return true
}

// Listen delivers the endpoint's notifications for an adopted session to
// its caller with send, until ctx is done, send fails, the session ends
// (End, or through another instance), the caller's credential expires or
// the hub closes: what the part's own GET stream would carry —
// notifications/resources/list_changed, the watchers' notifications and
// notifications/resources/updated for the session's subscriptions — one
// message per call of send. It returns at once for a session the part did
// not adopt or that caller does not own, and when the caller holds its
// cap of streams (the legacy stream goes on without the endpoint's
// notifications). A new Listen of the session ends the older one, as a
// new GET does.
func (p *Part) Listen(ctx context.Context, id string, caller principal.Principal, send func(msg []byte) error) error {
	ep, err := p.endpointOf()
	if err != nil {
		return err
	}
	att := p.attached.add(id)
	sess, err := p.store.Find(ctx, id, &caller)
	if err != nil {
		p.attached.remove(id, att)
		if errors.Is(err, ErrNotFound) {
			return errNotAdopted
		}
		ep.storeFailed(ctx, "find", err)
		return err
	}
	key := caller.SessionKey()
	if err := p.streams.acquire(key); err != nil {
		p.attached.remove(id, att)
		ep.log.LogAttrs(ctx, slog.LevelWarn, "sessions: a legacy stream goes without the endpoint's notifications: too many open streams")
		return err
	}
	p.attached.replace(id, att)
	st := &stream{ep: ep, out: sendOutput(send), caller: caller, session: id, att: att,
		deadline: earliest(caller.Expires, sess.Deadline), refresh: refreshInterval(sess)}
	st.watch = ep.watch(ctx, &st.caller, nil)
	st.sub = ep.hub.Subscribe(st.caller.Key())
	defer func() {
		st.sub.Close()
		p.attached.remove(id, att)
		p.streams.release(key)
	}()
	st.run(ctx)
	return ctx.Err()
}

// End ends an adopted session that legacy ended (a DELETE of caller's),
// and its Listen. A session the part did not adopt, or another caller's,
// is left alone.
func (p *Part) End(ctx context.Context, id string, caller *principal.Principal) {
	if caller == nil {
		return
	}
	ep, err := p.endpointOf()
	if err != nil {
		return
	}
	switch err := p.store.End(ctx, id, caller); {
	case err == nil:
		p.attached.end(id)
	case !errors.Is(err, ErrNotFound):
		ep.storeFailed(ctx, "end", err)
	}
}

// Bound reports whether id is a live session the part adopted for caller
// (see intercept.Sessions), and records its use as a request naming it
// does: its idle timer starts again. It reports false for a session the
// part did not adopt, one ended or expired, and another caller's; an
// error when the store fails (logged).
func (p *Part) Bound(ctx context.Context, id string, caller principal.Principal) (bool, error) {
	ep, err := p.endpointOf()
	if err != nil {
		return false, nil
	}
	switch _, err := p.store.Find(ctx, id, &caller); {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	default:
		ep.storeFailed(ctx, "find", err)
		return false, err
	}
}

package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"slices"

	"github.com/mcpkit/mcpkit/notify"
)

// Event ids and Last-Event-ID (legacy era). Every message of a GET stream
// that ends an event's delivery carries an SSE id: the tag of the
// stream's principal and the event's id in the hub's log,
//
//	<tag>.<log id>    tag: base64url of 9 bytes of SHA-256 of the principal's identity key
//
// A GET with Last-Event-ID subscribes first, then asks the log for what
// the principal's key received after that id (hub.Since, scoped to the
// caller's own key whatever the id holds), replays it through the same
// delivery as live events (the session's subscriptions and the caller's
// access as they are now), and skips the live events it replayed. An id
// that is malformed, of another principal (its tag), unknown to the log,
// older than what it keeps, or that the log cannot be asked about now,
// gets a clean restart instead: list_changed, the watchers'
// notifications, and updated for each URI the session subscribed to and
// the caller may read, so that the client lists and reads again. The
// restart's messages carry no id: the next event's gives one.

// tagLen is the length of an event id's tag.
const tagLen = 12

// eventTag returns the tag of the event ids of key's streams. It tells a
// stream's own ids from another principal's; it is not a secret, and
// guessing one gains nothing: the log is asked about the caller's key
// only.
func eventTag(key string) string {
	sum := sha256.Sum256([]byte("mcpkit sse event id\x00" + key))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// formatEventID returns the SSE id of the event logged as id on a stream
// whose tag is tag.
func formatEventID(tag, id string) string { return tag + "." + id }

// parseEventID returns the log id in a Last-Event-ID value v, if v is an
// event id of a stream whose tag is tag.
func parseEventID(v, tag string) (string, bool) {
	if len(v) < tagLen+2 || len(v) > tagLen+1+notify.MaxIDLen || v[tagLen] != '.' || v[:tagLen] != tag {
		return "", false
	}
	id := v[tagLen+1:]
	return id, notify.ValidID(id)
}

// headerLastEventID is the canonical form of the Last-Event-ID header.
const headerLastEventID = "Last-Event-Id"

// resume serves a GET stream's Last-Event-ID (values: the header's): the
// replay of what the client missed, or a clean restart.
func (st *stream) resume(ctx context.Context, values []string) error {
	key := st.caller.Key()
	var missed []notify.Event
	ok := false
	if id, valid := "", len(values) == 1; valid {
		if id, valid = parseEventID(values[0], st.tag); valid {
			var err error
			if missed, ok, err = st.ep.hub.Since(ctx, key, id); err != nil {
				st.ep.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError,
					"sessions: the event log failed; the stream starts over", slog.String("err", err.Error()))
				ok = false
			}
		}
	}
	st.listSubscriptions(ctx)
	defer func() { st.subs, st.hasSubs = nil, false }()
	if !ok {
		return st.restart(ctx)
	}
	// The watchers' views may have changed while the stream was away: the
	// first list_changed replayed also says theirs.
	for i := range st.watch {
		st.watch[i].unknown = true
	}
	defer func() {
		for i := range st.watch {
			st.watch[i].unknown = false
		}
	}()
	st.replayed = make(map[string]struct{}, len(missed))
	for _, ev := range missed {
		st.replayed[ev.ID] = struct{}{}
		if err := st.deliver(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// restart sends what makes a client list and read again.
func (st *stream) restart(ctx context.Context) error {
	msgs := [][]byte{msgListChanged}
	for i := range st.watch {
		msgs = append(msgs, st.message(st.watch[i].w.Notification, ""))
	}
	for _, uri := range st.subs {
		if st.ep.canRead(ctx, &st.caller, uri) {
			msgs = append(msgs, st.message("notifications/resources/updated", uri))
		}
	}
	return st.send("", msgs)
}

// listSubscriptions takes the session's subscriptions once, for a replay
// or a restart, when the store can list them.
func (st *stream) listSubscriptions(ctx context.Context) {
	lister, ok := st.ep.store.(SubscriptionLister)
	if !ok {
		return
	}
	subs, err := lister.Subscriptions(ctx, st.session)
	if err != nil {
		st.ep.storeFailed(ctx, "subscriptions", err)
		return
	}
	slices.Sort(subs) // the restart's updates in an order tests can tell
	st.subs, st.hasSubs = subs, true
}

// duplicate reports whether ev is a live event the stream replayed already
// (each arrives live at most once, so it is forgotten then).
func (st *stream) duplicate(ev notify.Event) bool {
	if st.replayed == nil || ev.ID == "" {
		return false
	}
	if _, dup := st.replayed[ev.ID]; dup {
		delete(st.replayed, ev.ID)
		return true
	}
	return false
}

// send writes the messages of one event; the last carries its SSE id on
// a legacy GET stream.
func (st *stream) send(id string, msgs [][]byte) error {
	for i, m := range msgs {
		sid := ""
		if i == len(msgs)-1 && id != "" && st.tag != "" {
			sid = formatEventID(st.tag, id)
		}
		if err := st.out.message(sid, m); err != nil {
			return err
		}
	}
	return nil
}

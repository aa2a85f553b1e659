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
// Every GET stream starts with a priming event: an id and empty data,
// which clients keep as their Last-Event-ID and dispatch nothing for. A
// new stream's is a mark the hub records in the log (hub.Mark) before the
// stream subscribes; the events published between the mark and the
// subscription are replayed right after the priming event, the later
// ones arrive live. So a stream cut at any point, even before its first
// event, resumes with the id the client last got, on any instance that
// shares the log, with nothing lost. A resumed stream's priming event
// repeats the client's Last-Event-ID; a restart's (below) comes after
// the restart's messages, so a stream cut before them restarts again.
// When the server closes a stream's connection on purpose (the
// credential or the session ended, the instance shuts down, the client
// fell behind) it sends a retry field first. If the log cannot record
// the mark, the stream opens with a comment instead, as before there
// were marks.
//
// A GET with Last-Event-ID subscribes first, then asks the log for what
// the principal's key received after that id (hub.Since, scoped to the
// caller's own key whatever the id holds), replays it through the same
// delivery as live events (the session's subscriptions and the caller's
// access as they are now), and skips the live events it replayed, and the
// event it resumed from should it arrive late (see duplicate). An id
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

// open starts a GET stream after its headers: the priming event, and the
// replay of what the client missed (resuming: Last-Event-ID's values) or
// of what was published since mark, the new stream's place in the log
// ("" when the log could not record one).
func (st *stream) open(ctx context.Context, resuming bool, last []string, mark string) error {
	if resuming {
		if missed, ok := st.since(ctx, last); ok {
			st.anchor, _ = parseEventID(last[0], st.tag)
			if err := st.out.prime(last[0]); err != nil {
				return err
			}
			return st.replay(ctx, missed, true)
		}
		st.listSubscriptions(ctx)
		err := st.restart(ctx)
		st.subs, st.hasSubs = nil, false
		if err != nil {
			return err
		}
	}
	if mark == "" {
		return st.out.comment("stream open")
	}
	if err := st.out.prime(formatEventID(st.tag, mark)); err != nil {
		return err
	}
	// What was published between the mark and the subscription: usually
	// nothing, and the log at hand.
	missed, ok, err := st.ep.hub.Since(ctx, st.caller.Key(), mark)
	if err != nil {
		st.ep.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError,
			"sessions: the event log failed; events published as the stream opened may be missed", slog.String("err", err.Error()))
		return nil
	}
	if !ok || len(missed) == 0 {
		return nil
	}
	return st.replay(ctx, missed, false)
}

// since returns what the client missed after the event id of a
// Last-Event-ID header (values), and whether the log could tell.
func (st *stream) since(ctx context.Context, values []string) ([]notify.Event, bool) {
	if len(values) != 1 {
		return nil, false
	}
	id, valid := parseEventID(values[0], st.tag)
	if !valid {
		return nil, false
	}
	missed, ok, err := st.ep.hub.Since(ctx, st.caller.Key(), id)
	if err != nil {
		st.ep.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError,
			"sessions: the event log failed; the stream starts over", slog.String("err", err.Error()))
		return nil, false
	}
	return missed, ok
}

// replay delivers missed events (subscribed already: the live ones among
// them are skipped when they arrive). away: the client was away, so the
// watchers' views may have changed meanwhile and the first list_changed
// replayed also says theirs.
func (st *stream) replay(ctx context.Context, missed []notify.Event, away bool) error {
	st.listSubscriptions(ctx)
	defer func() { st.subs, st.hasSubs = nil, false }()
	if away {
		for i := range st.watch {
			st.watch[i].unknown = true
		}
		defer func() {
			for i := range st.watch {
				st.watch[i].unknown = false
			}
		}()
	}
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
// (each arrives live at most once, so it is forgotten then), or the event
// the stream resumed from (Last-Event-ID), arriving late: the client has
// it. Any other late event is delivered, even one the log places before
// the resume point: the log's order is not the order the client received
// events in (two instances publish in their own order), so the client may
// lack it. At least once, never lost: a client may see an update twice.
func (st *stream) duplicate(ev notify.Event) bool {
	if ev.ID == "" {
		return false
	}
	if ev.ID == st.anchor {
		st.anchor = "" // arrives once
		return true
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

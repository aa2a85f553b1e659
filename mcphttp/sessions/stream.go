package sessions

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// stream is one open event stream: a legacy session's GET stream, or a
// modern subscriptions/listen. It keeps copies of what it needs — the
// caller, the filter — and nothing of the request that opened it, which
// it may outlive (see sse.keep).
type stream struct {
	ep     *endpoint
	out    output
	caller principal.Principal
	sub    *notify.Subscription
	// deadline is when the stream ends: the expiry of the credential that
	// opened it, and of its session; zero: never.
	deadline time.Time
	watch    []watched

	// A legacy GET stream: its session, the stop channel its session's
	// end closes, and how often the stream tells the store it is alive.
	session string
	att     *attached
	refresh time.Duration
	// Its event ids' tag (see resume.go), the ids of the events replayed
	// that may still arrive live, and the session's subscriptions while a
	// replay or a restart runs (hasSubs: taken).
	tag      string
	replayed map[string]struct{}
	// anchor: the log id the stream resumed from (Last-Event-ID).
	anchor  string
	subs    []string
	hasSubs bool

	// A modern listen: the request's id and the filter agreed to.
	listen *filter
	id     jsonrpc.ID
}

// output is where a stream's messages go: an SSE response of its own, or
// the stream of a legacy handler in front of the endpoint (see
// [Part.Listen]).
type output interface {
	// message sends msg, with an SSE id unless id is "".
	message(id string, msg []byte) error
	comment(text string) error
	// prime sends an event with an SSE id and empty data; retry, one with
	// a retry field (milliseconds).
	prime(id string) error
	retry(ms int) error
}

// sendOutput sends each message with a function of the legacy handler's
// stream, which has keep-alives (and event ids) of its own.
type sendOutput func(msg []byte) error

func (f sendOutput) message(_ string, msg []byte) error { return f(msg) }
func (sendOutput) comment(string) error                 { return nil }
func (sendOutput) prime(string) error                   { return nil }
func (sendOutput) retry(int) error                      { return nil }

// watched is one watcher of the caller's view (a tools part's: its tool
// list) and the signature last seen.
type watched struct {
	w    seam.Watcher
	seen string
	// unknown: what the caller saw is not known (a replay runs), so the
	// next look counts as a change.
	unknown bool
}

// watch returns the watchers to follow (those of names; all when names
// is nil), each with the signature the caller has now: taken before the
// stream subscribes, so that a change delivered later is compared with a
// view older than itself.
func (ep *endpoint) watch(ctx context.Context, caller *principal.Principal, on func(i int) bool) []watched {
	var out []watched
	for i, w := range ep.hooks.Watchers() {
		if on != nil && !on(i) {
			continue
		}
		seen, _ := w.Sig(ctx, caller)
		out = append(out, watched{w: w, seen: seen})
	}
	return out
}

// changed reports whether the caller's view differs from the last look (a
// signature that cannot be taken now counts as no change).
func (w *watched) changed(ctx context.Context, caller *principal.Principal) bool {
	now, ok := w.w.Sig(ctx, caller)
	if !ok || now == w.seen && !w.unknown {
		return false
	}
	w.seen, w.unknown = now, false
	return true
}

// Notifications of the legacy streams, which carry no params.
var (
	msgListChanged = notification("notifications/resources/list_changed", nil)
)

// notification encodes a JSON-RPC notification with params (a complete
// JSON object, or nil).
func notification(method string, params []byte) []byte {
	b := make([]byte, 0, 64+len(params))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = mcpwire.AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// meta returns the _meta member value of a listen stream's messages.
func (st *stream) meta() string {
	return `{"io.modelcontextprotocol/subscriptionId":` + st.id.Raw() + `}`
}

// message returns a notification of the stream with the params of an
// update (uri) and, on a modern listen, the subscription id in _meta.
func (st *stream) message(method string, uri string) []byte {
	var p []byte
	if uri != "" || st.listen != nil {
		p = append(p, '{')
		if uri != "" {
			p = mcpwire.AppendString(append(p, `"uri":`...), uri)
		}
		if st.listen != nil {
			if uri != "" {
				p = append(p, ',')
			}
			p = append(append(p, `"_meta":`...), st.meta()...)
		}
		p = append(p, '}')
	}
	return notification(method, p)
}

// run is the stream's loop: keep-alives, its session's refresh, and the
// caller's events, until the client goes, the credential or the session
// ends, the hub closes, or the client falls behind. ctx is the request's,
// or the detached stream's own. Keep-alives come from the part's wheel
// (keepalive.go), not a timer of the stream's, and mostly without waking
// the stream (the wheel writes them itself where it can). So does a
// legacy GET stream's refresh, unless it must come more often than a
// keep-alive (a session idle time under 4 KeepAlives): then a ticker of
// the stream's runs it.
func (st *stream) run(ctx context.Context) {
	var ping <-chan struct{}
	var gone <-chan struct{} // the wheel found the session gone
	var refresh <-chan time.Time
	_, quiet := st.out.(sendOutput) // a legacy handler's stream has keep-alives of its own
	w, _ := st.out.(keepAliver)
	if st.refresh > 0 && st.ep.pinger.refreshes(st.refresh) {
		pg := st.ep.pinger.addRefresh(w, quiet, st.refresh, func(timeout time.Duration) bool {
			if ctx.Err() != nil {
				return true // a stream that ended is not refreshed
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return st.alive(rctx)
		})
		defer st.ep.pinger.remove(pg)
		ping, gone = pg.c, pg.gone
	} else {
		if st.refresh > 0 {
			t := time.NewTicker(st.refresh)
			defer t.Stop()
			refresh = t.C
		}
		if !quiet {
			pg := st.ep.pinger.add(w)
			defer st.ep.pinger.remove(pg)
			ping = pg.c
		}
	}
	expired, stopExpiry := until(st.deadline)
	defer stopExpiry()
	var stop <-chan struct{}
	if st.att != nil {
		stop = st.att.stop
	}
	var err error
	for {
		select {
		case <-ctx.Done():
			return // the client closed the stream
		case <-expired:
			st.closing() // the credential expired or the session ended: the client reconnects
			return
		case <-stop:
			st.closing() // the session ended, or the client opened a new stream
			return
		case <-st.sub.Done():
			st.hubDone()
			return
		case <-ping:
			err = st.out.comment("keep-alive")
		case <-refresh:
			if !st.alive(ctx) {
				st.closing()
				return
			}
		case <-gone:
			st.closing() // the session ended, on another instance maybe
			return
		case ev := <-st.sub.Events():
			switch {
			case ev.Kind == notify.Missed && st.listen == nil && st.tag != "":
				st.closing() // events may be lost: the client resumes with Last-Event-ID
				return
			case ev.Kind == notify.Missed && st.listen == nil:
				// A legacy handler's stream (Part.Listen), which has no
				// ids of the part's: start over in place.
				st.listSubscriptions(ctx)
				err = st.restart(ctx)
				st.subs, st.hasSubs = nil, false
			case ev.Kind == notify.Missed:
				err = st.startOver(ctx)
			case !st.duplicate(ev):
				err = st.deliver(ctx, ev)
			}
		}
		if err != nil {
			return
		}
	}
}

// hubDone ends the stream when its subscription ends: the hub closed, or
// the client fell behind. A listen request is completed when the server
// shuts down.
func (st *stream) hubDone() {
	if st.listen != nil && !st.sub.Dropped() {
		// The server is shutting down: complete the listen request.
		result := []byte(`{"resultType":"complete","_meta":` + st.meta() + `}`)
		_ = st.out.message("", jsonrpc.AppendResult(nil, st.id, result))
	}
	st.closing() // the hub closed, or a slow consumer
}

// retryBase and retrySpread bound the retry field a legacy GET stream
// sends before the server closes it: about a second, spread so that the
// clients of an instance that shuts down do not all come back at once.
const (
	retryBase   = 1000 // milliseconds
	retrySpread = 1000
)

// closing tells the client of a legacy GET stream that the server is
// about to close its connection, and when to reconnect (the retry field;
// its Last-Event-ID then resumes the stream). A modern listen ends with
// its request instead.
func (st *stream) closing() {
	if st.listen == nil {
		_ = st.out.retry(retryBase + rand.IntN(retrySpread))
	}
}

// alive tells the store that the session's stream is open (which keeps
// the session from idling out) and reports whether the session lives on:
// it may have ended on another instance. A store that fails leaves the
// stream open.
func (st *stream) alive(ctx context.Context) bool {
	_, err := st.ep.store.Find(ctx, st.session, &st.caller)
	if err != nil && !errors.Is(err, ErrNotFound) {
		st.ep.storeFailed(ctx, "refresh", err)
		return true
	}
	return err == nil
}

// deliver sends what the event means for this stream, if anything; on a
// legacy GET stream the last of its messages carries the event's id.
func (st *stream) deliver(ctx context.Context, ev notify.Event) error {
	var msgs [][]byte
	switch ev.Kind {
	case notify.ListChanged:
		if st.listen == nil || st.listen.resources {
			msgs = append(msgs, st.listChanged())
		}
		for i := range st.watch {
			if st.watch[i].changed(ctx, &st.caller) {
				msgs = append(msgs, st.message(st.watch[i].w.Notification, ""))
			}
		}
	case notify.ResourceUpdated:
		if st.subscribed(ctx, ev.URI) && st.ep.canRead(ctx, &st.caller, ev.URI) {
			msgs = append(msgs, st.message("notifications/resources/updated", ev.URI))
		}
	case notify.ElicitationComplete:
		if st.listen == nil { // 2025-11-25; the 2026-07-28 client calls again instead
			p := mcpwire.AppendString([]byte(`{"elicitationId":`), ev.URI)
			msgs = append(msgs, notification("notifications/elicitation/complete", append(p, '}')))
		}
	}
	return st.send(ev.ID, msgs)
}

func (st *stream) listChanged() []byte {
	if st.listen == nil {
		return msgListChanged
	}
	return st.message("notifications/resources/list_changed", "")
}

// startOver tells a listen stream that events it follows may have been
// lost (a notify.Missed): whatever it asked for may have changed, so the
// client lists and reads again — list_changed, the watchers'
// notifications, and updated for each URI of its filter the caller may
// read. The modern era has no event ids to resume from: this is its
// resumption, and the stream stays open.
func (st *stream) startOver(ctx context.Context) error {
	var msgs [][]byte
	if st.listen.resources {
		msgs = append(msgs, st.listChanged())
	}
	for i := range st.watch {
		if now, ok := st.watch[i].w.Sig(ctx, &st.caller); ok {
			st.watch[i].seen = now
		}
		msgs = append(msgs, st.message(st.watch[i].w.Notification, ""))
	}
	for _, uri := range st.listen.uris {
		if st.ep.canRead(ctx, &st.caller, uri) {
			msgs = append(msgs, st.message("notifications/resources/updated", uri))
		}
	}
	return st.send("", msgs)
}

// subscribed reports whether the stream asked for updates of uri: the
// listen filter, or the session's subscriptions in the store (made on any
// instance). A store that fails delivers nothing: never an update that
// was not asked for.
func (st *stream) subscribed(ctx context.Context, uri string) bool {
	if st.listen != nil {
		return slices.Contains(st.listen.uris, uri)
	}
	if st.hasSubs {
		return slices.Contains(st.subs, uri) // a replay's: taken once
	}
	ok, err := st.ep.store.Subscribed(ctx, st.session, uri)
	if err != nil {
		st.ep.storeFailed(ctx, "subscribed", err)
		return false
	}
	return ok
}

// until returns a channel that fires at t (never, for a zero t) and a
// function that releases its timer.
func until(t time.Time) (<-chan time.Time, func()) {
	if t.IsZero() {
		return nil, func() {}
	}
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}

// earliest returns the earlier of two times, a zero time meaning never.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// acceptsSSE reports whether r's Accept admits an event stream.
func acceptsSSE(r *http.Request) bool {
	return mcpwire.AcceptsType(r.Header["Accept"], "text/event-stream", "text/*")
}

// filterMember returns the subscriptions/listen filter member that asks
// for a watcher's notification: "toolsListChanged" for
// notifications/tools/list_changed; "" for a notification of another form,
// which only legacy streams carry.
func filterMember(notification string) string {
	name, ok := strings.CutPrefix(notification, "notifications/")
	if !ok {
		return ""
	}
	if name, ok = strings.CutSuffix(name, "/list_changed"); !ok || name == "" || strings.Contains(name, "/") || name == "resources" {
		return ""
	}
	return name + "ListChanged"
}

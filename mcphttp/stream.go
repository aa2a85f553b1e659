package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/notify"
)

const (
	// DefaultKeepAlive is the interval of SSE keep-alive comments when
	// Options.KeepAlive is zero.
	DefaultKeepAlive = 25 * time.Second
	// streamWriteTimeout bounds one write to a stream: a client that stops
	// reading is disconnected.
	streamWriteTimeout = 30 * time.Second
	// maxListenURIs bounds the resourceSubscriptions of one listen request.
	maxListenURIs = 100
)

// notification encodes a JSON-RPC notification with params members (a
// complete JSON object, or nil).
func notification(method string, params []byte) []byte {
	b := make([]byte, 0, 64+len(params))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = budget.AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// streamGET serves the legacy GET stream of a session: list_changed for
// the session's principal and resources/updated for its subscriptions.
func (e *Endpoint) streamGET(w http.ResponseWriter, r *http.Request) {
	if !acceptsType(r.Header.Values("Accept"), "text/event-stream", "text/*") {
		writeTransportError(w, errNotAcceptableSSE)
		return
	}
	caller, ok := e.principal(w, r)
	if !ok {
		return
	}
	if caller == nil {
		e.challenge(w, r) // streams are per principal: there is none to deliver to
		return
	}
	if err := e.limiter.check(r, caller, ""); err != nil {
		writeTransportError(w, err)
		return
	}
	s, err := e.sessionOf(r, caller)
	if err != nil {
		writeTransportError(w, err)
		return
	}
	owner := ownerKey(caller)
	if err := e.streams.acquire(owner); err != nil {
		writeTransportError(w, err)
		return
	}
	// The stream may outlive the handler (sse.keep): it keeps its own
	// copy of the caller.
	who := *caller
	stop, detach := s.attachStream()
	// The tools the caller has now, before subscribing: a change delivered
	// later is compared with a view older than itself.
	tools := e.watchTools(r.Context(), &who, e.tools != nil)
	sub := e.hub.Subscribe(subjectOf(&who))
	end := func() {
		sub.Close()
		detach()
		e.streams.release(owner)
	}
	out, err := startSSE(w, r, nil)
	if err != nil {
		end()
		return
	}
	deadline := earliest(who.Expires, s.deadline(e.sessions.lim.Lifetime))
	out.keep(r, &who, func(ctx context.Context) {
		ticker := time.NewTicker(e.keepAlive)
		defer ticker.Stop()
		expired, stopExpiry := until(deadline)
		defer stopExpiry()
		var err error
		for {
			select {
			case <-ctx.Done():
				return
			case <-expired:
				return // the token expired or the session ended: the client reconnects
			case <-stop:
				return // the session ended, or the client opened a new stream
			case <-sub.Done():
				return // a slow consumer, or the server is shutting down
			case <-ticker.C:
				err = out.comment("keep-alive")
			case ev := <-sub.Events():
				switch ev.Kind {
				case notify.ListChanged:
					err = out.message(notification("notifications/resources/list_changed", nil))
					if err == nil && tools.changed(ctx) {
						err = out.message(notification("notifications/tools/list_changed", nil))
					}
				case notify.ResourceUpdated:
					if s.subscribed(ev.URI) && e.canRead(ctx, &who, ev.URI) {
						err = out.message(notification("notifications/resources/updated", uriParams(ev.URI, nil)))
					}
				}
			}
			if err != nil {
				return
			}
		}
	}, end)
}

// deleteSession ends a legacy session (DELETE with Mcp-Session-Id).
func (e *Endpoint) deleteSession(w http.ResponseWriter, r *http.Request) {
	caller, ok := e.principal(w, r)
	if !ok {
		return
	}
	if err := e.limiter.check(r, caller, ""); err != nil {
		writeTransportError(w, err)
		return
	}
	s, err := e.sessionOf(r, caller)
	if err != nil {
		writeTransportError(w, err)
		return
	}
	e.sessions.remove(s)
	setPrivate(w.Header())
	w.WriteHeader(http.StatusNoContent)
}

// sessionOf returns the session named by the request's Mcp-Session-Id for
// caller: errNoSessionHeader without the header, errSessionNotFound for an
// unknown session or one of another principal.
func (e *Endpoint) sessionOf(r *http.Request, caller *principal.Principal) (*session, error) {
	id := r.Header.Get(headerSessionID)
	if id == "" {
		return nil, errNoSessionHeader
	}
	if s := e.sessions.get(id, caller); s != nil {
		return s, nil
	}
	return nil, errSessionNotFound
}

// subjectOf is the hub key of a caller's streams: its identity key,
// issuer-qualified with several issuers (principal.Principal.Key), which is
// what the application publishes to.
func subjectOf(p *principal.Principal) string {
	if p == nil {
		return ""
	}
	return p.Key()
}

// canRead reports whether caller may read uri now (visibility, access,
// scopes; not the application's record check, which the publisher of a
// ResourceUpdated event applies by addressing it to its subject).
func (e *Endpoint) canRead(ctx context.Context, caller *principal.Principal, uri string) bool {
	ok, err := e.inv.CanRead(ctx, caller, uri)
	return err == nil && ok
}

// uriParams encodes {"uri":…[,"_meta":…]}.
func uriParams(uri string, meta []byte) []byte {
	b := append([]byte(`{"uri":`), budget.AppendString(nil, uri)...)
	if meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	return append(b, '}')
}

// listenFilter is the SubscriptionFilter of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listen serves a modern subscriptions/listen request: an SSE response
// whose first message acknowledges the subscription, followed by the
// notifications the filter asked for and the caller may see.
func (e *Endpoint) listen(ctx context.Context, c *call) (reply, error) {
	if c.caller == nil {
		return reply{}, inventory.ErrUnauthenticated // streams are per principal
	}
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return reply{}, err
	}
	if p.Notifications == nil {
		return reply{}, invalidParams("params.notifications is required")
	}
	if len(p.Notifications.ResourceSubscriptions) > maxListenURIs {
		return reply{}, invalidParams("too many resourceSubscriptions")
	}
	// The server agrees to what it honours: list changes, and updates of
	// resources the caller may read; tool list changes with the tools
	// bridge. Prompt lists are not served.
	agreed := listenFilter{ResourcesListChanged: p.Notifications.ResourcesListChanged,
		ToolsListChanged: p.Notifications.ToolsListChanged && e.tools != nil}
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if !slices.Contains(agreed.ResourceSubscriptions, uri) && e.canRead(ctx, c.caller, uri) {
			agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
		}
	}
	owner := ownerKey(c.caller)
	if err := e.streams.acquire(owner); err != nil {
		return reply{}, err
	}
	// The stream may outlive the handler (sse.keep): it keeps copies of
	// what it needs, nothing of the request body.
	id, caller := c.id, *c.caller
	return reply{stream: func(w http.ResponseWriter, r *http.Request) {
		e.runListen(w, r, id, &caller, agreed, func() { e.streams.release(owner) })
	}}, nil
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

// challenge answers a request that needs a principal and has none: the
// Authenticator's 401 challenge (a plain 401 without one).
func (e *Endpoint) challenge(w http.ResponseWriter, r *http.Request) {
	if e.auth != nil {
		e.auth.WriteError(w, r, authn.ErrNoCredentials)
		return
	}
	writeTransportError(w, errUnauthorized)
}

// runListen serves the stream of a listen request; release runs when it
// ends.
func (e *Endpoint) runListen(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, caller *principal.Principal, agreed listenFilter, release func()) {
	if !acceptsType(r.Header["Accept"], "text/event-stream", "text/*") {
		release()
		writeTransportError(w, errNotAcceptableSSE)
		return
	}
	meta := []byte(`{"io.modelcontextprotocol/subscriptionId":` + id.Raw() + `}`)
	tools := e.watchTools(r.Context(), caller, agreed.ToolsListChanged) // before subscribing, as in streamGET
	sub := e.hub.Subscribe(subjectOf(caller))
	end := func() {
		sub.Close()
		release()
	}
	out, err := startSSE(w, r, nil)
	if err != nil {
		end()
		return
	}
	filter, _ := json.Marshal(agreed)
	ack := append([]byte(`{"notifications":`), filter...)
	ack = append(append(append(ack, `,"_meta":`...), meta...), '}')
	if out.message(notification("notifications/subscriptions/acknowledged", ack)) != nil {
		end()
		return
	}
	listChanged := notification("notifications/resources/list_changed", append(append([]byte(`{"_meta":`), meta...), '}'))
	toolsChanged := notification("notifications/tools/list_changed", append(append([]byte(`{"_meta":`), meta...), '}'))
	out.keep(r, caller, func(ctx context.Context) {
		ticker := time.NewTicker(e.keepAlive)
		defer ticker.Stop()
		expired, stopExpiry := until(caller.Expires)
		defer stopExpiry()
		var err error
		for {
			select {
			case <-ctx.Done():
				return // the client closed the stream: the subscription ends
			case <-expired:
				return // the token expired: the client listens again with a fresh one
			case <-sub.Done():
				if !sub.Dropped() {
					// The server is shutting down: complete the listen request.
					result := []byte(`{"resultType":"complete","_meta":` + string(meta) + `}`)
					_ = out.message(jsonrpc.AppendResult(nil, id, result))
				}
				return
			case <-ticker.C:
				err = out.comment("keep-alive")
			case ev := <-sub.Events():
				switch {
				case ev.Kind == notify.ListChanged:
					if agreed.ResourcesListChanged {
						err = out.message(listChanged)
					}
					if err == nil && tools.changed(ctx) {
						err = out.message(toolsChanged)
					}
				case ev.Kind == notify.ResourceUpdated && slices.Contains(agreed.ResourceSubscriptions, ev.URI) &&
					e.canRead(ctx, caller, ev.URI):
					err = out.message(notification("notifications/resources/updated", uriParams(ev.URI, meta)))
				}
			}
			if err != nil {
				return
			}
		}
	}, end)
}

// toolWatch remembers which bridge tools a stream's caller could use, so
// that a list change (a grant, a share) becomes
// notifications/tools/list_changed only when it changed those.
type toolWatch struct {
	e      *Endpoint
	caller *principal.Principal
	on     bool
	seen   string
}

func (e *Endpoint) watchTools(ctx context.Context, caller *principal.Principal, on bool) *toolWatch {
	w := &toolWatch{e: e, caller: caller, on: on && e.tools != nil}
	if w.on {
		w.seen, _ = e.toolSignature(ctx, caller)
	}
	return w
}

// changed reports whether the caller's tools differ from the last look
// (a failing grant store counts as no change: it was logged).
func (w *toolWatch) changed(ctx context.Context) bool {
	if !w.on {
		return false
	}
	now, ok := w.e.toolSignature(ctx, w.caller)
	if !ok || now == w.seen {
		return false
	}
	w.seen = now
	return true
}

// toolSignature names the set of bridge tools the caller may use.
func (e *Endpoint) toolSignature(ctx context.Context, caller *principal.Principal) (string, bool) {
	reach, err := e.inv.Reach(ctx, caller)
	if err != nil {
		return "", false
	}
	b := make([]byte, 0, len(e.tools.tools))
	for _, t := range e.tools.tools {
		if t.shown(&reach) {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	return string(b), true
}

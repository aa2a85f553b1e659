package sessions

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// maxListenURIs bounds the resourceSubscriptions of one listen request.
const maxListenURIs = 100

// filter is a subscriptions/listen SubscriptionFilter: what a client
// asked for, or what the server agreed to.
type filter struct {
	lists     []bool // per watcher: its <name>ListChanged member is true
	resources bool   // resourcesListChanged
	uris      []string
}

// parseFilter reads params.notifications with the strict walker (the one
// params reader; the strict decoder validated the bytes). members are the
// filter members of the endpoint's watchers. The members a filter may
// hold (resourcesListChanged, resourceSubscriptions, toolsListChanged and
// the watchers') must have their types, null meaning absent; a member
// whose name differs from one of them in case only is refused, never read
// as absent; other members are ignored.
func parseFilter(params []byte, members []string) (filter, error) {
	f := filter{lists: make([]bool, len(members))}
	var n jsonstrict.Value
	if len(params) > 0 {
		if err := jsonstrict.Members(params, func(name []byte, v jsonstrict.Value) bool {
			if string(name) == "notifications" {
				n = v
				return false
			}
			return true
		}); err != nil {
			return f, errFilterFit
		}
	}
	switch n.Kind() {
	case jsonstrict.None, jsonstrict.Null:
		return f, mcpwire.InvalidParams("params.notifications is required")
	case jsonstrict.Object:
	default:
		return f, errFilterFit
	}
	var bad error
	_ = n.Members(func(nb []byte, v jsonstrict.Value) bool {
		name := string(nb)
		switch {
		case name == "resourcesListChanged":
			f.resources, bad = boolValue(v)
		case name == "resourceSubscriptions":
			f.uris, bad = stringsValue(v)
		case name == "toolsListChanged" || slices.Contains(members, name):
			var on bool
			on, bad = boolValue(v)
			for i, m := range members {
				if m == name {
					f.lists[i] = on
				}
			}
		case strings.EqualFold(name, "resourcesListChanged") || strings.EqualFold(name, "resourceSubscriptions") ||
			strings.EqualFold(name, "toolsListChanged") || slices.ContainsFunc(members, func(m string) bool { return strings.EqualFold(m, name) }):
			bad = errFilterCase
		}
		return bad == nil
	})
	return f, bad
}

var (
	errFilterFit  = mcpwire.InvalidParams("params.notifications does not fit the SubscriptionFilter")
	errFilterCase = mcpwire.InvalidParams("a member name of params.notifications differs in case from a filter's")
	errFilterURIs = mcpwire.InvalidParams("too many resourceSubscriptions")
)

// boolValue reads a JSON boolean, null being false.
func boolValue(v jsonstrict.Value) (bool, error) {
	if v.Kind() == jsonstrict.Null {
		return false, nil
	}
	if b, ok := v.Bool(); ok {
		return b, nil
	}
	return false, errFilterFit
}

// stringsValue reads a JSON array of at most maxListenURIs strings, null
// being none.
func stringsValue(v jsonstrict.Value) ([]string, error) {
	switch v.Kind() {
	case jsonstrict.Null:
		return nil, nil
	case jsonstrict.Array:
	default:
		return nil, errFilterFit
	}
	var out []string
	var bad error
	_ = v.Elements(func(e jsonstrict.Value) bool {
		if len(out) == maxListenURIs {
			bad = errFilterURIs
			return false
		}
		s, ok := e.Str()
		if !ok {
			bad = errFilterFit
			return false
		}
		out = append(out, s)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

// appendJSON appends the JSON object of the filter agreed to.
func (f *filter) appendJSON(dst []byte, members []string) []byte {
	dst = append(dst, '{')
	sep := ""
	for i, on := range f.lists {
		if on {
			dst = append(mcpwire.AppendString(append(dst, sep...), members[i]), `:true`...)
			sep = ","
		}
	}
	if f.resources {
		dst = append(append(dst, sep...), `"resourcesListChanged":true`...)
		sep = ","
	}
	if len(f.uris) > 0 {
		dst = append(append(dst, sep...), `"resourceSubscriptions":[`...)
		for i, u := range f.uris {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = mcpwire.AppendString(dst, u)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// members returns the filter members of the endpoint's watchers.
func (ep *endpoint) members() []string {
	ws := ep.hooks.Watchers()
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = filterMember(w.Notification)
	}
	return out
}

// listen serves a modern subscriptions/listen request: an SSE response
// whose first message acknowledges the subscription, followed by the
// notifications the filter asked for and the caller may see.
func (ep *endpoint) listen(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	if c.Principal == nil {
		return mcphttp.Result{}, principal.ErrUnauthenticated // streams are per principal
	}
	members := ep.members()
	asked, err := parseFilter(c.Params(), members)
	if err != nil {
		return mcphttp.Result{}, err
	}
	// The server agrees to what it honours: resource list changes, updates
	// of resources the caller may read, and the watchers' notifications
	// (a tools part's tools/list_changed). Prompt lists are not served.
	agreed := filter{lists: asked.lists, resources: asked.resources}
	for i, m := range members {
		agreed.lists[i] = agreed.lists[i] && m != ""
	}
	for _, uri := range asked.uris {
		if !slices.Contains(agreed.uris, uri) && ep.canRead(ctx, c.Principal, uri) {
			agreed.uris = append(agreed.uris, uri)
		}
	}
	key := c.Principal.SessionKey()
	if err := ep.streams.acquire(key); err != nil {
		return mcphttp.Result{}, err
	}
	// The stream may outlive the handler (sse.keep): it keeps copies of
	// what it needs, nothing of the request body.
	st := &stream{ep: ep, caller: *c.Principal, deadline: c.Principal.Expires, listen: &agreed, id: c.ID}
	return mcphttp.Stream(func(w http.ResponseWriter, r *http.Request) { st.serveListen(w, r, key, members) }), nil
}

// serveListen serves the stream of a listen request.
func (st *stream) serveListen(w http.ResponseWriter, r *http.Request, key string, members []string) {
	ep := st.ep
	if !acceptsSSE(r) {
		ep.streams.release(key)
		mcphttp.WriteError(w, errNotAcceptableSSE)
		return
	}
	st.watch = ep.watch(r.Context(), &st.caller, func(i int) bool { return st.listen.lists[i] })
	// A mark in the event log, as a legacy stream's priming id but never
	// sent: a fleet's broker listener that is cut off later catches this
	// subject up from there (or tells the stream, notify.Missed).
	if _, err := ep.hub.Mark(r.Context(), st.caller.Key()); err != nil {
		ep.log.LogAttrs(context.WithoutCancel(r.Context()), slog.LevelError,
			"sessions: the event log failed; the listen stream starts without a mark", slog.String("err", err.Error()))
	}
	st.sub = ep.hub.Subscribe(st.caller.Key())
	end := func() {
		st.sub.Close()
		ep.streams.release(key)
	}
	out := startSSE(w, r)
	st.out = out
	if out.comment("stream open") != nil {
		end()
		return
	}
	ack := append([]byte(`{"notifications":`), st.listen.appendJSON(nil, members)...)
	ack = append(append(append(ack, `,"_meta":`...), st.meta()...), '}')
	if st.out.message("", notification("notifications/subscriptions/acknowledged", ack)) != nil {
		end()
		return
	}
	out.keep(r, &st.caller, st.run, end)
}

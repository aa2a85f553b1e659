package mcphttp

import (
	"slices"

	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// endpointOf is the lookup of seam.EndpointOf: what ep, an endpoint
// New made, uses (mcphttp/intercept, in front of another MCP server,
// treats the requests it forwards as the endpoint would).
func endpointOf(ep any) (seam.Endpoint, bool) {
	e, ok := ep.(*Endpoint)
	if !ok || e == nil || e.auth == nil {
		return seam.Endpoint{}, false
	}
	return seam.Endpoint{
		Origins: e.origins, Limits: e.limits, Authenticator: e.auth,
		Capabilities: e.capabilities, Serves: e.serves,
	}, true
}

// capabilities returns the JSON object of the server capabilities the
// endpoint announces: resources, completions when a template completes,
// and the parts' ones; notifying selects those of an answer that comes
// with event streams (listChanged and subscribe flags), as in
// [Setup.Capability]. The slice is the caller's own.
func (e *Endpoint) capabilities(notifying bool) []byte {
	if notifying {
		return slices.Clone(e.capsNotify)
	}
	return slices.Clone(e.capsPlain)
}

// PrincipalFromContextOnly marks the Authenticator of an endpoint built
// without one (mcpwire.ContextAuthenticator).
func (contextAuth) PrincipalFromContextOnly() {}

// seamCalls is what the kit's parts reach of a call (seam.Calls).
var seamCalls = seam.Calls{
	Result: func(req any, members []byte, private bool) any {
		r, ok := req.(*Request)
		if !ok || r == nil || r.e == nil {
			return nil
		}
		cache := CacheNone
		if private {
			cache = CachePrivate
		}
		if r.notes == nil {
			return nil
		}
		// The slot is the call's own: a pointer in an interface does not
		// allocate. The kit's parts build one answer per call, on the
		// handler's goroutine, and read it at once.
		res := r.e.rawResult(r.id, r.modern, members, cache)
		r.notes.mu.Lock()
		r.notes.raw = res
		r.notes.mu.Unlock()
		return &r.notes.raw
	},
	WithSession: func(req any, id string, keep bool) any {
		r, ok := req.(*Request)
		if !ok || r == nil {
			return nil
		}
		r.noteSession(id)
		if !keep {
			return nil
		}
		inner := *r
		inner.SessionID = id
		return &inner
	},
}

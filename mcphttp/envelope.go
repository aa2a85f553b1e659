package mcphttp

import "github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"

// The call's params are read once (mcpwire.ReadEnvelope, in serveCall):
// the era's rules read the envelope, the endpoint's own handlers its
// ParamView, kept with the Request.

// cursor is mcpwire.CursorParam of the request's params.
func (r *Request) cursor() (string, error) {
	if r.notes == nil || !r.notes.viewed {
		return mcpwire.CursorParam(r.params)
	}
	return r.notes.view.CursorValue()
}

// uri is mcpwire.URIParam of the request's params.
func (r *Request) uri() (string, error) {
	if r.notes == nil || !r.notes.viewed {
		return mcpwire.URIParam(r.params)
	}
	return r.notes.view.URIValue()
}

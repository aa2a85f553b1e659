package mcphttp

import (
	"slices"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// What a handler in front of the endpoint needs to treat the requests it
// does not pass to the endpoint as the endpoint would (mcphttp/intercept,
// in front of another MCP server): the same guard, body limits and
// Authenticator, and the capabilities the endpoint announces. Each is the
// value the endpoint uses, never a copy configured twice.

// Origins returns the guard the endpoint checks every request with:
// Options.Origins, or the closed guard when none was given.
func (e *Endpoint) Origins() *origin.Guard { return e.origins }

// Limits returns the body limits the endpoint reads requests under
// (Options.Limits).
func (e *Endpoint) Limits() jsonrpc.Limits { return e.limits }

// Authenticator returns the endpoint's Authenticator (never nil): the
// Options' one, or the one that takes the principal the service's own
// middleware put in the context.
func (e *Endpoint) Authenticator() Authenticator { return e.auth }

// Capabilities returns the JSON object of the server capabilities the
// endpoint announces: resources, completions when a template completes,
// and the parts' ones; notifying selects those of an answer that comes
// with event streams (listChanged and subscribe flags), as in
// [Setup.Capability]. The slice is the caller's own.
func (e *Endpoint) Capabilities(notifying bool) []byte {
	if notifying {
		return slices.Clone(e.capsNotify)
	}
	return slices.Clone(e.capsPlain)
}

// PrincipalFromContextOnly marks the Authenticator of an endpoint built
// without one (mcpwire.ContextAuthenticator).
func (contextAuth) PrincipalFromContextOnly() {}

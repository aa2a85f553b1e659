package mcpwire

import "context"

// foreignSessionsKey marks a request of WithForeignSessions.
type foreignSessionsKey struct{}

// WithForeignSessions returns ctx marked for a request that a handler in
// front of the endpoint passes on (mcphttp/intercept): its Mcp-Session-Id
// names a session of the server behind that handler, which the endpoint's
// parts know only if they adopted it. A part that checks sessions serves
// such a request naming a session it does not know as one without a
// session, never refuses it as an unknown session.
func WithForeignSessions(ctx context.Context) context.Context {
	return context.WithValue(ctx, foreignSessionsKey{}, true)
}

// ForeignSessions reports whether ctx is marked by [WithForeignSessions].
func ForeignSessions(ctx context.Context) bool {
	v, _ := ctx.Value(foreignSessionsKey{}).(bool)
	return v
}

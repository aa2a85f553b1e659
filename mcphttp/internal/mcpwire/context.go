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

// authRefusalKey carries a request's refusal of WithAuthRefusal.
type authRefusalKey struct{}

// authRefusal is the value under authRefusalKey (nil err: none).
type authRefusal struct{ err error }

// WithAuthRefusal returns ctx carrying err, the refusal of the request's
// credentials by the endpoint's own Authenticator, checked by a handler
// in front of the endpoint (mcphttp/intercept): the endpoint answers it
// without checking the credentials again, so that one request counts as
// one refusal (and a one-time DPoP proof is not seen twice). A nil err
// clears an earlier one (the credentials were dropped).
func WithAuthRefusal(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, authRefusalKey{}, authRefusal{err})
}

// AuthRefusal returns the refusal of [WithAuthRefusal] in ctx, or nil.
func AuthRefusal(ctx context.Context) error {
	v, _ := ctx.Value(authRefusalKey{}).(authRefusal)
	return v.err
}

// ContextAuthenticator is implemented by the Authenticator of an endpoint
// built without one (mcphttp's contextAuth): the caller is the principal
// the service's own middleware put in the context. A handler in front of
// the endpoint (mcphttp/intercept) leaves the requests it forwards to such
// a service's own middleware.
type ContextAuthenticator interface {
	PrincipalFromContextOnly()
}

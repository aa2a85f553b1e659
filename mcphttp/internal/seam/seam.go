// Package seam is the rest of the endpoint a part of this kit may reach
// beyond mcphttp.Setup: what one part alone needs (the legacy sessions
// of mcphttp/sessions, the verb checks of mcphttp/ratelimit), kept out of
// the exported Setup so that every method there has several users. It is
// internal: a part written outside the kit does without it.
//
// mcphttp registers the lookup ([Register]) before it sets any part up; a
// part calls [Of] with the *mcphttp.Setup it was given. mcphttp/intercept,
// in front of another MCP server, treats the requests it forwards as the
// endpoint would: it reads what the endpoint uses with [EndpointOf].
package seam

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/principal"
)

// Verb serves an HTTP method other than POST on the endpoint's path;
// caller is the authenticated caller, nil for an anonymous request.
type Verb = func(w http.ResponseWriter, r *http.Request, caller *principal.Principal)

// Watcher is mcphttp.Watcher (the same fields, so each converts to the
// other).
type Watcher struct {
	Notification string
	Sig          func(ctx context.Context, caller *principal.Principal) (sig string, ok bool)
}

// Hooks is what the endpoint gives the one part that needs it. A
// registration's misuse (a nil function) is an error of mcphttp.New, as
// with Setup's own methods.
type Hooks struct {
	// WriteAuthError answers err as the endpoint's Authenticator does
	// (principal.ErrUnauthenticated: its 401 with a challenge).
	WriteAuthError func(w http.ResponseWriter, r *http.Request, err error)
	// HandleHTTP registers v for the HTTP method method (GET, DELETE) on
	// the endpoint's path: a legacy session's event stream, its end.
	// Without one, such a request gets 405 with Allow.
	HandleHTTP func(method string, v Verb)
	// CheckHTTP adds check before every registered verb: a non-nil error
	// is answered by the error table (a rate limit's, say).
	CheckHTTP func(check func(r *http.Request, caller *principal.Principal) error)
	// Notifying says the part delivers change notifications on event
	// streams: the resources capability then says subscribe and
	// listChanged in answers with streams, and server/discover with them.
	Notifying func()
	// Watchers returns the watchers every part registered
	// (mcphttp.Setup.Watch); call it once all parts are set up (when
	// serving).
	Watchers func() []Watcher
	// InitializeResult returns the result object of a legacy initialize
	// answered in version, with the capabilities of an answer with event
	// streams (notifying) or without.
	InitializeResult func(version string, notifying bool) []byte
}

// lookup is the function mcphttp registered; nil before the first
// endpoint is built.
var lookup atomic.Pointer[func(setup any) *Hooks]

// Register makes f the lookup of [Of]. Only mcphttp calls it, before it
// sets parts up; the first registration stays.
func Register(f func(setup any) *Hooks) {
	if f != nil && lookup.Load() == nil {
		lookup.CompareAndSwap(nil, &f)
	}
}

// Of returns the hooks of setup, the *mcphttp.Setup a part's Setup was
// given, or nil for anything else (a Setup mcphttp did not make).
func Of(setup any) *Hooks {
	f := lookup.Load()
	if f == nil || setup == nil {
		return nil
	}
	return (*f)(setup)
}

// Endpoint is what an endpoint uses, each the value itself, never a copy
// configured twice.
type Endpoint struct {
	// Origins is the guard the endpoint checks every request with.
	Origins *origin.Guard
	// Limits are the body limits it reads requests under.
	Limits jsonrpc.Limits
	// Authenticator is its mcphttp.Authenticator (never nil): the
	// Options' one, or the one that takes the principal the service's own
	// middleware put in the context.
	Authenticator any
	// Capabilities returns the JSON object of the server capabilities it
	// announces; notifying selects those of an answer that comes with
	// event streams (listChanged and subscribe flags). The slice is the
	// caller's own.
	Capabilities func(notifying bool) []byte
	// Serves reports whether the endpoint answers msg itself: a request
	// or notification of a method in its table, for the message's era,
	// that the method's part claims.
	Serves func(msg jsonrpc.Message) bool
}

// endpointLookup is the function mcphttp registered; nil before the
// first endpoint is built.
var endpointLookup atomic.Pointer[func(ep any) (Endpoint, bool)]

// RegisterEndpoint makes f the lookup of [EndpointOf]. Only mcphttp
// calls it, before it returns its first endpoint; the first registration
// stays.
func RegisterEndpoint(f func(ep any) (Endpoint, bool)) {
	if f != nil && endpointLookup.Load() == nil {
		endpointLookup.CompareAndSwap(nil, &f)
	}
}

// EndpointOf returns what ep, an *mcphttp.Endpoint, uses, and false for
// anything else (nil, or an Endpoint mcphttp.New did not make).
func EndpointOf(ep any) (Endpoint, bool) {
	f := endpointLookup.Load()
	if f == nil || ep == nil {
		return Endpoint{}, false
	}
	return (*f)(ep)
}

// Calls is what the kit's parts reach of a call being served beyond
// mcphttp.Request: the answers their fast encoders build, and the legacy
// session a call belongs to. Its functions take the *mcphttp.Request the
// part's handler was given, as any (this package cannot name mcphttp's
// types); given anything else they return nil.
type Calls struct {
	// Result returns a *mcphttp.Result (as any: a pointer, which does not
	// allocate; copy the value at once, the next call of Result for the
	// same req reuses it) answering req whose result object holds members: the JSON text of its members, without
	// braces, valid JSON the part encoded; private selects the caching
	// hints of mcphttp.CachePrivate, else CacheNone. The endpoint adds the
	// braces, the era's members and the JSON-RPC envelope.
	Result func(req any, members []byte, private bool) any
	// WithSession records, for observers, that req belongs to the legacy
	// session id, and returns a *mcphttp.Request (as any) that is req
	// with SessionID set, sharing req's notes, for the handlers inside a
	// middleware; with keep false it only records and returns nil.
	WithSession func(req any, id string, keep bool) any
}

// calls is what mcphttp registered; nil before the first endpoint is
// built.
var calls atomic.Pointer[Calls]

// RegisterCalls makes c what [CallsOf] returns. Only mcphttp calls it,
// before it returns its first endpoint; the first registration stays.
func RegisterCalls(c Calls) {
	if c.Result != nil && c.WithSession != nil {
		calls.CompareAndSwap(nil, &c)
	}
}

// CallsOf returns what mcphttp registered; its functions return nil
// before any endpoint was built (when no call can be served anyway).
func CallsOf() Calls {
	if c := calls.Load(); c != nil {
		return *c
	}
	return Calls{
		Result:      func(any, []byte, bool) any { return nil },
		WithSession: func(any, string, bool) any { return nil },
	}
}

// ResultOf is Calls.Result for a part: R is mcphttp.Result; ok is false
// for a req the endpoint did not make.
func ResultOf[R any](req any, members []byte, private bool) (res R, ok bool) {
	p, ok := CallsOf().Result(req, members, private).(*R)
	if !ok || p == nil {
		return res, false
	}
	return *p, true
}

// ErrNotServed is Answer's error for a Request the endpoint did not make
// (a test's, say): it cannot be answered.
var ErrNotServed = errors.New("mcphttp: a Request the endpoint did not make")

// Answer is ResultOf for a part's handler: the answer to req whose result
// object holds members (the JSON text of its members, without braces),
// or ErrNotServed.
func Answer[R any](req any, members []byte, private bool) (R, error) {
	if res, ok := ResultOf[R](req, members, private); ok {
		return res, nil
	}
	var zero R
	return zero, ErrNotServed
}

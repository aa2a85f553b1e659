// Package seam is the rest of the endpoint a part of this kit may reach
// beyond mcphttp.Setup: what one part alone needs (the legacy sessions
// of mcphttp/sessions, the verb checks of mcphttp/ratelimit), kept out of
// the exported Setup so that every method there has several users. It is
// internal: a part written outside the kit does without it.
//
// mcphttp registers the lookup ([Register]) before it sets any part up; a
// part calls [Of] with the *mcphttp.Setup it was given.
package seam

import (
	"context"
	"net/http"
	"sync/atomic"

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

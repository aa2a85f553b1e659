package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/principal"
)

// A Part adds a feature to an endpoint: sessions and event streams
// (package mcphttp/sessions), tools (mcphttp/tools), rate limits
// (mcphttp/ratelimit), observers ([Observe]). [New] calls each part's
// Setup once, in order; a part registers what it serves there, and the
// endpoint knows nothing of it beyond that.
type Part interface {
	Setup(s *Setup) error
}

// PartFunc adapts a function to a [Part].
type PartFunc func(s *Setup) error

// Setup calls f(s).
func (f PartFunc) Setup(s *Setup) error { return f(s) }

// Setup is what a [Part] sees of the endpoint being built: the inventory
// and settings, and the registrations it may make; every method serves
// several of the kit's parts or a part of a user's own (see "Writing a
// part" in the package documentation). It is valid during the part's
// Setup call; what it returns stays valid. Only [New] and
// [NewListHandler] make one.
type Setup struct {
	e     *Endpoint
	err   error
	hooks *seam.Hooks // made on the first seam.Of
}

// Era says in which protocol eras a method is served.
type Era uint8

// The zero Era is every protocol version.
const (
	_ Era = iota
	// EraLegacy: 2024-11-05 … 2025-11-25 only.
	EraLegacy
	// EraModern: 2026-07-28 only.
	EraModern
)

// MethodOptions describes a method a part serves.
type MethodOptions struct {
	// Era is the protocol eras the method is served in; others get
	// -32601 (method not found).
	Era Era
	// NameMember is the params member the 2026-07-28 Mcp-Name header must
	// repeat ("name" for tools/call); empty for none.
	NameMember string
	// Class says what a call of the method does, for rate limits and
	// observers: "list" (pages of a listing), "read" (one resource),
	// "search" (a query of the application's), or "" (anything else).
	// Nil means "". It sees the strictly decoded params (tools/call is
	// classed by its tool).
	Class func(params []byte) string
	// Claims, when set, says whether a call of the method is the part's:
	// a handler in front of another MCP server (mcphttp/intercept)
	// forwards the calls that are not. Nil claims every call. It sees the
	// strictly decoded params.
	Claims func(params []byte) bool
}

// method is an entry of the method table.
type method struct {
	h    Handler
	opts MethodOptions
}

// The classes of [MethodOptions.Class].
const (
	ClassList   = "list"
	ClassRead   = "read"
	ClassSearch = "search"
)

// classOf returns a Class function that always answers class.
func classOf(class string) func([]byte) string { return func([]byte) string { return class } }

// verb serves an HTTP method other than POST (see seam.Hooks.HandleHTTP).
type verb = seam.Verb

// Watcher names the notification a part sends on an event stream when a
// caller's view changes, and how to tell that it did: sig returns a
// value that differs exactly when the caller's list differs (ok false: it
// cannot tell now).
type Watcher struct {
	Notification string
	Sig          func(ctx context.Context, caller *principal.Principal) (sig string, ok bool)
}

func (s *Setup) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Inventory returns the endpoint's inventory.
func (s *Setup) Inventory() *inventory.Inventory { return s.e.inv }

// Logger returns the endpoint's operator logger.
func (s *Setup) Logger() *slog.Logger { return s.e.log }

// Handle registers h as the handler of a JSON-RPC method. A method
// registered twice, by the endpoint or another part, is an error of New,
// except initialize, which a part that mints sessions takes over.
func (s *Setup) Handle(name string, h Handler, opts MethodOptions) {
	if name == "" || h == nil {
		s.fail(errors.New("mcphttp: Setup.Handle: a method needs a name and a handler"))
		return
	}
	if _, dup := s.e.methods[name]; dup && name != "initialize" {
		s.fail(fmt.Errorf("mcphttp: method %q is registered twice", name))
		return
	}
	s.e.methods[name] = method{h: h, opts: opts}
}

// Use adds mw around the serving of every request and notification (see
// [Middleware]); the first Use is the outermost.
func (s *Setup) Use(mw Middleware) {
	if mw == nil {
		s.fail(errors.New("mcphttp: Setup.Use: nil middleware"))
		return
	}
	s.e.middleware = append(s.e.middleware, mw)
}

// Capability declares a server capability the part provides: name and
// its JSON object. notifying is true in an answer that comes with event
// streams (a legacy session, and server/discover when a part serves
// them), false in one without (an anonymous initialize): listChanged
// flags follow it.
func (s *Setup) Capability(name string, value func(notifying bool) string) {
	if name == "" || value == nil {
		s.fail(errors.New("mcphttp: Setup.Capability: a capability needs a name and a value"))
		return
	}
	s.e.caps = append(s.e.caps, capability{name, value})
}

// Watch registers a watcher of callers' views (see [Watcher]).
func (s *Setup) Watch(w Watcher) {
	if w.Notification == "" || w.Sig == nil {
		s.fail(errors.New("mcphttp: Setup.Watch: a watcher needs a notification and a Sig"))
		return
	}
	s.e.watchers = append(s.e.watchers, seam.Watcher(w))
}

// hooksOf is the lookup of package seam: the hooks of a Setup made by
// [New], for the kit's parts that need what Setup does not export.
func hooksOf(setup any) *seam.Hooks {
	s, ok := setup.(*Setup)
	if !ok || s == nil || s.e == nil {
		return nil
	}
	if s.hooks == nil {
		s.hooks = s.newHooks()
	}
	return s.hooks
}

// newHooks returns the hooks of s.
func (s *Setup) newHooks() *seam.Hooks {
	e := s.e
	return &seam.Hooks{
		WriteAuthError: func(w http.ResponseWriter, r *http.Request, err error) { e.auth.WriteError(w, r, err) },
		HandleHTTP: func(method string, v seam.Verb) {
			if method == http.MethodPost || method == "" || v == nil {
				s.fail(errors.New("mcphttp: HandleHTTP: a method other than POST and a handler are needed"))
				return
			}
			e.verbs[method] = v
		},
		CheckHTTP: func(check func(r *http.Request, caller *principal.Principal) error) {
			if check == nil {
				s.fail(errors.New("mcphttp: CheckHTTP: nil check"))
				return
			}
			e.verbChecks = append(e.verbChecks, check)
		},
		Notifying:        func() { e.notifying = true },
		Watchers:         func() []seam.Watcher { return e.watchers },
		InitializeResult: e.initializeResult,
	}
}

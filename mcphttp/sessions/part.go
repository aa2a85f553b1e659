package sessions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// Options configures a [Part]. The zero value is valid: every default,
// and sessions in a [MemoryStore].
type Options struct {
	// Limits bound sessions and streams (see [Limits]). The zero value
	// means the defaults.
	Limits Limits

	// KeepAlive is the interval of SSE keep-alive comments on open
	// streams. Zero means DefaultKeepAlive (25 s).
	//
	// Set it below the shortest idle timeout between the server and its
	// clients, which closes a stream that carries nothing for that long:
	// nginx proxy_read_timeout and Envoy's stream idle timeout default to
	// 60 s and 5 min, AWS ALB's idle timeout to 60 s, Cloudflare's proxy
	// read timeout is 100 s, and HAProxy's timeout server and timeout
	// client are what its configuration says (often 30 to 60 s). The
	// default fits them all. Each keep-alive is a write on
	// every open stream, so a longer interval costs less when every hop
	// allows it: 10,000 idle streams cost about 10,000 / KeepAlive writes
	// a second (measured over loopback on a shared 2-core virtual machine,
	// listen and legacy GET streams alike: 0.29 to 0.36 % of a core at
	// 25 s, three quarters of it the kernel's TCP send, which over loopback
	// includes the client's receive; 0.25 % with that receive on another
	// CPU; examples/bench -streams 10000 -idle 60s [-legacy]). The streams
	// share one timer (a wheel of 16 slots that turns once every
	// KeepAlive / 16), so a stream's first keep-alive comes up to a
	// sixteenth of the interval early; on a detached HTTP/1.1 stream over
	// TCP the wheel writes the keep-alive itself, with a write that never
	// waits, without waking the stream's goroutine. The wheel also runs
	// legacy GET streams' session refreshes when they are no more frequent
	// than keep-alives.
	KeepAlive time.Duration

	// Store keeps the legacy sessions and their subscriptions: what the
	// instances of a fleet must share. Nil means a [MemoryStore] bounded
	// by Limits, which is not shared.
	//
	// A store that fails (an engine out of reach: an error other than
	// those of [Store]) is logged and degrades, never refuses what needs
	// no session: initialize is answered without a session, a request
	// naming a session is served without one, resources/subscribe is an
	// internal error, a GET stream 503 with Retry-After, and an open
	// stream goes on (an update whose subscription cannot be checked is
	// not delivered). It all comes back with the store.
	Store Store
}

// Part serves legacy sessions and event streams on an [mcphttp.Endpoint]
// (see the package documentation). It is safe for concurrent use; one Part
// may serve several endpoints, which then share its store and its stream
// limits.
type Part struct {
	hub       *notify.Hub
	store     Store
	keepAlive time.Duration
	pinger    *pinger // the keep-alives of every stream of the part
	streams   *counter
	attached  attachments

	// The endpoint Adopt, Listen and End serve (see front.go).
	mu     sync.Mutex
	front  *endpoint
	fronts int // endpoints set up
}

var _ mcphttp.Part = (*Part)(nil)

// New returns the Part that delivers hub's events. A nil hub means the
// inventory's Notifier, which must then be a *notify.Hub. It returns an
// error when an option is invalid, and when the hub reports one
// ([notify.Hub.Err]: a zero Hub, or one whose Broker or Log holds a nil
// pointer).
func New(hub *notify.Hub, opts Options) (*Part, error) {
	if hub != nil {
		if err := hub.Err(); err != nil {
			return nil, fmt.Errorf("sessions: unusable hub: %w", err)
		}
	}
	lim, err := opts.Limits.resolve()
	if err != nil {
		return nil, err
	}
	if opts.KeepAlive < 0 {
		return nil, errNegative
	}
	if opts.Store != nil && nilness.Is(opts.Store) {
		return nil, fmt.Errorf("sessions: Options.Store holds a nil %T: give a built one (sessions.NewMemoryStore, redisstore.New) or leave the field nil", opts.Store)
	}
	if ms, ok := opts.Store.(*MemoryStore); ok && ms.byID == nil {
		return nil, errors.New("sessions: Options.Store is a MemoryStore not made by sessions.NewMemoryStore")
	}
	p := &Part{hub: hub, store: opts.Store, keepAlive: opts.KeepAlive, streams: newCounter(lim.MaxStreams, lim.MaxStreamsPerPrincipal)}
	if p.keepAlive == 0 {
		p.keepAlive = DefaultKeepAlive
	}
	p.pinger = newPinger(p.keepAlive)
	if p.store == nil {
		if p.store, err = NewMemoryStore(lim); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Wait returns once every event stream of the part has ended, or with
// ctx's error. On HTTP/1.1 a stream outlives its handler (it is detached
// from net/http once its first messages are out), so http.Server.Shutdown
// does not wait for it: close the hub (which ends the streams, and has
// the modern ones completed), then call Wait, so that those completions
// are written before the process exits.
func (p *Part) Wait(ctx context.Context) error { return p.streams.wait(ctx) }

// endpoint is what the part serves on one endpoint.
type endpoint struct {
	*Part
	hub   *notify.Hub
	hooks *seam.Hooks
	inv   *inventory.Inventory
	log   *slog.Logger
}

// Setup registers the part's methods, verbs and middleware: initialize
// (which mints sessions), resources/subscribe and resources/unsubscribe
// (legacy era), subscriptions/listen (2026-07-28), GET and DELETE, and
// the check of Mcp-Session-Id on legacy messages. It makes the hub the
// inventory's Notifier when the inventory has none, so that grant changes
// reach the streams too; an inventory that reports them to another
// Notifier is an error.
func (p *Part) Setup(s *mcphttp.Setup) error {
	if p.store == nil {
		return errors.New("sessions: a Part not built by sessions.New (use sessions.New)")
	}
	hooks := seam.Of(s)
	if hooks == nil {
		return errors.New("sessions: a Setup not made by mcphttp.New")
	}
	inv := s.Inventory()
	hub := p.hub
	if hub == nil {
		var ok bool
		if hub, ok = inv.Notifier().(*notify.Hub); !ok {
			return errors.New("sessions: no hub: give New a *notify.Hub, or give it to the inventory as its Notifier")
		}
		if err := hub.Err(); err != nil {
			return fmt.Errorf("sessions: the inventory's hub is unusable: %w", err)
		}
	} else if !inv.AttachNotifier(hub) {
		if n, ok := inv.Notifier().(*notify.Hub); !ok || n != hub {
			return errors.New("sessions: the inventory reports grant changes to another Notifier than the part's hub; give the hub to one of them")
		}
	}
	ep := &endpoint{Part: p, hub: hub, hooks: hooks, inv: inv, log: s.Logger()}
	p.mu.Lock()
	p.front, p.fronts = ep, p.fronts+1
	p.mu.Unlock()
	s.Handle("initialize", ep.initialize, mcphttp.MethodOptions{Era: mcphttp.EraLegacy})
	s.Handle("resources/subscribe", ep.subscribe, mcphttp.MethodOptions{Era: mcphttp.EraLegacy})
	s.Handle("resources/unsubscribe", ep.subscribe, mcphttp.MethodOptions{Era: mcphttp.EraLegacy})
	s.Handle("subscriptions/listen", ep.listen, mcphttp.MethodOptions{Era: mcphttp.EraModern})
	hooks.HandleHTTP(http.MethodGet, ep.get)
	hooks.HandleHTTP(http.MethodDelete, ep.delete)
	s.Use(ep.checkSession)
	hooks.Notifying()
	return nil
}

// Errors of the part's own, answered by the endpoint's error table.
var (
	errNotAcceptableSSE = &mcphttp.Error{Status: http.StatusNotAcceptable, Code: jsonrpc.CodeInvalidRequest, Message: "Accept must admit text/event-stream"}
	errNoSessionHeader  = &mcphttp.Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest, Message: "Session not found"}
	errSessionNotFound  = &mcphttp.Error{Status: http.StatusNotFound, Code: jsonrpc.CodeInvalidRequest, Message: "Session not found"}
	errStreamsCaller    = &mcphttp.Error{Status: http.StatusTooManyRequests, RetryAfter: 30, Code: jsonrpc.CodeInvalidRequest, Message: "Too many open streams for this caller"}
	errStreamsFull      = &mcphttp.Error{Status: http.StatusServiceUnavailable, RetryAfter: 30, Code: jsonrpc.CodeInternalError, Message: "Too many open streams"}
	errStoreFailed      = &mcphttp.Error{Status: http.StatusServiceUnavailable, RetryAfter: 5, Code: jsonrpc.CodeInternalError, Message: "Sessions are unavailable"}
	errTooManySubs      = mcpwire.InvalidParams("too many subscriptions in this session")
)

// errNeedsSession: resources/subscribe and unsubscribe outside a session.
func errNeedsSession(method string) error {
	return &mcphttp.Error{Code: jsonrpc.CodeInvalidRequest, Message: method + " needs a session: send initialize first, then Mcp-Session-Id"}
}

// sessionHeader returns the request's Mcp-Session-Id, "" without one.
func sessionHeader(r *http.Request) string {
	if v := r.Header[mcpwire.HeaderSessionID]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// newID mints a session id: 32 random bytes, unpadded base64url.
func newID() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// initialize answers the legacy handshake. It mints a session bound to a
// signed-in caller; an anonymous caller (nothing could be delivered to
// nobody), and a signed-in one when the store is full or failing, are
// answered without a session and without the notification capabilities,
// never refused.
func (ep *endpoint) initialize(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	if c.Principal != nil {
		id := newID()
		ended, err := ep.store.Create(ctx, id, c.Principal)
		ep.attached.end(ended...)
		if err == nil {
			seam.CallsOf().WithSession(c, id, false)
			res, err := ep.initializeResult(c, true)
			return res.WithHeader(mcpwire.HeaderSessionID, id), err
		}
		if !errors.Is(err, ErrFull) {
			ep.storeFailed(ctx, "create", err)
		}
	}
	return ep.initializeResult(c, false)
}

func (ep *endpoint) initializeResult(c *mcphttp.Request, notifying bool) (mcphttp.Result, error) {
	res := ep.hooks.InitializeResult(c.ProtocolVersion, notifying)
	return seam.Answer[mcphttp.Result](c, res[1:len(res)-1], false) // the members, without the braces
}

// checkSession is the middleware that checks the Mcp-Session-Id of legacy
// messages (requests and notifications) other than initialize: one
// naming a session that is unknown, ended, expired or another
// principal's — or naming one anonymously — gets 404; one without the
// header is served statelessly. The session's id goes in the Request's
// SessionID (for the handlers inside) and the observers' Call.SessionID.
// resources/subscribe and unsubscribe requests check their session in the
// same store operation that changes it.
func (ep *endpoint) checkSession(next mcphttp.Handler) mcphttp.Handler {
	return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
		if c.Modern || c.Method == "initialize" ||
			!c.ID.IsZero() && (c.Method == "resources/subscribe" || c.Method == "resources/unsubscribe") {
			return next(ctx, c)
		}
		id := sessionHeader(c.HTTP)
		if id == "" {
			return next(ctx, c)
		}
		foreign := mcpwire.ForeignSessions(ctx)
		if c.Principal == nil {
			if foreign {
				return next(ctx, c) // legacy's session, not adopted
			}
			return mcphttp.Result{}, errSessionNotFound
		}
		switch _, err := ep.store.Find(ctx, id, c.Principal); {
		case errors.Is(err, ErrNotFound) && foreign:
			// Legacy's session, not adopted (or not this caller's): served
			// as without a session.
		case errors.Is(err, ErrNotFound):
			return mcphttp.Result{}, errSessionNotFound
		case err != nil:
			ep.storeFailed(ctx, "find", err) // served without the session: it authenticates nothing
		default:
			if inner, ok := seam.CallsOf().WithSession(c, id, true).(*mcphttp.Request); ok {
				c = inner
			}
		}
		return next(ctx, c)
	}
}

// subscribe serves resources/subscribe and resources/unsubscribe, which
// need a session: subscriptions live there, and updates arrive on its GET
// stream. A session that is not found is answered first (404), as for
// every other message; a subscription to a URI the caller may not read is
// refused as not found.
func (ep *endpoint) subscribe(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	id := sessionHeader(c.HTTP)
	if id == "" {
		return mcphttp.Result{}, errNeedsSession(c.Method)
	}
	if c.Principal == nil {
		return mcphttp.Result{}, ep.notFound(ctx, c)
	}
	uri, err := mcpwire.URIParam(c.Params())
	if err != nil {
		return mcphttp.Result{}, ep.sessionFirst(ctx, c, id, err)
	}
	c.NoteURI(uri)
	switch {
	case c.Method == "resources/unsubscribe":
		err = ep.store.Unsubscribe(ctx, id, c.Principal, uri)
	case !ep.canRead(ctx, c.Principal, uri):
		return mcphttp.Result{}, ep.sessionFirst(ctx, c, id, mcpwire.AboutURI(uri, inventory.ErrNotFound))
	default:
		err = ep.store.Subscribe(ctx, id, c.Principal, uri)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return mcphttp.Result{}, ep.notFound(ctx, c)
	case errors.Is(err, ErrTooManySubscriptions):
		seam.CallsOf().WithSession(c, id, false)
		return mcphttp.Result{}, errTooManySubs
	case err != nil:
		ep.storeFailed(ctx, "subscribe", err)
		return mcphttp.Result{}, err // an internal error, logged by the table without its text
	}
	seam.CallsOf().WithSession(c, id, false)
	return seam.Answer[mcphttp.Result](c, nil, false)
}

// sessionFirst returns errSessionNotFound when the session id is not
// found, else err: the session is answered before the params.
func (ep *endpoint) sessionFirst(ctx context.Context, c *mcphttp.Request, id string, err error) error {
	switch _, ferr := ep.store.Find(ctx, id, c.Principal); {
	case errors.Is(ferr, ErrNotFound):
		return ep.notFound(ctx, c)
	case ferr == nil:
		seam.CallsOf().WithSession(c, id, false)
	}
	return err
}

// notFound answers a request whose session is not found: 404, or, for a
// session of a legacy handler in front of the endpoint (one the part did
// not adopt), the answer to a request without a session.
func (ep *endpoint) notFound(ctx context.Context, c *mcphttp.Request) error {
	if mcpwire.ForeignSessions(ctx) {
		return errNeedsSession(c.Method)
	}
	return errSessionNotFound
}

// canRead reports whether caller may read uri now (visibility, access,
// scopes; not the application's record check, which the publisher of a
// ResourceUpdated event applies by addressing it to its subject).
func (ep *endpoint) canRead(ctx context.Context, caller *principal.Principal, uri string) bool {
	ok, err := ep.inv.CanRead(ctx, caller, uri)
	return err == nil && ok
}

// storeFailed logs a failure of the store (never its caller's input).
func (ep *endpoint) storeFailed(ctx context.Context, op string, err error) {
	ep.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "sessions: the session store failed",
		slog.String("op", op), slog.String("err", err.Error()))
}

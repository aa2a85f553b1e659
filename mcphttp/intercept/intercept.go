package intercept

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
)

// Options configures the handler [New] returns. The zero value is valid;
// each field documents what its zero value means. The origin guard, the
// body limits and the Authenticator are the endpoint's own
// (mcphttp.Options.Origins, Limits and Authenticator, read from the
// endpoint itself): they are never configured twice.
type Options struct {
	// Logger receives operator records: a legacy handler that could not
	// be listed at construction, a legacy tool shadowed by one of the
	// endpoint's. Nil means slog.Default().
	Logger *slog.Logger

	// Sessions, when set, delivers the endpoint's notifications to the
	// callers of the legacy handler's sessions (see [Sessions]), and keeps
	// which caller began each of them in its store, shared by the
	// instances of a fleet (see the package documentation: Sessions bound
	// to their callers). Nil means the legacy handler's sessions carry
	// only its own notifications, initialize answers announce no resource
	// subscriptions, and the handler keeps its own record of sessions.
	Sessions Sessions

	// ForwardAnonymous lets requests without credentials reach legacy
	// when the endpoint has an Authenticator ([mcphttp.Options]): legacy
	// then serves anonymous callers, as it does alone. False means such a
	// request gets the endpoint's 401 challenge, initialize included, and
	// never reaches legacy. Requests whose credentials the Authenticator
	// refuses never reach legacy either way. An endpoint without an
	// Authenticator (the service's own middleware puts the caller in the
	// context) leaves authentication to that middleware: put it in front
	// of the handler New returns.
	ForwardAnonymous bool

	// MethodScopes names the scopes a request forwarded to legacy needs,
	// per JSON-RPC method ("prompts/get": {"prompts:read"}); ToolScopes,
	// those a tools/call of one of legacy's tools needs, per tool name
	// (in addition to MethodScopes["tools/call"]). A caller without every
	// scope its request needs gets the endpoint's 403 insufficient_scope
	// challenge naming them, an anonymous caller the 401 challenge, and
	// legacy runs nothing. They apply when the endpoint has an
	// Authenticator; each scope must be a valid one (principal.ValidScope).
	MethodScopes, ToolScopes map[string][]string
}

// handler is what New returns.
type handler struct {
	ep       *mcphttp.Endpoint
	view     seam.Endpoint // what ep uses: its guard, limits, capabilities, methods
	legacy   http.Handler
	limits   jsonrpc.Limits
	auth     mcphttp.Authenticator
	log      *slog.Logger
	sessions Sessions
	bound    *bindings // the handler's own record of legacy sessions
	enforce  bool      // the endpoint has an Authenticator: forwarded requests are authenticated here
	opts     Options
	tools    bool // the endpoint serves tools/list: first pages are merged
	caps     capabilities
	clashes  sync.Map // legacy tool names already logged as shadowed

	resourcesLogged atomic.Bool // resourcesOwned has logged
}

var _ http.Handler = (*handler)(nil)

// New returns a handler that puts ep in front of legacy, an MCP handler
// of another SDK (go-sdk's mcp.NewStreamableHTTPHandler, mcp-go's
// server.NewStreamableHTTPServer). Build ep with the parts the service
// wants (tools, rate limits, observers); the handler routes each request
// to one of them as the package documentation says. When ep serves
// tools, New lists legacy's tools in-process and returns an error for one
// that ep would serve instead (a name clash).
func New(ep *mcphttp.Endpoint, legacy http.Handler, opts Options) (http.Handler, error) {
	if ep == nil {
		return nil, errors.New("intercept: New: nil endpoint")
	}
	view, ok := seam.EndpointOf(ep)
	auth, _ := view.Authenticator.(mcphttp.Authenticator)
	switch {
	case !ok || auth == nil:
		return nil, errors.New("intercept: New: an Endpoint not built by mcphttp.New (use mcphttp.New)")
	case nilness.Is(legacy):
		return nil, fmt.Errorf("intercept: New: the legacy handler is nil (%T)", legacy)
	case opts.Sessions != nil && nilness.Is(opts.Sessions):
		return nil, fmt.Errorf("intercept: Options.Sessions holds a nil %T: give a built one (sessions.New) or leave the field nil", opts.Sessions)
	}
	if err := checkScopes(opts.MethodScopes, "MethodScopes"); err != nil {
		return nil, err
	}
	if err := checkScopes(opts.ToolScopes, "ToolScopes"); err != nil {
		return nil, err
	}
	bound, err := newBindings(sessions.Limits{})
	if err != nil {
		return nil, err
	}
	_, contextOnly := auth.(mcpwire.ContextAuthenticator)
	h := &handler{
		ep: ep, view: view, legacy: legacy, limits: view.Limits, auth: auth,
		log: opts.Logger, sessions: opts.Sessions, bound: bound, enforce: !contextOnly, opts: opts,
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.caps, err = capabilitiesOf(view); err != nil {
		return nil, err
	}
	h.tools = view.Serves(jsonrpc.Message{Kind: jsonrpc.KindRequest, Method: "tools/list", ID: jsonrpc.Int64ID(1)})
	if err := h.checkLegacyTools(); err != nil {
		return nil, err
	}
	return h, nil
}

// resourcesOwned logs, once, that legacy has resource handlers the
// endpoint shadows: every resources/ method is the endpoint's.
func (h *handler) resourcesOwned() {
	if h.resourcesLogged.CompareAndSwap(false, true) {
		h.log.Warn("intercept: the legacy handler announces resources; every resources/ method is served by the endpoint from its inventory, so the legacy handler's resource handlers are never reached: move those resources to the inventory")
	}
}

// ServeHTTP checks and routes one request.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	guard := h.view.Origins
	if err := guard.Check(r); err != nil {
		mcphttp.WriteError(w, err) // 403
		return
	}
	if guard.ServeCORS(w, r) {
		return // a preflight
	}
	if r.Method != http.MethodPost {
		h.serveVerb(w, r)
		return
	}
	// Authenticated before the body is read, which is read under the
	// caller's share (the principal h.caller put in the context) or as an
	// anonymous caller's.
	r, caller := h.caller(r)
	b, ok := jsonrpc.FromContext(r.Context())
	if !ok {
		if b, ok = h.limits.ReadBody(w, r); !ok {
			return // refused input never reaches legacy
		}
		defer b.Release()
		r = r.WithContext(jsonrpc.NewContext(r.Context(), b)) // the endpoint serves this decode
	}
	if h.enforce && mcpwire.AuthRefusal(r.Context()) != nil {
		h.ep.ServeHTTP(w, own(r)) // the endpoint's answer to the refusal found here, counted once
		return
	}
	if h.checkSession(w, r, caller) {
		return
	}
	if err := h.permit(b, caller); err != nil {
		h.auth.WriteError(w, r, err)
		return
	}
	if b.Batch {
		h.serveBatch(w, r, b)
		return
	}
	switch h.route(b.Message) {
	case routeOwn:
		h.ep.ServeHTTP(w, own(r))
	case routeMerge:
		h.serveToolsList(w, r, b)
	case routeRewrite:
		h.forwardRewriting(w, r, b)
	default:
		h.forward(w, r, b.Raw, caller)
	}
}

// own returns r marked for the endpoint: its Mcp-Session-Id is legacy's
// (a mark of the kit's parts).
func own(r *http.Request) *http.Request {
	return r.WithContext(mcpwire.WithForeignSessions(r.Context()))
}

// route is where a message goes.
type route uint8

const (
	routeForward route = iota // to legacy, byte for byte
	routeOwn                  // to the endpoint
	routeRewrite              // to legacy, its answer given the endpoint's capabilities
	routeMerge                // to both: legacy's tools/list and the endpoint's, merged
)

// route decides a message's way on its strict decode. The endpoint owns
// every resources/… method (unknown ones too: a resource method is never
// legacy's) and what it serves itself (the endpoint's method table and claims: a completion not
// strictly for a prompt, a tools/call the tools part claims, …), except
// what belongs to legacy's sessions: initialize, ping, server/discover and
// client notifications. A first tools/list page is merged; later pages
// are legacy's own.
func (h *handler) route(msg jsonrpc.Message) route {
	switch m := msg.Method; {
	case strings.HasPrefix(m, "resources/"):
		return routeOwn
	case m == "initialize", m == "server/discover":
		if msg.Kind == jsonrpc.KindRequest {
			return routeRewrite
		}
		return routeForward
	case m == "ping", strings.HasPrefix(m, "notifications/"):
		return routeForward
	case m == "tools/list":
		if h.tools && msg.Kind == jsonrpc.KindRequest && firstPage(msg.Params) {
			return routeMerge
		}
		return routeForward
	case h.view.Serves(msg):
		return routeOwn
	}
	return routeForward
}

// firstPage reports whether params ask for a list's first page: no
// cursor, or one the strict reader cannot read (the endpoint answers
// that; legacy never sees it).
func firstPage(params []byte) bool {
	cursor, _, err := mcpwire.StringParam(params, "cursor")
	return err != nil || cursor == ""
}

// forward passes r to legacy with body as its body: the bytes received,
// with every header as it came.
func forward(legacy http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	legacy.ServeHTTP(w, r)
}

// caller authenticates r once, softly, for a request legacy answers: the
// context principal, else the Authenticator's, else nil (anonymous, or
// credentials that prove no caller: legacy answers those as it does).
// With a caller, the request returned carries it in its context
// (principal.NewContext), so that an authn middleware in front of legacy
// and the endpoint both use it instead of verifying the request again,
// which a DPoP proof, good for one use, would fail. Credentials refused
// are carried in the context too (mcpwire.WithAuthRefusal): the endpoint
// answers that refusal without checking them again, so one request
// counts one refusal (the Authenticator's Throttle), and a later caller
// call for the same request checks nothing either.
func (h *handler) caller(r *http.Request) (*http.Request, *principal.Principal) {
	if p, ok := principal.FromContext(r.Context()); ok {
		return r, &p
	}
	if mcpwire.AuthRefusal(r.Context()) != nil {
		return r, nil
	}
	p, err := h.auth.Authenticate(r)
	if errors.Is(err, principal.ErrUnauthenticated) {
		return r, nil // no credentials: nothing to remember
	}
	if err != nil {
		return r.WithContext(mcpwire.WithAuthRefusal(r.Context(), err)), nil
	}
	ctx, err := principal.NewContext(r.Context(), p)
	if err != nil {
		return r, nil // not a principal the rules admit: nobody's
	}
	return r.WithContext(ctx), &p
}

// anonymous returns r for the endpoint as an anonymous request: without
// the credentials that proved no caller.
func anonymous(r *http.Request) *http.Request {
	if len(r.Header["Authorization"]) == 0 && len(r.Header["Dpop"]) == 0 {
		return r
	}
	r2 := r.Clone(mcpwire.WithAuthRefusal(r.Context(), nil)) // no credentials, no refusal
	r2.Header.Del("Authorization")
	r2.Header.Del("DPoP")
	return r2
}

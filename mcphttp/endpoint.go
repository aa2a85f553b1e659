package mcphttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/notify"
)

// DefaultMaxBodyBytes is the request body limit when Options.MaxBodyBytes
// is zero.
const DefaultMaxBodyBytes = 4 << 20

// Implementation names the server in initialize and server/discover results.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Options configures an [Endpoint]. The zero value is valid for an
// inventory that holds only public resources.
type Options struct {
	// ServerInfo names the server. A zero Name means "mcpkit", a zero
	// Version means "0".
	ServerInfo Implementation

	// Instructions is the optional text for clients' models, sent in the
	// initialize and server/discover results.
	Instructions string

	// Authenticator checks bearer tokens and writes 401/403 challenges. It
	// is required when the inventory holds anything protected. A request
	// with a token that is present but invalid gets 401 on every method;
	// a request without a token is anonymous, which is enough for
	// initialize, ping, server/discover and public resources. A Principal
	// that an earlier middleware put in the request context
	// (principal.NewContext: the Authenticator's own Handler or Optional, or
	// the service's middleware) is used as it is, and nothing is verified
	// again; a service that authenticates with middleware of its own gives
	// an Authenticator without a Verifier (authn.NewAuthenticator(nil, …)),
	// which only writes the challenges. Nil means no authentication: the
	// context principal, if any, is still used; tokens are ignored.
	Authenticator *authn.Authenticator

	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// whose cross-origin requests are accepted (see [OriginGuard]), with
	// CORS: their preflights are answered and their responses carry
	// Access-Control-Allow-Origin, so a browser MCP client on one of them
	// can list and read with a bearer token. A request whose Origin is
	// present, not listed and not its own origin gets 403. Empty means no
	// cross-origin requests: closed, never "*".
	AllowedOrigins []string

	// MaxBodyBytes bounds the request body; a larger one gets 413 after
	// reading at most this many bytes. Zero means DefaultMaxBodyBytes. A
	// body that a [jsonrpc.Decoder] in front of the endpoint decoded
	// already is served as that Decoder decided.
	MaxBodyBytes int64

	// BodyBudget bounds the memory of the request bodies being read and
	// served at once (see [jsonrpc.BodyBudget]): past it a request gets
	// 503 with Retry-After. Nil means the process-wide default budget of
	// jsonrpc.DefaultBodyBudget (64 MiB).
	BodyBudget *jsonrpc.BodyBudget

	// BodyReadTimeout bounds the time a request body may take to arrive
	// (see jsonrpc.Limits.ReadTimeout). Zero means
	// jsonrpc.DefaultReadTimeout (10 s); negative means none.
	BodyReadTimeout time.Duration

	// Logger receives operator records (internal errors, contract
	// violations). It never receives tokens or request bodies. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Notifications turns on change notifications, delivered to the
	// streams of the principal they concern and to no one else. When the
	// inventory has no Notifier of its own, the hub becomes it, so grant
	// changes notify too (inventory.Inventory.AttachNotifier); nil means
	// the inventory's Notifier when that is a *notify.Hub. Legacy
	// clients get a session mode: initialize mints an Mcp-Session-Id bound
	// to the caller, GET opens the session's SSE stream
	// (notifications/resources/list_changed, and notifications/resources/updated
	// for resources/subscribe'd URIs), DELETE ends the session. Modern
	// clients use subscriptions/listen. The listChanged and subscribe
	// capabilities are advertised exactly then. Nil means none of this:
	// the endpoint is stateless and GET/DELETE get 405. Call the hub's
	// Close before the server's Shutdown (http.Server.RegisterOnShutdown):
	// open streams end then, and modern ones are completed; streams on
	// HTTP/1.1 outlive their handlers, so that an idle one costs little,
	// and Shutdown does not wait for them: [Endpoint.WaitStreams] does.
	Notifications *notify.Hub

	// Sessions bounds the legacy sessions and the event streams of
	// notifications (see [SessionLimits]). The zero value means the
	// defaults.
	Sessions SessionLimits

	// KeepAlive is the interval of SSE keep-alive comments on open
	// streams. Zero means DefaultKeepAlive.
	KeepAlive time.Duration

	// Tools turns on the tools bridge: the inventory offered as MCP tools
	// (list_resources, read_resource, search and fetch, typed template
	// tools; see [ToolOptions]), served by tools/list and tools/call with
	// the same authentication, scopes, gates, grants, byte limit and
	// cursors as the resource methods, and the tools capability. Nil means
	// no tools: tools/list and tools/call are unknown methods (or, with
	// Intercept, the legacy handler's).
	Tools *ToolOptions

	// Observer watches every served call (see [Observer]): traces and
	// metrics (the otelmcp module), audit records ([Audit]), several at
	// once with [Observers]. Nil means none, at no cost.
	Observer Observer

	// RateLimiter limits each caller's calls per method class (see
	// [RateLimiter]); a call over the limit gets 429 with Retry-After. One
	// limiter may serve several endpoints, which then share the budget.
	// Nil means no limits.
	RateLimiter *RateLimiter
}

// Endpoint is the MCP Streamable HTTP endpoint: an http.Handler to mount at
// the MCP path. It is safe for concurrent use.
type Endpoint struct {
	inv     *inventory.Inventory
	auth    *authn.Authenticator
	origins *OriginGuard
	limits  jsonrpc.Limits
	log     *slog.Logger
	only    string // when set, the one method served (a ListHandler)

	tools   *toolSet     // nil: no tools bridge
	obs     Observer     // nil: none
	limiter *RateLimiter // nil: no limits

	hub       *notify.Hub    // nil: no notifications
	sessions  *sessionStore  // nil: stateless
	streams   *streamCounter // open event streams, with notifications
	keepAlive time.Duration

	// Pre-encoded pieces of results.
	serverInfo   []byte // {"name":…,"version":…}
	capabilities []byte // {"resources":{…}[,"completions":{}]}
	// capsStateless are the capabilities of an initialize answered without
	// a session (anonymous, or the session table full): no notifications.
	capsStateless []byte
	instructions  []byte // JSON string, or nil
	metaPrivate   []byte // modern members of per-caller cacheable results
	metaPlain     []byte // modern members of non-cacheable results
	discover      []byte // the whole server/discover result
}

var _ http.Handler = (*Endpoint)(nil)

// New returns an Endpoint answering from inv. It returns an error when inv
// holds protected resources or list sources and no Authenticator is
// configured, or when an option is invalid.
func New(inv *inventory.Inventory, opts Options) (*Endpoint, error) {
	return newEndpoint(inv, opts, "", false)
}

// newEndpoint is New; only, when set, is the one method served (a piece
// such as the ListHandler); stateless leaves out sessions and streams even
// when the inventory's Notifier is a hub (pieces, and Intercept, where the
// legacy handler owns sessions).
func newEndpoint(inv *inventory.Inventory, opts Options, only string, stateless bool) (*Endpoint, error) {
	if inv == nil {
		return nil, errors.New("mcphttp: nil inventory")
	}
	if opts.Authenticator == nil && inv.NeedsAuthentication() {
		return nil, errors.New("mcphttp: the inventory has protected resources but no Authenticator is configured " +
			"(with authentication middleware of your own, use authn.NewAuthenticator(nil, …) for the challenges)")
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.New("mcphttp: MaxBodyBytes must not be negative")
	}
	origins, err := NewOriginGuard(opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		inv:     inv,
		auth:    opts.Authenticator,
		origins: origins,
		limits:  jsonrpc.Limits{MaxBytes: opts.MaxBodyBytes, Budget: opts.BodyBudget, ReadTimeout: opts.BodyReadTimeout},
		log:     opts.Logger,
		only:    only,
		obs:     opts.Observer,
		limiter: opts.RateLimiter,
	}
	if e.limits.MaxBytes == 0 {
		e.limits.MaxBytes = DefaultMaxBodyBytes
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	lim, ok := opts.Sessions.resolve()
	if !ok || opts.KeepAlive < 0 {
		return nil, errors.New("mcphttp: Sessions limits and KeepAlive must not be negative")
	}
	hub := opts.Notifications
	if hub == nil && !stateless {
		hub, _ = inv.Notifier().(*notify.Hub)
	} else if hub != nil && !inv.AttachNotifier(hub) {
		if n, ok := inv.Notifier().(*notify.Hub); !ok || n != hub {
			return nil, errors.New("mcphttp: the inventory reports grant changes to another Notifier than Options.Notifications; give the hub to one of them")
		}
	}
	if hub != nil {
		e.hub = hub
		e.sessions = newSessionStore(lim)
		e.streams = newStreamCounter(lim.MaxStreams, lim.MaxStreamsPerPrincipal)
		e.keepAlive = opts.KeepAlive
		if e.keepAlive == 0 {
			e.keepAlive = DefaultKeepAlive
		}
	}
	if opts.Tools != nil {
		if e.tools, err = newToolSet(inv, opts.Tools); err != nil {
			return nil, err
		}
	}
	if err := e.encodeResults(opts); err != nil {
		return nil, err
	}
	return e, nil
}

// encodeResults pre-encodes what every initialize, server/discover and
// modern result repeats.
func (e *Endpoint) encodeResults(opts Options) error {
	info := opts.ServerInfo
	if info.Name == "" {
		info.Name = "mcpkit"
	}
	if info.Version == "" {
		info.Version = "0"
	}
	var err error
	if e.serverInfo, err = json.Marshal(info); err != nil {
		return fmt.Errorf("mcphttp: encoding server info: %w", err)
	}
	completions := ""
	if e.inv.Completes() {
		completions = `,"completions":{}`
	}
	tools, toolsNotified := "", ""
	if e.tools != nil {
		tools, toolsNotified = `,"tools":{"listChanged":false}`, `,"tools":{"listChanged":true}`
	}
	caps := `{"resources":{"subscribe":false,"listChanged":false}` + completions + tools
	e.capsStateless = []byte(caps + "}")
	if e.hub != nil {
		caps = `{"resources":{"subscribe":true,"listChanged":true}` + completions + toolsNotified
	}
	e.capabilities = []byte(caps + "}")
	if opts.Instructions != "" {
		e.instructions, _ = json.Marshal(opts.Instructions)
	}
	meta := `"_meta":{"` + metaServerInfo + `":` + string(e.serverInfo) + `}`
	e.metaPrivate = []byte(`"resultType":"complete","ttlMs":0,"cacheScope":"private",` + meta)
	e.metaPlain = []byte(`"resultType":"complete",` + meta)

	versions, _ := json.Marshal(allVersions)
	d := `{"supportedVersions":` + string(versions) + `,"capabilities":` + caps + "}"
	if e.instructions != nil {
		d += `,"instructions":` + string(e.instructions)
	}
	d += `,"resultType":"complete","ttlMs":` + strconv.Itoa(discoverTTLMillis) + `,"cacheScope":"public",` + meta + "}"
	e.discover = []byte(d)
	return nil
}

// discoverTTLMillis is how long clients may cache server/discover: the
// result is the same for every caller.
const discoverTTLMillis = 5 * 60 * 1000

// ServeHTTP answers one POST carrying one JSON-RPC message (or, for protocol
// 2025-03-26, a batch), and, with notifications, the legacy session's GET
// stream and DELETE.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer may depend on the caller, refusals included: the same
	// Vary whether or not authn's middleware ran in front.
	appendVary(w.Header(), "Authorization")
	if !e.origins.check(r) {
		writeTransportError(w, errForbiddenOrigin)
		return
	}
	if e.origins.serveCORS(w, r) {
		return // a preflight
	}
	switch {
	case r.Method == http.MethodPost:
	case r.Method == http.MethodGet && e.sessions != nil:
		e.streamGET(w, r)
		return
	case r.Method == http.MethodDelete && e.sessions != nil:
		e.deleteSession(w, r)
		return
	default:
		if e.sessions != nil {
			w.Header().Set("Allow", "GET, POST, DELETE")
		} else {
			w.Header().Set("Allow", http.MethodPost)
		}
		writeTransportError(w, errMethodNotAllowed)
		return
	}
	if !acceptsType(r.Header["Accept"], "application/json", "application/*") {
		writeTransportError(w, errNotAcceptable)
		return
	}
	if b, ok := jsonrpc.FromContext(r.Context()); ok {
		e.serveBody(w, r, b) // a Decoder in front of the endpoint decoded it
		return
	}
	b, ok := e.limits.ReadBody(w, r)
	if !ok {
		return
	}
	defer b.Release()
	e.serveBody(w, r, b)
}

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
	// initialize, ping, server/discover and public resources. Nil means
	// no authentication: tokens are ignored.
	Authenticator *authn.Authenticator

	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// whose cross-origin requests are accepted. A request whose Origin is
	// present, not listed and not its own origin gets 403. Empty means no
	// cross-origin requests: closed, never "*".
	AllowedOrigins []string

	// MaxBodyBytes bounds the request body; a larger one gets 413 after
	// reading at most this many bytes. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// Logger receives operator records (internal errors, contract
	// violations). It never receives tokens or request bodies. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Notifications turns on change notifications, delivered to the
	// streams of the principal they concern and to no one else. Legacy
	// clients get a session mode: initialize mints an Mcp-Session-Id bound
	// to the caller, GET opens the session's SSE stream
	// (notifications/resources/list_changed, and notifications/resources/updated
	// for resources/subscribe'd URIs), DELETE ends the session. Modern
	// clients use subscriptions/listen. The listChanged and subscribe
	// capabilities are advertised exactly then. Nil means none of this:
	// the endpoint is stateless and GET/DELETE get 405. Call the hub's
	// Close before the server's Shutdown (http.Server.RegisterOnShutdown):
	// open streams end then, and modern ones are completed.
	Notifications *notify.Hub

	// SessionIdleTimeout is how long a legacy session without requests or
	// an open stream lives. Zero means DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration

	// MaxSessions bounds the live legacy sessions; initialize gets 503 when
	// they are all in use. Zero means DefaultMaxSessions.
	MaxSessions int

	// KeepAlive is the interval of SSE keep-alive comments on open
	// streams. Zero means DefaultKeepAlive.
	KeepAlive time.Duration
}

// Endpoint is the MCP Streamable HTTP endpoint: an http.Handler to mount at
// the MCP path. It is safe for concurrent use.
type Endpoint struct {
	inv     *inventory.Inventory
	auth    *authn.Authenticator
	origins originPolicy
	maxBody int64
	log     *slog.Logger

	hub       *notify.Hub   // nil: no notifications
	sessions  *sessionStore // nil: stateless
	keepAlive time.Duration

	// Pre-encoded pieces of results.
	serverInfo   []byte // {"name":…,"version":…}
	capabilities []byte // {"resources":{…}[,"completions":{}]}
	instructions []byte // JSON string, or nil
	metaPrivate  []byte // modern members of per-caller cacheable results
	metaPlain    []byte // modern members of non-cacheable results
	discover     []byte // the whole server/discover result
}

var _ http.Handler = (*Endpoint)(nil)

// New returns an Endpoint answering from inv. It returns an error when inv
// holds protected resources or list sources and no Authenticator is
// configured, or when an option is invalid.
func New(inv *inventory.Inventory, opts Options) (*Endpoint, error) {
	if inv == nil {
		return nil, errors.New("mcphttp: nil inventory")
	}
	if opts.Authenticator == nil && inv.NeedsAuthentication() {
		return nil, errors.New("mcphttp: the inventory has protected resources but no Authenticator is configured")
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.New("mcphttp: MaxBodyBytes must not be negative")
	}
	origins, err := newOriginPolicy(opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		inv:     inv,
		auth:    opts.Authenticator,
		origins: origins,
		maxBody: opts.MaxBodyBytes,
		log:     opts.Logger,
	}
	if e.maxBody == 0 {
		e.maxBody = DefaultMaxBodyBytes
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if opts.SessionIdleTimeout < 0 || opts.MaxSessions < 0 || opts.KeepAlive < 0 {
		return nil, errors.New("mcphttp: SessionIdleTimeout, MaxSessions and KeepAlive must not be negative")
	}
	if opts.Notifications != nil {
		e.hub = opts.Notifications
		e.sessions = newSessionStore(opts.SessionIdleTimeout, opts.MaxSessions)
		e.keepAlive = opts.KeepAlive
		if e.keepAlive == 0 {
			e.keepAlive = DefaultKeepAlive
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
	caps := `{"resources":{"subscribe":false,"listChanged":false}`
	if e.hub != nil {
		caps = `{"resources":{"subscribe":true,"listChanged":true}`
	}
	if e.inv.Completes() {
		caps += `,"completions":{}`
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
// 2025-03-26, a batch).
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !e.origins.check(r) {
		writeTransportError(w, http.StatusForbidden, "Forbidden origin")
		return
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
		writeTransportError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	if !negotiateContent(w, r) {
		return
	}
	body, ok := e.readLimited(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	e.serveBody(w, r, body.b)
}

// writeTransportError answers a request the endpoint refuses before reading
// any JSON-RPC message: a JSON-RPC error response without id, as the
// transport specification allows.
func writeTransportError(w http.ResponseWriter, status int, message string) {
	body := jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, message))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package mcphttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/principal"
)

// DefaultMaxResultBytes is the byte limit of a whole response when
// Options.MaxResultBytes is zero.
const DefaultMaxResultBytes = 1 << 20

// Implementation names the server in initialize and server/discover results.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Options configures an [Endpoint]. The zero value is valid; each field
// documents what its zero value means.
type Options struct {
	// ServerInfo names the server. A zero Name means "mcpkit", a zero
	// Version means "0".
	ServerInfo Implementation

	// Instructions is the optional text for clients' models, sent in the
	// initialize and server/discover results.
	Instructions string

	// Authenticator authenticates requests and answers refusals
	// (*authn.Authenticator: bearer tokens, RFC 9728 challenges). Nil
	// means the service's own middleware authenticates: the principal it
	// put in the context (principal.NewContext) is the caller, a request
	// without one is anonymous, one that offers credentials anyway is
	// refused (401), and refusals are plain RFC 6750 challenges without a
	// resource_metadata URL.
	Authenticator Authenticator

	// RequireSignIn answers every request without credentials — initialize,
	// ping and server/discover included, and the GET and DELETE of parts —
	// with the Authenticator's 401 challenge, before its body is read, so
	// that clients which start OAuth only when a connection is refused
	// (the first request of a session) sign in at connect. Use it when
	// nothing is public: no public resource, template or tool. Leave it off
	// (the default) when anonymous callers have something to see: they are
	// then served what is public, and a protected method answers 401 when
	// it is called. CORS preflights are never refused.
	RequireSignIn bool

	// Origins decides which requests may reach the endpoint at all (see
	// [origin.Guard]: cross-origin browsers, DNS rebinding) and speaks
	// CORS for the origins it allows. Give the endpoint the same guard
	// that protects the service's other handlers. Nil means a guard that
	// allows no cross-origin request.
	Origins *origin.Guard

	// Limits bounds request bodies (size, memory in flight, read time):
	// see [jsonrpc.Limits]. A body that a [jsonrpc.Decoder] in front of
	// the endpoint decoded already is served as that Decoder decided.
	Limits jsonrpc.Limits

	// MaxResultBytes bounds the size of every response: envelope, result,
	// nextCursor and _meta included. List pages are filled under it
	// exactly; a read or tool result over it is an internal error. Zero
	// means DefaultMaxResultBytes (1 MiB); New refuses a limit that cannot
	// hold one entry of the largest size the inventory allows.
	MaxResultBytes int

	// MaxPageBytes bounds the size of a list page's response
	// (resources/list, resources/templates/list) under MaxResultBytes:
	// the tighter of the two applies to pages (package budget). Zero
	// means MaxResultBytes alone.
	MaxPageBytes int

	// Logger receives operator records (internal errors, contract
	// violations). It never receives tokens or request bodies. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Endpoint is the MCP Streamable HTTP endpoint: an http.Handler to mount
// at the MCP path. It serves initialize, ping, server/discover and the
// resource methods from an inventory; parts add the rest. It is safe for
// concurrent use.
type Endpoint struct {
	inv      *inventory.Inventory
	auth     Authenticator
	signIn   bool // Options.RequireSignIn
	origins  *origin.Guard
	limits   jsonrpc.Limits
	maxBytes int
	log      *slog.Logger

	pageBytes int // the tighter of MaxPageBytes and maxBytes (package budget)

	methods    map[string]method
	middleware []Middleware
	handle     Handler // dispatch inside the middleware
	observers  []Observer
	verbs      map[string]verb
	verbChecks []func(*http.Request, *principal.Principal) error
	allow      string // the Allow header of a 405
	caps       []capability
	notifying  bool
	statics    *mcpwire.Statics // encoded static resources
	watchers   []seam.Watcher
	elicit     elicitSessions // legacy sessions that declared elicitation.url

	// Pre-encoded pieces of results.
	serverInfo   []byte // {"name":…,"version":…}
	instructions []byte // JSON string, or nil
	capsPlain    []byte // the capabilities of an answer without event streams
	capsNotify   []byte // … with them
	metaPrivate  []byte // modern members of per-caller cacheable results
	metaPlain    []byte // modern members of other results
	discover     []byte // the whole server/discover result
}

type capability struct {
	name  string
	value func(notifying bool) string
}

var _ http.Handler = (*Endpoint)(nil)

// New returns an Endpoint answering from inv, with the parts given (in
// order: a part's middleware wraps the later parts'). It returns an error
// when an option or a part is invalid.
func New(inv *inventory.Inventory, opts Options, parts ...Part) (*Endpoint, error) {
	e, err := newEndpoint(inv, opts)
	if err != nil {
		return nil, err
	}
	e.registerResourceMethods()
	return e.finish(parts)
}

// newEndpoint checks opts and returns an Endpoint without methods.
func newEndpoint(inv *inventory.Inventory, opts Options) (*Endpoint, error) {
	if inv == nil {
		return nil, errors.New("mcphttp: nil inventory")
	}
	if opts.Authenticator != nil && nilness.Is(opts.Authenticator) {
		return nil, fmt.Errorf("mcphttp: Options.Authenticator holds a nil %T: give a built one (authn.NewAuthenticator) or leave the field nil", opts.Authenticator)
	}
	if opts.MaxResultBytes < 0 {
		return nil, errors.New("mcphttp: MaxResultBytes must not be negative")
	}
	e := &Endpoint{
		inv: inv, auth: opts.Authenticator, signIn: opts.RequireSignIn, origins: opts.Origins, limits: opts.Limits,
		maxBytes: opts.MaxResultBytes, log: opts.Logger,
		methods: map[string]method{}, verbs: map[string]verb{},
	}
	if e.auth == nil {
		e.auth = contextAuth{}
	}
	if e.origins == nil {
		e.origins = origin.Closed()
	}
	if e.maxBytes == 0 {
		e.maxBytes = DefaultMaxResultBytes
	}
	var err error
	if e.pageBytes, err = budget.Bytes(opts.MaxPageBytes, e.maxBytes); err != nil {
		return nil, errors.New("mcphttp: MaxPageBytes must not be negative")
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if err := e.encodeInfo(opts); err != nil {
		return nil, err
	}
	e.statics = mcpwire.EncodeStatics(e.inv.StaticItems())
	if need := e.minResultBytes(); e.pageBytes < need {
		return nil, fmt.Errorf("mcphttp: MaxResultBytes or MaxPageBytes %d cannot hold a page with one item of the largest size the inventory allows, its cursor and the envelope: at least %d bytes are needed", e.pageBytes, need)
	}
	return e, nil
}

// finish sets the parts up and pre-encodes what every answer repeats.
func (e *Endpoint) finish(parts []Part) (*Endpoint, error) {
	seam.Register(hooksOf)
	seam.RegisterEndpoint(endpointOf)
	seam.RegisterCalls(seamCalls)
	for i, p := range parts {
		if nilness.Is(p) {
			return nil, fmt.Errorf("mcphttp: New: part %d is nil (%T)", i+1, p)
		}
		s := &Setup{e: e}
		if err := p.Setup(s); err != nil {
			return nil, err
		}
		if s.err != nil {
			return nil, s.err
		}
	}
	e.handle = e.dispatch
	for i := len(e.middleware) - 1; i >= 0; i-- {
		e.handle = e.middleware[i](e.handle)
	}
	// Allow lists GET, POST, DELETE in that order, then any other verb.
	var allow, more []string
	for _, v := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if _, ok := e.verbs[v]; ok || v == http.MethodPost {
			allow = append(allow, v)
		}
	}
	for v := range e.verbs {
		if v != http.MethodGet && v != http.MethodDelete {
			more = append(more, v)
		}
	}
	slices.Sort(more)
	e.allow = strings.Join(append(allow, more...), ", ")
	e.encodeCapabilities()
	return e, nil
}

// encodeInfo pre-encodes the server's description.
func (e *Endpoint) encodeInfo(opts Options) error {
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
	if opts.Instructions != "" {
		e.instructions = mcpwire.AppendString(nil, opts.Instructions)
	}
	meta := `"_meta":{"` + metaServerInfo + `":` + string(e.serverInfo) + `}`
	e.metaPrivate = []byte(`"resultType":"complete","ttlMs":0,"cacheScope":"private",` + meta)
	e.metaPlain = []byte(`"resultType":"complete",` + meta)
	return nil
}

// metaFor returns the result members a call's result ends with: in the
// modern protocol resultType, the caching hints and _meta; nothing in the
// legacy ones.
func (e *Endpoint) metaFor(modern bool, cache Cache) []byte {
	switch {
	case !modern || e == nil:
		return nil
	case cache == CachePrivate:
		return e.metaPrivate
	}
	return e.metaPlain
}

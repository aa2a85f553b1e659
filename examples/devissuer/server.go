package devissuer

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Defaults of ServerOptions.
const (
	DefaultCodeTTL         = time.Minute
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 24 * time.Hour
	DefaultMaxClients      = 1000
	DefaultMaxPending      = 1000
	DefaultMaxGrants       = 10000
	// signInTTL is how long a login page stays usable.
	signInTTL = 10 * time.Minute
	// maxCodeTTL is RFC 6749 §4.1.2's "maximum authorization code
	// lifetime of 10 minutes".
	maxCodeTTL = 10 * time.Minute
)

// Scope is a scope the authorization server grants, with what it allows in
// words, for the login page.
type Scope struct {
	Name        string // an RFC 6749 scope-token
	Description string // shown beside the name; may be empty
}

// DefaultUsers returns the users the login page offers when
// ServerOptions.Users is empty: the documents example's seeded users.
func DefaultUsers() []string { return []string{"alice", "bob", "carol"} }

// ServerOptions configures a [Server]. Scopes is required; the zero value
// of every other field is valid and documented.
type ServerOptions struct {
	// Scopes are the scopes clients may ask for (scopes_supported), in the
	// order the login page shows them. At least one.
	Scopes []Scope
	// DefaultScopes are granted to a request that names none. Empty means
	// the first of Scopes.
	DefaultScopes []string
	// Users are offered on the login page, besides a field for any other
	// user. Empty means DefaultUsers().
	Users []string
	// ResourceName names the resource on the login page. Empty means the
	// issuer's audience URL.
	ResourceName string

	// CodeTTL is the lifetime of an authorization code (single use). Zero
	// means DefaultCodeTTL; at most 10 minutes.
	CodeTTL time.Duration
	// AccessTokenTTL is the lifetime of an access token. Zero means
	// DefaultAccessTokenTTL; at most MaxTTL.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the lifetime of a refresh token; each use
	// replaces it with a new one. Zero means DefaultRefreshTokenTTL.
	RefreshTokenTTL time.Duration

	// Exchange, when set, turns on the token-exchange grant (RFC 8693)
	// for one confidential client (see ExchangeOptions, exchange.go).
	Exchange *ExchangeOptions

	// MaxClients bounds the dynamically registered clients kept in
	// memory. Zero means DefaultMaxClients.
	MaxClients int
	// MaxPending bounds the sign-ins in progress, and separately the
	// codes not yet expired. Zero means DefaultMaxPending.
	MaxPending int
	// MaxGrants bounds the refresh tokens kept. Zero means
	// DefaultMaxGrants.
	MaxGrants int

	// ClientMetadataRoots are the certificate authorities trusted when an
	// https client ID metadata document is fetched. Nil means the
	// system's.
	ClientMetadataRoots *x509.CertPool
	// ClientMetadataTimeout bounds one metadata document fetch, body
	// included. Zero means DefaultClientMetadataTimeout.
	ClientMetadataTimeout time.Duration

	// Logger receives one Info line per approved or denied sign-in and
	// per token issued (user, client; never a code or token), and
	// warnings. Nil means slog.Default().
	Logger *slog.Logger
}

// Server is a small OAuth 2.1 authorization server for development,
// around an [Issuer]: see the package documentation. It is an
// http.Handler for the paths [Server.Paths] lists, and safe for
// concurrent use.
type Server struct {
	is         *Issuer
	opts       ServerOptions
	supported  []string // the scope names
	host       string   // the Host every request must name: the issuer's
	origin     string   // scheme://host of the issuer
	paths      map[string]http.HandlerFunc
	pathList   []string
	consentURL string // the login form's action, a path
	metadata   []byte

	clients *registry
	docs    *metadataFetcher
	pending *memory[signIn]
	codes   *memory[*codeGrant]
	grants  *memory[*refreshGrant]
	// approved remembers which user approved which client (keyed by
	// digest(user, client id)): only then may an authorization error go
	// back to the client's redirect URI (RFC 9700 §4.11.2).
	approved *memory[struct{}]
	csrfKey  []byte
	crossOff *http.CrossOriginProtection
	log      *slog.Logger
}

// NewServer returns the authorization server of is. It fails for invalid
// options.
func (is *Issuer) NewServer(opts ServerOptions) (*Server, error) {
	if len(opts.Scopes) == 0 {
		return nil, errors.New("devissuer: ServerOptions.Scopes is empty")
	}
	if opts.Exchange != nil {
		if err := opts.Exchange.check(); err != nil {
			return nil, err
		}
	}
	s := &Server{is: is, log: opts.Logger}
	var err error
	if s.supported, err = completeOptions(&opts, is.audience); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.opts = opts

	u, _ := url.Parse(is.issuer) // checked by newIssuer
	s.host, s.origin = u.Host, u.Scheme+"://"+u.Host
	base := strings.TrimSuffix(u.EscapedPath(), "/")
	s.consentURL = base + "/consent"
	s.paths = map[string]http.HandlerFunc{
		base + "/authorize": s.authorize,
		s.consentURL:        s.consent,
		base + "/token":     s.token,
		base + "/register":  s.register,
		is.JWKSPath():       s.jwks,
		// RFC 8414 §3.1 for an issuer with a path, and the two OpenID
		// discovery locations MCP clients try after it.
		"/.well-known/oauth-authorization-server" + base: s.serveMetadata,
		"/.well-known/openid-configuration" + base:       s.serveMetadata,
		base + "/.well-known/openid-configuration":       s.serveMetadata,
	}
	for p := range s.paths {
		s.pathList = append(s.pathList, p)
	}
	if s.metadata, err = s.metadataDocument(); err != nil {
		return nil, err
	}
	s.clients = newRegistry(opts.MaxClients)
	s.docs = newMetadataFetcher(opts.ClientMetadataRoots, opts.ClientMetadataTimeout, s.now)
	s.pending = newMemory[signIn](opts.MaxPending, s.now)
	s.codes = newMemory[*codeGrant](opts.MaxPending, s.now)
	s.grants = newMemory[*refreshGrant](opts.MaxGrants, s.now)
	s.approved = newMemory[struct{}](opts.MaxGrants, s.now)
	s.csrfKey = make([]byte, 32)
	_, _ = rand.Read(s.csrfKey)
	s.crossOff = http.NewCrossOriginProtection()
	return s, nil
}

// completeOptions checks opts and fills in the defaults of what is unset;
// it returns the supported scope names.
func completeOptions(opts *ServerOptions, audience string) ([]string, error) {
	var supported []string
	for _, sc := range opts.Scopes {
		if !principal.ValidScope(sc.Name) || contains(supported, sc.Name) {
			return nil, fmt.Errorf("devissuer: scope %q is not a distinct RFC 6749 scope-token", sc.Name)
		}
		supported = append(supported, sc.Name)
	}
	if len(opts.DefaultScopes) == 0 {
		opts.DefaultScopes = []string{supported[0]}
	}
	for _, d := range opts.DefaultScopes {
		if !contains(supported, d) {
			return nil, fmt.Errorf("devissuer: default scope %q is not among Scopes", d)
		}
	}
	if len(opts.Users) == 0 {
		opts.Users = DefaultUsers()
	}
	for _, u := range opts.Users {
		if checkSubject(u) != nil {
			return nil, fmt.Errorf("devissuer: user %q is not a valid subject", u)
		}
	}
	if opts.ResourceName == "" {
		opts.ResourceName = audience
	}
	return supported, completeLimits(opts)
}

// completeLimits checks the durations and bounds of opts and fills in the
// defaults of those unset.
func completeLimits(opts *ServerOptions) error {
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
		max time.Duration
	}{
		{&opts.CodeTTL, DefaultCodeTTL, maxCodeTTL}, {&opts.AccessTokenTTL, DefaultAccessTokenTTL, MaxTTL},
		{&opts.RefreshTokenTTL, DefaultRefreshTokenTTL, 30 * 24 * time.Hour},
		{&opts.ClientMetadataTimeout, DefaultClientMetadataTimeout, time.Minute},
	} {
		if *d.p == 0 {
			*d.p = d.def
		}
		if *d.p < 0 || *d.p > d.max {
			return fmt.Errorf("devissuer: a ServerOptions duration is out of range (0, %v]", d.max)
		}
	}
	for _, n := range []struct {
		p   *int
		def int
	}{{&opts.MaxClients, DefaultMaxClients}, {&opts.MaxPending, DefaultMaxPending}, {&opts.MaxGrants, DefaultMaxGrants}} {
		if *n.p == 0 {
			*n.p = n.def
		}
		if *n.p < 0 {
			return errors.New("devissuer: a ServerOptions bound is negative")
		}
	}
	return nil
}

func (s *Server) now() time.Time { return s.is.opts.Now() }

// Paths returns the paths the server answers, to mount it on a router:
// the authorization, login form, token, registration and JWK Set
// endpoints under the issuer's path, and the authorization server
// metadata at the RFC 8414 and OpenID discovery locations.
func (s *Server) Paths() []string { return append([]string(nil), s.pathList...) }

// ServeHTTP serves the paths of Paths (404 for any other). A request whose
// Host is not the issuer's is refused with 421: a page elsewhere that
// rebinds its own name to the loopback address gets nothing from the
// server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := s.paths[r.URL.EscapedPath()]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if !strings.EqualFold(r.Host, s.host) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "misdirected request: use "+s.origin, http.StatusMisdirectedRequest)
		return
	}
	h(w, r)
}

var _ http.Handler = (*Server)(nil)

// metadataDocument is the RFC 8414 authorization server metadata.
func (s *Server) metadataDocument() ([]byte, error) {
	iss := s.is.issuer
	base := strings.TrimSuffix(iss, "/")
	b, err := json.Marshal(struct {
		Issuer           string   `json:"issuer"`
		Authorization    string   `json:"authorization_endpoint"`
		Token            string   `json:"token_endpoint"`
		Registration     string   `json:"registration_endpoint"`
		JWKSURI          string   `json:"jwks_uri"`
		Scopes           []string `json:"scopes_supported"`
		ResponseTypes    []string `json:"response_types_supported"`
		ResponseModes    []string `json:"response_modes_supported"`
		GrantTypes       []string `json:"grant_types_supported"`
		AuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
		PKCE             []string `json:"code_challenge_methods_supported"`
		ClientIDMetadata bool     `json:"client_id_metadata_document_supported"`
		IssParameter     bool     `json:"authorization_response_iss_parameter_supported"`
		Note             string   `json:"mcpkit_development_issuer"`
	}{
		Issuer: iss, Authorization: base + "/authorize", Token: base + "/token", Registration: base + "/register",
		JWKSURI: s.is.jwksURL, Scopes: s.supported, ResponseTypes: []string{"code"}, ResponseModes: []string{"query"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, AuthMethods: []string{"none"},
		PKCE: []string{"S256"}, ClientIDMetadata: true, IssParameter: true,
		Note: "development only: anyone who can reach this server can sign in as any user",
	})
	if err != nil {
		return nil, fmt.Errorf("devissuer: metadata: %w", err)
	}
	return b, nil
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r, "GET, HEAD")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	staticJSON(s.metadata, "application/json").ServeHTTP(w, r)
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r, "GET, HEAD")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.is.JWKSHandler().ServeHTTP(w, r)
}

// allowCORS lets browser-based clients (the MCP Inspector's page, say)
// read the metadata, the JWK Set and the token and registration
// responses: they carry no cookies and no secrets, so any origin may.
// The login page and its form get no CORS headers.
func allowCORS(w http.ResponseWriter, r *http.Request, methods string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, DPoP, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "86400")
	}
}

// writeOAuthError writes an RFC 6749 §5.2 error response: a JSON object
// with error and a fixed error_description, never anything the client
// sent.
func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{code, description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

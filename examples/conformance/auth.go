package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// The auth mode (-auth): the fixture verifies tokens instead of serving
// every request as one principal, for the suite's authorization scenarios
// (token audience, DPoP resource-server validation, scope challenges,
// session isolation, the auth flow) and for the Go tests that run the
// same checks until the suite publishes them (auth_test.go).
//
//   - JWT access tokens verified against an issuer's JWK Set: an outside
//     issuer (-auth-issuer, -auth-jwks-url), or the built-in one
//     (authn/authntest, its JWK Set served over loopback HTTP).
//   - Opaque tokens verified by RFC 7662 introspection: an outside
//     endpoint (-auth-introspection, -auth-client-id,
//     -auth-client-secret), or the built-in one at /introspect, for the
//     opaque tokens the fixture mints. A token shaped as a JWT (three
//     dot-separated parts) goes to the JWT verifier, any other to
//     introspection.
//   - DPoP (-dpop off|allowed|required, -dpop-nonce): RFC 9449 proofs,
//     server nonces.
//   - Scopes per operation: the private template (test://private/{id}:
//     private:read), the kit's scoped tool (test_scoped_tool:
//     tools:call), and in intercept mode the go-sdk server's prompts
//     (prompts/get: prompts:read, by intercept's MethodScopes) and its
//     tools (test_tool_with_progress: tools:progress, by ToolScopes); a
//     caller without them gets 403 insufficient_scope naming them.
//   - The protected resource metadata (RFC 9728) at its well-known path.

// Scopes of the auth mode.
const (
	scopeBase     = "mcp"            // the challenge's hint: what a client asks for first
	scopePrivate  = "private:read"   // the private template
	scopeTool     = "tools:call"     // test_scoped_tool
	scopePrompts  = "prompts:read"   // the go-sdk server's prompts (intercept mode)
	scopeProgress = "tools:progress" // the go-sdk server's test_tool_with_progress (intercept mode)
)

// allScopes are the scopes of the fixture's tokens that may do everything.
var allScopes = []string{scopeBase, scopePrivate, scopeTool, scopePrompts, scopeProgress}

// authConfig is what the -auth flags set.
type authConfig struct {
	resource      string // the canonical URI of /mcp (the tokens' audience)
	issuer, jwks  string // an outside JWT issuer; both empty: the built-in one
	introspection string // an outside introspection endpoint; empty: the built-in one
	clientID      string // this server's credentials at the introspection endpoint
	clientSecret  string
	dpop          string // off, allowed or required
	nonce         bool   // DPoP proofs carry server nonces
}

// authFixture is the auth mode's Authenticator and what it serves.
type authFixture struct {
	auth     *authn.Authenticator
	metaPath string
	metadata http.Handler
	issuer   *authntest.Issuer // the built-in JWT issuer, nil with an outside one
	opaque   *opaqueTokens     // the built-in introspection endpoint, nil with an outside one
	closers  []func()
}

func (a *authFixture) close() {
	for _, c := range a.closers {
		c()
	}
}

// routes mounts what the auth mode serves besides /mcp.
func (a *authFixture) routes(mux *http.ServeMux) {
	mux.Handle(a.metaPath, a.metadata)
	if a.opaque != nil {
		mux.Handle("/introspect", a.opaque)
	}
}

func newAuthFixture(ctx context.Context, cfg authConfig) (*authFixture, error) {
	if cfg.resource == "" {
		return nil, errors.New("-auth needs -resource")
	}
	if (cfg.issuer == "") != (cfg.jwks == "") {
		return nil, errors.New("set both -auth-issuer and -auth-jwks-url, or neither for the built-in issuer")
	}
	var mode dpop.Mode
	switch cfg.dpop {
	case "", "allowed":
		mode = dpop.Allowed
	case "off":
		mode = dpop.Off
	case "required":
		mode = dpop.Required
	default:
		return nil, fmt.Errorf("-dpop %q: off, allowed or required", cfg.dpop)
	}
	a := &authFixture{}
	ok := false
	defer func() {
		if !ok {
			a.close()
		}
	}()
	jwtOpts := authn.JWTOptions{Issuer: cfg.issuer, Resource: cfg.resource, JWKSURL: cfg.jwks}
	if cfg.issuer == "" {
		is, err := authntest.New(authntest.Options{Resource: cfg.resource, ClientID: "conformance-client", TTL: time.Hour})
		if err != nil {
			return nil, err
		}
		a.issuer = is
		a.closers = append(a.closers, is.Close)
		jwtOpts = is.JWTOptions()
	}
	jwt, err := authn.NewJWTVerifier(ctx, jwtOpts)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = jwt.Close() })

	introOpts := authn.IntrospectionOptions{Endpoint: cfg.introspection, ClientID: cfg.clientID, ClientSecret: cfg.clientSecret, Resource: cfg.resource}
	if cfg.introspection == "" {
		// The built-in endpoint, reached in process: its URL is this
		// server's, which may not be known yet (port 0).
		a.opaque = newOpaqueTokens(cfg.resource)
		introOpts.Endpoint = "http://127.0.0.1/introspect"
		introOpts.ClientID, introOpts.ClientSecret = opaqueClientID, a.opaque.secret
		introOpts.HTTPClient = &http.Client{Transport: inProcess{a.opaque}}
	}
	intro, err := authn.NewIntrospectionVerifier(introOpts)
	if err != nil {
		return nil, err
	}
	verifier := authn.VerifierFunc(func(ctx context.Context, token string) (principal.Principal, time.Time, error) {
		if strings.Count(token, ".") == 2 {
			return jwt.Verify(ctx, token)
		}
		return intro.Verify(ctx, token)
	})
	a.auth, err = authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}), authn.Options{
		Resource: cfg.resource, Scopes: []string{scopeBase},
		DPoP: dpop.Options{Mode: mode, RequireNonce: cfg.nonce},
		// The suite's scenarios send dozens of refused credentials from
		// one address; the default refusal limit would turn the later
		// ones into 429 without a challenge.
		Throttle: noThrottle{},
	})
	if err != nil {
		return nil, err
	}
	authServers := []string{jwtOpts.Issuer}
	a.metaPath, a.metadata, err = a.auth.Metadata(authn.Metadata{
		Resource: cfg.resource, AuthorizationServers: authServers,
		ScopesSupported: allScopes, ResourceName: "mcpkit conformance fixture",
	})
	if err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// noThrottle admits every refusal: the fixture is probed by a test suite
// from one address.
type noThrottle struct{}

func (noThrottle) Admit(*http.Request) (bool, time.Duration) { return true, 0 }
func (noThrottle) Refused(*http.Request)                     {}

// privateTemplate is the auth mode's protected template: a record per id,
// readable with private:read by anyone signed in (its text names the
// reader).
func privateTemplate() inventory.Template {
	return inventory.Template{
		Name: "private-data", Title: "Private data", Description: "Data that needs the private:read scope",
		URITemplate: "test://private/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{scopePrivate},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain",
				Text: "Private data " + req.Params["id"] + " for " + req.Principal.Subject}}, nil
		},
	}
}

// scopedTool is the auth mode's tool that needs tools:call.
func scopedTool() tools.Tool {
	return tools.Tool{Name: "test_scoped_tool", Description: "A tool that needs the tools:call scope",
		Access: inventory.Protected, RequiredScopes: []string{scopeTool}, ReadOnly: true,
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			return tools.TextResult("scoped tool called by " + req.Principal.Subject), nil
		}}
}

// opaqueClientID is this server's client id at the built-in introspection
// endpoint.
const opaqueClientID = "conformance-rs"

// opaqueTokens is the built-in RFC 7662 introspection endpoint, for the
// opaque tokens the fixture mints (Mint). It answers only this server
// (HTTP Basic with its generated secret).
type opaqueTokens struct {
	resource, secret string
	mu               sync.Mutex
	tokens           map[string]map[string]any // token → introspection response
}

func newOpaqueTokens(resource string) *opaqueTokens {
	return &opaqueTokens{resource: resource, secret: randomString(), tokens: map[string]map[string]any{}}
}

// opaqueOptions shape an opaque token.
type opaqueOptions struct {
	scopes   []string
	audience any    // a string or []string; nil: the resource
	jkt      string // the DPoP key's thumbprint it is bound to
	ttl      time.Duration
}

// Mint returns a new opaque token of subject.
func (o *opaqueTokens) Mint(subject string, opts opaqueOptions) string {
	if opts.audience == nil {
		opts.audience = o.resource
	}
	if opts.ttl == 0 {
		opts.ttl = time.Hour
	}
	now := time.Now()
	resp := map[string]any{"active": true, "sub": subject, "client_id": "conformance-client",
		"scope": strings.Join(opts.scopes, " "), "aud": opts.audience,
		"iat": now.Unix(), "exp": now.Add(opts.ttl).Unix(), "token_type": "Bearer"}
	if opts.jkt != "" {
		resp["cnf"] = map[string]string{"jkt": opts.jkt}
		resp["token_type"] = "DPoP"
	}
	tok := randomString()
	o.mu.Lock()
	o.tokens[tok] = resp
	o.mu.Unlock()
	return tok
}

func (o *opaqueTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id != opaqueClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(o.secret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	resp, found := o.tokens[r.PostForm.Get("token")]
	o.mu.Unlock()
	if !found {
		resp = map[string]any{"active": false}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(resp)
}

// inProcess is an http.RoundTripper that serves every request with h.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	return w.Result(), nil
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

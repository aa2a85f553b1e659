package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/upstream"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Scopes: the MCP endpoint's, and the photos API's.
const (
	scopeMCP    = "photos"
	scopePhotos = "photos:read"
)

type config struct {
	addr, mode, dataDir string
}

// app is the running program: one listener serving the MCP server, the
// development authorization server, the photos API and its own
// authorization server.
type app struct {
	base, addr string
	ln         net.Listener
	srv        *http.Server
	hub        *notify.Hub
	dev        *devissuer.Issuer
	grants     *upstream.Grants // -mode elicit
	log        *slog.Logger
}

func start(ctx context.Context, cfg config, logOut io.Writer) (*app, error) {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, err
	}
	a := &app{ln: ln, addr: ln.Addr().String(), log: slog.New(slog.NewTextHandler(logOut, nil))}
	a.base = "http://" + a.addr
	if err := a.build(ctx, cfg); err != nil {
		ln.Close()
		return nil, err
	}
	return a, nil
}

func (a *app) build(ctx context.Context, cfg config) error {
	base := a.base
	mux := http.NewServeMux()

	// The MCP server's authorization server (development: anyone signs in
	// as anyone), with the token-exchange grant for -mode exchange.
	dev, err := devissuer.Open(cfg.dataDir, base+"/dev", base+"/mcp", devissuer.Options{})
	if err != nil {
		return err
	}
	a.dev = dev
	exchangeSecret := randomSecret()
	devOpts := devissuer.ServerOptions{Scopes: []devissuer.Scope{{Name: scopeMCP, Description: "list and read your photos through this MCP server"}},
		ResourceName: "mcpkit upstream example", Logger: a.log}
	if cfg.mode == "exchange" {
		devOpts.Exchange = &devissuer.ExchangeOptions{ClientID: "upstream-example", ClientSecret: exchangeSecret,
			Audiences: map[string][]string{base + "/photos/api": {scopePhotos}}}
	}
	devAS, err := dev.NewServer(devOpts)
	if err != nil {
		return err
	}
	for _, p := range devAS.Paths() {
		mux.Handle(p, devAS)
	}

	// The photos service: its own authorization server and consent page,
	// and its API, which trusts its own tokens (and, with -mode exchange,
	// those the development AS exchanged for its audience).
	photosIss, err := devissuer.New(base+"/photos/oauth", base+"/photos/api", devissuer.Options{})
	if err != nil {
		return err
	}
	photosAS, err := photosIss.NewServer(devissuer.ServerOptions{Scopes: []devissuer.Scope{{Name: scopePhotos, Description: "see your photos"}},
		ResourceName: "the photos service", Logger: a.log})
	if err != nil {
		return err
	}
	for _, p := range photosAS.Paths() {
		mux.Handle(p, photosAS)
	}
	apiIssuer, apiJWKS, apiClient := photosIss.Issuer(), photosIss.JWKSURL(), photosIss.Client()
	if cfg.mode == "exchange" {
		apiIssuer, apiJWKS, apiClient = dev.Issuer(), dev.JWKSURL(), dev.Client()
	}
	apiVerifier, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{Issuer: apiIssuer, Resource: base + "/photos/api", JWKSURL: apiJWKS, HTTPClient: apiClient})
	if err != nil {
		return err
	}
	apiAuth, err := authn.NewAuthenticator(authn.NewCache(apiVerifier, authn.CacheOptions{}), authn.Options{Resource: base + "/photos/api", Scopes: []string{scopePhotos}})
	if err != nil {
		return err
	}
	mux.Handle("/photos/api/", photosAPI(apiAuth))

	// How the MCP server reaches the photos API as its caller.
	var as client
	var extraTools []tools.Tool
	switch cfg.mode {
	case "exchange":
		x, err := upstream.NewExchanger(upstream.ExchangeOptions{TokenURL: base + "/dev/token", ClientID: "upstream-example", ClientSecret: exchangeSecret,
			Audience: base + "/photos/api", Scopes: []string{scopePhotos}, Logger: a.log})
		if err != nil {
			return err
		}
		as = x.Client
	default:
		if as, extraTools, err = a.elicitGrants(mux, photosAS); err != nil {
			return err
		}
	}

	// The MCP endpoint.
	inv, err := inventory.New(nil, []inventory.Template{photosTemplate(base+"/photos/api", as)}, inventory.Options{})
	if err != nil {
		return err
	}
	verifier, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{Issuer: dev.Issuer(), Resource: base + "/mcp", JWKSURL: dev.JWKSURL(), HTTPClient: dev.Client()})
	if err != nil {
		return err
	}
	auth, err := authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}), authn.Options{Resource: base + "/mcp", Scopes: []string{scopeMCP}})
	if err != nil {
		return err
	}
	mdPath, md, err := auth.Metadata(authn.Metadata{AuthorizationServers: []string{dev.Issuer()}})
	if err != nil {
		return err
	}
	a.hub = notify.New(notify.Options{})
	sess, err := sessions.New(a.hub, sessions.Options{})
	if err != nil {
		return err
	}
	parts := []mcphttp.Part{sess}
	if len(extraTools) > 0 {
		tp, err := tools.New(extraTools...)
		if err != nil {
			return err
		}
		parts = append(parts, tp)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "upstream-example", Version: "1.0.0"},
		Authenticator: auth, Logger: a.log}, parts...)
	if err != nil {
		return err
	}
	mux.Handle(mdPath, md)
	// CaptureSubjectToken hands the caller's own token to the Exchanger
	// (-mode exchange) for this request only; nothing else reads it.
	mux.Handle("/mcp", upstream.CaptureSubjectToken(jsonrpc.Decoder(jsonrpc.Limits{})(ep)))
	a.srv = mcphttp.NewServer(a.addr, mux)
	return nil
}

// elicitGrants sets up -mode elicit: this server registers as a client of
// the photos authorization server, and serves the connect page and the
// callback of the grants.
func (a *app) elicitGrants(mux *http.ServeMux, photosAS *devissuer.Server) (client, []tools.Tool, error) {
	base := a.base
	callback := base + "/upstream/callback/photos"
	clientID, err := register(photosAS, base, callback)
	if err != nil {
		return nil, nil, err
	}
	secret := make([]byte, sealedcursor.KeySize)
	_, _ = rand.Read(secret)
	keys, err := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: secret})
	if err != nil {
		return nil, nil, err
	}
	store, err := upstream.NewMemoryStore(0, nil)
	if err != nil {
		return nil, nil, err
	}
	g, err := upstream.NewGrants(upstream.GrantOptions{
		Name: "photos", AuthorizeURL: base + "/photos/oauth/authorize", TokenURL: base + "/photos/oauth/token",
		ClientID: clientID, Scopes: []string{scopePhotos}, Resource: base + "/photos/api",
		ConnectURL: base + "/upstream/connect/photos", CallbackURL: callback,
		Keys: keys, Store: store, Logger: a.log,
		OnComplete: func(ctx context.Context, user, id string) { a.hub.ElicitationComplete(ctx, user, id) },
	})
	if err != nil {
		return nil, nil, err
	}
	a.grants = g
	mux.Handle("/upstream/connect/photos", g.ConnectHandler())
	mux.Handle("/upstream/callback/photos", g.CallbackHandler())
	disconnect := tools.Tool{Name: "photos_disconnect", Description: "Forget your connection to the photos service",
		RequiredScopes: []string{scopeMCP},
		Handler: func(ctx context.Context, req *tools.Request) (tools.Result, error) {
			p := req.Principal
			if p == nil {
				return tools.Result{}, principal.ErrUnauthenticated
			}
			if err := g.Disconnect(ctx, *p); err != nil {
				return tools.Result{}, err
			}
			return tools.TextResult("Disconnected from the photos service."), nil
		}}
	return g.Client, []tools.Tool{disconnect}, nil
}

// register registers this server at the photos authorization server
// (RFC 7591, a public client), in process.
func register(as *devissuer.Server, base, callback string) (string, error) {
	body := `{"client_name":"mcpkit upstream example","redirect_uris":["` + callback + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`
	req := httptest.NewRequest(http.MethodPost, base+"/photos/oauth/register", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	as.ServeHTTP(w, req)
	var out struct {
		ClientID string `json:"client_id"`
	}
	if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &out) != nil || out.ClientID == "" {
		return "", fmt.Errorf("registering at the photos authorization server: %d %s", w.Code, w.Body.String())
	}
	return out.ClientID, nil
}

func (a *app) serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.hub.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func randomSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

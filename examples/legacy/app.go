package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
)

// config is what the flags set.
type config struct {
	// resource is the canonical URI of the MCP endpoint (the tokens' aud).
	resource string
	// issuer and jwksURL name the authorization server; both empty starts
	// a development issuer.
	issuer, jwksURL string
	// stateful serves the go-sdk handler with sessions (Mcp-Session-Id).
	// The go-sdk speaks 2026-07-28 only from a stateless handler; a
	// stateful one offers the 2025 versions, to which modern clients fall
	// back with initialize.
	stateful bool
	logger   *slog.Logger
}

// app is the wrapped server and what it needs at run time.
type app struct {
	handler      http.Handler // the /mcp handler: Intercept(inventory, auth(go-sdk))
	metadata     http.Handler // RFC 9728 metadata
	metadataPath string
	texts        *texts
	issuer       string

	dev      *devissuer.Issuer
	verifier *authn.JWTVerifier
}

func newApp(ctx context.Context, cfg config) (*app, error) {
	if (cfg.issuer == "") != (cfg.jwksURL == "") {
		return nil, errors.New("set both -issuer and -jwks-url, or neither for the development issuer")
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	metadataPath, err := authn.WellKnownPath(cfg.resource)
	if err != nil {
		return nil, fmt.Errorf("-resource: %w", err)
	}
	a := &app{metadataPath: metadataPath, texts: newTexts(), issuer: cfg.issuer}
	ok := false
	defer func() {
		if !ok {
			a.close()
		}
	}()
	jwksURL := cfg.jwksURL
	var jwksClient *http.Client // nil: http.DefaultClient
	if cfg.issuer == "" {
		// The development issuer lives under the resource's origin, at
		// /dev, with a key kept in memory; the verifier fetches its JWK Set
		// in-process.
		u, _ := url.Parse(cfg.resource) // checked by WellKnownPath
		if a.dev, err = devissuer.New(u.Scheme+"://"+u.Host+"/dev", cfg.resource, devissuer.Options{ClientID: "legacy-example"}); err != nil {
			return nil, err
		}
		a.issuer, jwksURL, jwksClient = a.dev.Issuer(), a.dev.JWKSURL(), a.dev.Client()
	}
	if a.verifier, err = authn.NewJWTVerifier(ctx, authn.JWTOptions{
		Issuer: a.issuer, Resource: cfg.resource, JWKSURL: jwksURL, HTTPClient: jwksClient, Logger: cfg.logger,
	}); err != nil {
		return nil, err
	}
	auth, err := authn.NewAuthenticator(authn.NewCache(a.verifier, authn.CacheOptions{}), authn.Options{
		Resource: cfg.resource, Scopes: []string{Scope}, Logger: cfg.logger,
	})
	if err != nil {
		return nil, err
	}
	if a.metadata, err = authn.NewMetadataHandler(authn.Metadata{
		Resource: cfg.resource, AuthorizationServers: []string{a.issuer},
		ScopesSupported: []string{Scope}, ResourceName: "mcpkit legacy example",
	}); err != nil {
		return nil, err
	}
	if err := seed(a.texts); err != nil {
		return nil, err
	}
	inv, err := inventory.New(nil, []inventory.Template{a.texts.template()}, inventory.Options{
		PageSize: pageSize, Logger: cfg.logger,
	})
	if err != nil {
		return nil, err
	}

	// The existing server, unchanged: a go-sdk Streamable HTTP handler.
	// Intercept authenticates every request with the endpoint's
	// Authenticator before the go-sdk sees it, and binds each go-sdk
	// session to the user who began it: the handler needs no auth
	// middleware of its own. withTokenInfo shows its tools the caller in
	// req.Extra.TokenInfo, where go-sdk handlers look.
	tools := newToolServer()
	legacy := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools },
		&mcp.StreamableHTTPOptions{Stateless: !cfg.stateful})
	ep, err := mcphttp.New(inv, mcphttp.Options{
		ServerInfo:    mcphttp.Implementation{Name: "mcpkit-legacy-example", Version: "1.0.0"},
		Authenticator: auth,
		Logger:        cfg.logger,
	})
	if err != nil {
		return nil, err
	}
	if a.handler, err = intercept.New(ep, withTokenInfo(legacy), intercept.Options{Logger: cfg.logger}); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// routes mounts the app; in development mode also the development
// issuer's JWK Set and RFC 8414 metadata, which the resource metadata names.
func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.handler)
	mux.Handle(a.metadataPath, a.metadata)
	mux.Handle(authn.WellKnownPrefix, a.metadata)
	if a.dev != nil {
		mux.Handle(a.dev.JWKSPath(), a.dev.JWKSHandler())
		mux.Handle(a.dev.MetadataPath(), a.dev.MetadataHandler())
	}
	return mux
}

// devTokenTTL is the lifetime of development tokens.
const devTokenTTL = 8 * time.Hour

// devToken mints a development token for subject.
func (a *app) devToken(subject string) (string, error) {
	if a.dev == nil {
		return "", errors.New("no development issuer")
	}
	return a.dev.Sign(subject, []string{Scope}, devTokenTTL)
}

func (a *app) close() {
	if a.verifier != nil {
		_ = a.verifier.Close()
	}
}

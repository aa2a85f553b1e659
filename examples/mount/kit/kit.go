// Package kit builds the mcpkit pieces that the mount examples share, so
// that each example's router code is all that differs between them: an
// in-memory per-user notes inventory, a JWT verifier and authenticator, the
// MCP endpoint, the RFC 9728 metadata handler and a health handler.
//
// With no issuer configured it starts a development token issuer
// (examples/devissuer, with a key kept in memory) in the process and mints
// tokens for alice and bob; that mode is for trying the examples by hand
// only.
package kit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// Scope is the scope a token needs to list and read notes.
const Scope = "notes:read"

// NotesTemplate is the URI template of the notes.
const NotesTemplate = "notes://notes/{id}"

// DefaultPageSize is the resources/list page size when Config.PageSize is
// zero: small, so that paging shows with a handful of notes.
const DefaultPageSize = 5

// Config configures New. Resource is required.
type Config struct {
	// Resource is the canonical URI of the MCP endpoint, such as
	// "https://mcp.example.com/mcp" (http only for loopback hosts). Tokens
	// must carry it as their audience.
	Resource string

	// Issuer and JWKSURL name the authorization server and its JWK Set.
	// Both empty starts a development issuer in the process (see DevToken);
	// one without the other is an error.
	Issuer, JWKSURL string

	// PageSize is the resources/list page size. Zero means DefaultPageSize.
	PageSize int

	// Logger receives the pieces' operator records. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Kit holds the pieces a router mounts.
type Kit struct {
	// MCP is the MCP endpoint (an *mcphttp.Endpoint). Mount it at the path
	// of Resource for every method: it answers GET and DELETE with 405
	// and Allow: POST itself.
	MCP http.Handler
	// Metadata serves the RFC 9728 protected resource metadata (GET and
	// HEAD; 405 otherwise). Mount it at MetadataPath and at
	// RootMetadataPath.
	Metadata http.Handler
	// MetadataPath is authn.WellKnownPath(Resource), such as
	// "/.well-known/oauth-protected-resource/mcp".
	MetadataPath string
	// RootMetadataPath is the root well-known path,
	// "/.well-known/oauth-protected-resource", which some clients try first.
	RootMetadataPath string
	// Health answers GET and HEAD with 200 and {"status":"ok"}.
	Health http.Handler

	// The pieces MCP is assembled from, for a router that composes them
	// itself (see routers.ChiComposed): Auth is the bearer verifier (its
	// Optional middleware puts the Principal in the context), List serves
	// resources/list alone (an *mcphttp.ListHandler). Behind Auth.Optional
	// and jsonrpc.Decoder, MCP uses the principal and the decode it finds
	// instead of authenticating and decoding again.
	Auth *authn.Authenticator
	List http.Handler

	// Resource is the canonical URI of the MCP endpoint.
	Resource string
	// Issuer is the issuer identifier tokens must carry.
	Issuer string
	// Notes holds every user's notes.
	Notes *Notes

	dev      *devissuer.Issuer
	verifier *authn.JWTVerifier
}

// New builds the pieces for cfg and seeds the notes (see SeedNotes).
func New(ctx context.Context, cfg Config) (*Kit, error) {
	if cfg.Resource == "" {
		return nil, errors.New("kit: Config.Resource is required")
	}
	if (cfg.Issuer == "") != (cfg.JWKSURL == "") {
		return nil, errors.New("kit: set both the issuer and the JWKS URL, or neither for the development issuer")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	metadataPath, err := authn.WellKnownPath(cfg.Resource)
	if err != nil {
		return nil, fmt.Errorf("kit: resource: %w", err)
	}
	k := &Kit{
		MetadataPath:     metadataPath,
		RootMetadataPath: authn.WellKnownPrefix,
		Health:           health{},
		Resource:         cfg.Resource,
		Issuer:           cfg.Issuer,
		Notes:            NewNotes(),
	}
	ok := false
	defer func() {
		if !ok {
			k.Close()
		}
	}()

	jwksURL := cfg.JWKSURL
	var jwksClient *http.Client // nil: http.DefaultClient
	if cfg.Issuer == "" {
		// The development issuer lives under the resource's origin, at
		// /dev; the verifier fetches its JWK Set in-process.
		u, _ := url.Parse(cfg.Resource) // checked by WellKnownPath
		k.dev, err = devissuer.New(u.Scheme+"://"+u.Host+"/dev", cfg.Resource, devissuer.Options{ClientID: "mount-example"})
		if err != nil {
			return nil, fmt.Errorf("kit: development issuer: %w", err)
		}
		k.Issuer, jwksURL, jwksClient = k.dev.Issuer(), k.dev.JWKSURL(), k.dev.Client()
	}
	k.verifier, err = authn.NewJWTVerifier(ctx, authn.JWTOptions{
		Issuer: k.Issuer, Resource: cfg.Resource, JWKSURL: jwksURL, HTTPClient: jwksClient, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	auth, err := authn.NewAuthenticator(authn.NewCache(k.verifier, authn.CacheOptions{}), authn.Options{
		Resource: cfg.Resource, Scopes: []string{Scope}, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	k.Metadata, err = authn.NewMetadataHandler(authn.Metadata{
		Resource:             cfg.Resource,
		AuthorizationServers: []string{k.Issuer},
		ScopesSupported:      []string{Scope},
		ResourceName:         "mcpkit mount example",
	})
	if err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}

	SeedNotes(k.Notes)
	pageSize := cfg.PageSize
	if pageSize == 0 {
		pageSize = DefaultPageSize
	}
	inv, err := inventory.New(nil, []inventory.Template{k.Notes.Template()}, inventory.Options{
		PageSize: pageSize, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	opts := mcphttp.Options{
		ServerInfo:    mcphttp.Implementation{Name: "mcpkit-mount-example", Version: "1.0.0"},
		Instructions:  "Each signed-in user sees their own notes.",
		Authenticator: auth,
		Logger:        logger,
	}
	if k.MCP, err = mcphttp.New(inv, opts); err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	if k.List, err = mcphttp.NewListHandler(inv, opts); err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	k.Auth = auth
	ok = true
	return k, nil
}

// Dev reports whether the kit runs its own development issuer.
func (k *Kit) Dev() bool { return k.dev != nil }

// DevTokenTTL is the lifetime of the tokens DevToken mints.
const DevTokenTTL = 8 * time.Hour

// DevToken mints a token of the development issuer for subject, with
// the notes scope and the resource as audience, valid for DevTokenTTL. It
// fails when an external issuer is configured.
func (k *Kit) DevToken(subject string) (string, error) {
	if k.dev == nil {
		return "", errors.New("kit: no development issuer: tokens come from the configured issuer")
	}
	return k.dev.Sign(subject, []string{Scope}, DevTokenTTL)
}

// WithDevIssuer returns h, and in development mode h with the development
// issuer's JWK Set and RFC 8414 metadata (which the resource metadata
// names as the authorization server) served in front of it.
func (k *Kit) WithDevIssuer(h http.Handler) http.Handler {
	if k.dev == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle(k.dev.JWKSPath(), k.dev.JWKSHandler())
	mux.Handle(k.dev.MetadataPath(), k.dev.MetadataHandler())
	mux.Handle("/", h)
	return mux
}

// Close stops the verifier's key refresh.
func (k *Kit) Close() {
	if k.verifier != nil {
		_ = k.verifier.Close()
	}
}

// health answers liveness probes.
type health struct{}

func (health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

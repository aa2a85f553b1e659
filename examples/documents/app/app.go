package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Version is the server version announced to clients.
const Version = "1.0.0"

// App is a documents server: its database, authentication, inventory,
// router and HTTP server, listening from New on.
type App struct {
	cfg      Config // with defaults
	log      *slog.Logger
	ln       net.Listener
	srv      *http.Server
	handler  http.Handler
	db       store.DB
	verifier io.Closer // the JWT verifier, when there is one
	issuers  []string  // the trusted issuers, when there are several
	dev      *devissuer.Issuer
	resource string
	banner   string // the development walk-through, printed by Run

	// The users' skills (the MCP Skills extension), in the same database.
	skills store.SkillStore

	// searches bounds the full-text searches of the MCP callbacks.
	searches *searchGate
	// bodies is the memory budget of request bodies, the MCP endpoint's
	// and the REST API's together.
	bodies *jsonrpc.BodyBudget

	// Change notifications: the hub, and with a PostgreSQL database the
	// broker that carries events between instances, over its own pool.
	hub        *notify.Hub
	streams    *sessions.Part // its streams outlive their handlers: Run waits for them
	broker     *pgnotify.Broker
	notifyPool *pgxpool.Pool
	redis      *sharedState // -redis: the shared stores; nil without

	// Operations: OpenTelemetry (nil when off) and the audit file (nil
	// unless -audit-log names one).
	tel       *telemetry
	auditFile *os.File
	audit     *audit.Audit // nil when the audit trail is off

	runOnce, closeOnce sync.Once
	closeErr           error
}

// New validates cfg, opens the listener, the database (migrating and
// seeding it) and the token verifier, and builds the handler. The server
// accepts connections already but answers them only once Run is called.
// Configuration problems are reported as *ConfigError values (joined with
// errors.Join); call Close when New succeeded.
func New(ctx context.Context, cfg Config) (*App, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: cfg.Logger}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	var err error
	if a.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("listen on %s (-addr): %w", cfg.Addr, err)
	}
	a.resource = cfg.Resource
	if err := a.openState(ctx); err != nil {
		return nil, err
	}
	inv, err := a.assemble(ctx)
	if err != nil {
		return nil, err
	}
	if a.dev != nil {
		if a.banner, err = a.walkthrough(ctx, inv); err != nil {
			return nil, err
		}
	}
	a.log.Info("documents server ready", "url", a.URL()+"/mcp", "resource", a.resource,
		"database", describeDB(cfg.DB), "notifications", a.describeNotifications(), "shared_state", a.describeShared(),
		"development", a.dev != nil, "page_size", cfg.PageSize)
	ok = true
	return a, nil
}

// openState starts what the server keeps state in: development mode's
// issuer, the store, Redis and the notification hub.
func (a *App) openState(ctx context.Context) error {
	if a.cfg.Development() {
		if err := a.startDevelopment(); err != nil {
			return err
		}
	}
	if err := a.openStore(ctx); err != nil {
		return err
	}
	if err := a.openRedis(ctx); err != nil {
		return err
	}
	return a.openNotifications(ctx)
}

// assemble builds the serving side on the opened state — the
// authenticator, telemetry and audit, the inventory, one origin guard for
// the MCP endpoint and the REST API, the endpoint, the routes and the
// HTTP server — and returns the inventory.
func (a *App) assemble(ctx context.Context) (*inventory.Inventory, error) {
	limiter, err := a.newRateLimiter()
	if err != nil {
		return nil, err
	}
	auth, err := a.newAuthenticator(ctx, limiter)
	if err != nil {
		return nil, err
	}
	tracing, err := a.startTelemetry(ctx)
	if err != nil {
		return nil, err
	}
	audit, err := a.newAudit()
	if err != nil {
		return nil, err
	}
	inv, err := a.newInventory()
	if err != nil {
		return nil, err
	}
	origins, err := origin.New(a.cfg.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	ep, err := a.newEndpoint(inv, auth, origins, limiter, tracing, audit)
	if err != nil {
		return nil, err
	}
	if a.handler, err = a.routes(ep, auth, origins); err != nil {
		return nil, err
	}
	if a.cfg.wrap != nil {
		a.handler = a.cfg.wrap(a.handler)
	}
	a.srv = mcphttp.NewServer(a.ln.Addr().String(), a.handler)
	a.srv.ErrorLog = slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)
	// Open streams end when the hub closes: Shutdown closes it first, so
	// it does not wait for them until its timeout.
	a.srv.RegisterOnShutdown(a.hub.Close)
	return inv, nil
}

// newAuthenticator verifies the tokens of the configured issuers (or
// development mode's), with DPoP as configured and limiter as the
// throttle of refused tokens per address, before signatures.
func (a *App) newAuthenticator(ctx context.Context, limiter *ratelimit.Limiter) (*authn.Authenticator, error) {
	verifier, err := a.newVerifier(ctx)
	if err != nil {
		return nil, err
	}
	var throttle authn.Throttle
	if limiter != nil {
		throttle = limiter
	}
	auth, err := authn.NewAuthenticator(subjectRecorder{verifier}, authn.Options{
		Resource: a.resource, Scopes: []string{ScopeRead}, Logger: a.log,
		DPoP:     dpop.Options{Mode: a.cfg.DPoP, RequireNonce: a.cfg.DPoPNonce, ReplayStore: a.replayStore()},
		Throttle: throttle,
	})
	if err != nil {
		return nil, fmt.Errorf("authenticator: %w", err)
	}
	return auth, nil
}

// Handler returns the server's HTTP handler (for tests with httptest).
func (a *App) Handler() http.Handler { return a.handler }

// Addr returns the address the server listens on, with the real port.
func (a *App) Addr() string { return a.ln.Addr().String() }

// URL returns the server's base URL, http://ADDR.
func (a *App) URL() string { return "http://" + a.displayHost() }

// MetricsAddr returns the address of the Prometheus /metrics listener
// (-metrics-addr, with the real port), or "" without one.
func (a *App) MetricsAddr() string { return a.tel.metricsAddr() }

// Resource returns the canonical resource URI the server protects.
func (a *App) Resource() string { return a.resource }

// displayHost is the configured host (so "localhost" stays) with the real
// port; an unspecified host becomes 127.0.0.1.
func (a *App) displayHost() string {
	host, _, _ := net.SplitHostPort(a.cfg.Addr) // validated
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		host = "127.0.0.1"
	}
	_, port, _ := net.SplitHostPort(a.ln.Addr().String())
	return net.JoinHostPort(host, port)
}

// Run serves until ctx is done, then shuts down gracefully: it stops
// accepting connections, ends the open notification streams (modern
// subscriptions/listen streams get their final result), and waits (at most
// Config.ShutdownTimeout) for requests in flight to complete. It returns nil after a clean shutdown.
// Run can be called once; call Close afterwards.
func (a *App) Run(ctx context.Context) error {
	err := errors.New("app: Run called twice")
	a.runOnce.Do(func() { err = a.run(ctx) })
	return err
}

func (a *App) run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
	a.log.Info("listening", "url", a.URL()+"/mcp")
	if a.banner != "" && a.cfg.Stdout != nil {
		fmt.Fprint(a.cfg.Stdout, a.banner)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down: draining requests in flight", "timeout", a.cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	err := a.srv.Shutdown(sctx)
	<-errc // http.ErrServerClosed, at once
	if err == nil {
		err = a.streams.Wait(sctx) // the streams the hub's Close ended write their last message
	}
	if err != nil {
		a.srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	a.log.Info("stopped")
	return nil
}

// Close stops the server if it still runs (without draining), and closes
// the notification hub (and its broker), the listener, the token verifier
// and the database. It is idempotent.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		var errs []error
		if a.hub != nil {
			a.hub.Close() // ends the streams and stops the broker's listener
		}
		errs = append(errs, a.redis.close()) // after the hub: its broker may listen on it
		if a.srv != nil {
			errs = append(errs, a.srv.Close())
		}
		if a.ln != nil {
			if err := a.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		if a.verifier != nil {
			errs = append(errs, a.verifier.Close())
		}
		if a.notifyPool != nil {
			a.notifyPool.Close()
		}
		errs = append(errs, a.tel.shutdown(), a.closeAudit())
		if a.db != nil {
			errs = append(errs, a.db.Close())
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

// openStore opens, migrates and (per Config.Seed) seeds the database.
func (a *App) openStore(ctx context.Context) error {
	if strings.HasPrefix(a.cfg.DB, "sqlite:") && a.cfg.DB != "sqlite::memory:" {
		if err := os.MkdirAll(a.cfg.DataDir, 0o700); err != nil {
			return fmt.Errorf("data directory (-data-dir): %w", err)
		}
	}
	db, err := store.Open(ctx, a.cfg.DB)
	if err != nil {
		return fmt.Errorf("database %s (-db): %w", describeDB(a.cfg.DB), err)
	}
	a.db = db
	if a.skills, err = store.OpenSkills(ctx, db); err != nil {
		return fmt.Errorf("database %s (-db): skills: %w", describeDB(a.cfg.DB), err)
	}
	if a.cfg.Seed == SeedAlways || a.cfg.Seed == SeedAuto && a.cfg.Development() {
		if len(a.cfg.MoreIssuers) == 0 {
			if err := store.Seed(ctx, db); err != nil {
				return fmt.Errorf("seed: %w", err)
			}
			if err := store.SeedSkills(ctx, a.skills, func(s string) string { return s }); err != nil {
				return fmt.Errorf("seed skills: %w", err)
			}
		}
		// Several issuers: each issuer's alice, bob and carol get their own
		// documents, under issuer-qualified keys.
		for _, iss := range a.cfg.issuerIDs() {
			if len(a.cfg.MoreIssuers) == 0 {
				break
			}
			if err := store.SeedOwners(ctx, db, func(s string) string { return principal.SubjectKey(iss, s) }); err != nil {
				return fmt.Errorf("seed: %w", err)
			}
		}
	}
	return nil
}

// newVerifier returns the token verifier, behind a verification cache.
func (a *App) newVerifier(ctx context.Context) (authn.Verifier, error) {
	cfg := a.cfg
	if cfg.IntrospectionURL != "" {
		iv, err := authn.NewIntrospectionVerifier(authn.IntrospectionOptions{
			Endpoint: cfg.IntrospectionURL, ClientID: cfg.IntrospectionClientID,
			ClientSecret: cfg.IntrospectionClientSecret, Resource: a.resource, Issuer: cfg.Issuer, Logger: a.log,
		})
		if err != nil {
			return nil, fmt.Errorf("introspection (-introspection-url): %w", err)
		}
		return authn.NewCache(iv, authn.CacheOptions{}), nil
	}
	opts := authn.JWTOptions{
		Issuer: cfg.Issuer, Resource: a.resource, JWKSURL: cfg.JWKSURL,
		AllowPlainJWTType: cfg.AllowPlainJWTType, Logger: a.log,
	}
	if a.dev != nil {
		// The JWK Set is answered in-process (see devissuer.Issuer.Client):
		// the warm-up fetch below succeeds although nothing is served yet.
		opts.Issuer, opts.JWKSURL, opts.HTTPClient = a.dev.Issuer(), a.dev.JWKSURL(), a.dev.Client()
		opts.Algorithms = []string{"ES256"}
	}
	if cfg.AllowPlainJWTType {
		a.log.Warn("-allow-plain-jwt-type: JWTs typed \"JWT\" or untyped are accepted as access tokens; only the audience check keeps the issuer's ID tokens out")
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if len(cfg.MoreIssuers) > 0 {
		mo := authn.MultiIssuerOptions{Resource: a.resource, JWT: []authn.JWTOptions{opts}}
		for _, mi := range cfg.MoreIssuers {
			o := opts
			o.Issuer, o.JWKSURL = mi.Issuer, mi.JWKSURL
			mo.JWT = append(mo.JWT, o)
		}
		mv, err := authn.NewMultiIssuerVerifier(wctx, mo)
		if err != nil {
			return nil, fmt.Errorf("issuers (-issuer, -jwks-url): %w", err)
		}
		a.verifier, a.issuers = mv, mv.Issuers()
		return authn.NewCache(mv, authn.CacheOptions{}), nil
	}
	jv, err := authn.NewJWTVerifier(wctx, opts)
	if err != nil {
		return nil, fmt.Errorf("JWT verifier (-issuer, -jwks-url): %w", err)
	}
	a.verifier = jv
	return authn.NewCache(jv, authn.CacheOptions{}), nil
}

// newSealer returns the cursor sealer: shared keys from -cursor-keys, or
// nil (a random key per process).
func (a *App) newSealer() (*sealedcursor.Sealer, error) {
	if a.cfg.CursorKeys == "" {
		return nil, nil
	}
	ring, err := sealedcursor.ParseKeyRing(a.cfg.CursorKeys)
	if err != nil {
		return nil, &ConfigError{Flag: "cursor-keys", Problem: err.Error()}
	}
	return sealedcursor.New(sealedcursor.Options{Keys: ring})
}

// describeDB names a database for logs without credentials: the SQLite
// path, or the PostgreSQL host and database.
func describeDB(dsn string) string {
	if strings.HasPrefix(dsn, "sqlite:") {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres"
	}
	return "postgres://" + u.Host + u.Path
}

// subjectRecorder is the Verifier the authenticator uses: it notes the
// verified subject (and issuer, when several are trusted) for the request
// log (see requestLog).
type subjectRecorder struct{ v authn.Verifier }

func (s subjectRecorder) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	p, exp, err := s.v.Verify(ctx, token)
	if err == nil {
		if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
			info.subject, info.issuer = p.Subject, p.Issuer
		}
	}
	return p, exp, err
}

// newEndpoint assembles the MCP endpoint: the core over the inventory,
// and its parts — legacy sessions and event streams (notifications), the
// tools (the inventory's and one of the server's own), per-caller rate
// limits, tracing and the audit trail.
func (a *App) newEndpoint(inv *inventory.Inventory, auth *authn.Authenticator, origins *origin.Guard,
	limiter *ratelimit.Limiter, tracing mcphttp.Observer, trail mcphttp.Observer) (*mcphttp.Endpoint, error) {
	streams, err := sessions.New(a.hub, sessions.Options{Store: a.sessionStore()})
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	all, err := Tools(inv)
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	sealer, err := a.newSealer() // the fleet's key ring, if any: skills cursors page across instances too
	if err != nil {
		return nil, err
	}
	catalog, err := skills.New(inv, SkillsSource(a.skills), skills.Options{PageSize: a.cfg.PageSize, DirectoryRead: true, Sealer: sealer, Logger: a.log})
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	toolPart, err := tools.New(append(all, catalog.Tools()...)...) // list_skills, get_skill beside the others
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	parts := []mcphttp.Part{streams, toolPart, catalog, mcphttp.Observe(tracing, trail)}
	if limiter != nil {
		parts = append(parts, limiter.Part())
	}
	limits, err := a.bodyLimits()
	if err != nil {
		return nil, err
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{
		ServerInfo:    mcphttp.Implementation{Name: "mcpkit-documents", Title: "mcpkit documents", Version: Version},
		Instructions:  instructions,
		Authenticator: auth,
		RequireSignIn: a.cfg.RequireSignIn,
		Origins:       origins,
		Limits:        limits,
		Logger:        a.log,
	}, parts...)
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	a.streams = streams
	return ep, nil
}

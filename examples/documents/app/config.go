package app

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Defaults of Config.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultDataDir         = ".mcpkit-documents"
	DefaultShutdownTimeout = 10 * time.Second

	// DefaultPageSize is the page size, in development mode too: the
	// kit's default (inventory.Options.PageSize). Clients that stop after
	// a number of pages list at most page size × that many resources: the
	// TypeScript SDK v2 and the MCP Inspector stop at 64 pages (3,200
	// resources at 50 a page, 320 at 5).
	DefaultPageSize = 50
)

// SeedMode says when the demo documents are created.
type SeedMode uint8

const (
	// SeedAuto (the zero value) seeds in development mode only, so that a
	// production database never receives demo users.
	SeedAuto SeedMode = iota
	// SeedAlways seeds in every mode.
	SeedAlways
	// SeedNever never seeds.
	SeedNever
)

// Config is the configuration of the documents server. The zero value is
// valid: development mode on 127.0.0.1:8080 with an SQLite database in
// .mcpkit-documents. [ParseFlags] fills it from flags and MCPKIT_*
// environment variables; each field names its flag.
type Config struct {
	// Addr is the listen address (-addr). Empty means DefaultAddr. Port 0
	// picks a free port. In development mode the host must be a loopback
	// address or "localhost".
	Addr string
	// DataDir holds the SQLite database and the development signing key
	// (-data-dir). Empty means DefaultDataDir, in the working directory.
	// It is created with mode 0700 when needed.
	DataDir string
	// DB names the database (-db): "sqlite:PATH" or a "postgres://" DSN.
	// Empty means "sqlite:" + DataDir + "/documents.db".
	DB string
	// NotifyChannel is the PostgreSQL LISTEN/NOTIFY channel that carries
	// change notifications between the instances sharing a PostgreSQL
	// database (-notify-channel): see package pgnotify. Empty means
	// pgnotify.DefaultChannel. With SQLite, notifications stay in the
	// process and this must be empty.
	NotifyChannel string
	// Redis is the redis:// URL of a Redis shared by the instances of a
	// fleet (-redis): sessions, the DPoP replay memory, the rate limits,
	// and notifications unless DB is PostgreSQL. Empty means none. See
	// redis.go for what an outage of it does.
	Redis string
	// RateFailClosed refuses calls (503) while the Redis of rate limits
	// cannot answer (-rate-fail-closed). False lets them through, logged.
	RateFailClosed bool

	// Issuer is the authorization server's issuer identifier (-issuer).
	// Development mode is on when Issuer, JWKSURL and IntrospectionURL are
	// all empty.
	Issuer string
	// JWKSURL is the issuer's JWK Set (-jwks-url): tokens are JWTs.
	JWKSURL string
	// IntrospectionURL is the RFC 7662 endpoint (-introspection-url):
	// tokens are opaque. IntrospectionClientID and IntrospectionClientSecret
	// authenticate this server to it; the secret is read from the
	// environment only and never logged.
	IntrospectionURL                                 string
	IntrospectionClientID, IntrospectionClientSecret string
	// MoreIssuers are trusted besides Issuer (-issuer and -jwks-url given
	// again: the n-th -jwks-url belongs to the n-th -issuer). With any, the
	// server verifies with an authn.MultiIssuerVerifier, every identity is
	// issuer-qualified (principal.Principal.Key: documents, shares and
	// notifications of alice of one issuer are never alice's of another;
	// shares name users of the sharer's own issuer), and the metadata
	// lists every issuer. JWT access tokens only.
	MoreIssuers []TrustedIssuer
	// DPoP turns on DPoP sender-constrained tokens (-dpop: off, allowed,
	// required); see dpop.Options. Proofs are checked against
	// -resource's origin.
	DPoP dpop.Mode
	// DPoPNonce requires server nonces in DPoP proofs (-dpop-nonce).
	DPoPNonce bool
	// AllowPlainJWTType admits JWTs typed "JWT" or untyped
	// (-allow-plain-jwt-type); see authn.JWTOptions.AllowPlainJWTType.
	AllowPlainJWTType bool
	// RequireSignIn answers every request without credentials, initialize
	// included, with the 401 challenge (-require-sign-in), so clients that
	// start OAuth only at connect sign in; the public about resource is
	// then for signed-in callers only. See mcphttp.Options.RequireSignIn.
	RequireSignIn bool

	// Resource is the canonical resource URI (-resource): the audience
	// tokens must carry and the "resource" of the metadata. Required with
	// a real issuer; in development mode it defaults to
	// http://ADDR/mcp with the port actually listened on.
	Resource string
	// AuthorizationServer is published in the resource metadata
	// (-authorization-server). Empty means Issuer (in development mode,
	// the built-in issuer).
	AuthorizationServer string

	// CursorKeys is a sealedcursor key ring, "ID:SECRET[,ID:SECRET]..."
	// (-cursor-keys), shared by the instances of a fleet. Empty means a
	// random key per process.
	CursorKeys string
	// AllowedOrigins lists browser origins allowed to call the endpoint
	// (-allowed-origins, comma-separated). Empty means none.
	AllowedOrigins []string
	// PageSize is the number of resources per resources/list page
	// (-page-size), 1..100. Zero means DefaultPageSize. Clients that stop
	// after 64 pages (the TypeScript SDK v2, the MCP Inspector) list at
	// most 64 × PageSize resources of a user.
	PageSize int
	// Seed says when the demo documents are created (-seed).
	Seed SeedMode
	// ShutdownTimeout bounds the wait for requests in flight at shutdown
	// (-shutdown-timeout). Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// OTLPEndpoint is the base URL of an OpenTelemetry collector's
	// OTLP/HTTP receiver (-otel; ParseFlags falls back to the standard
	// OTEL_EXPORTER_OTLP_ENDPOINT): traces go to /v1/traces, metrics to
	// /v1/metrics, and the exporters read the other OTEL_EXPORTER_OTLP_*
	// variables (headers, timeout) themselves. Empty means no export.
	OTLPEndpoint string
	// MetricsAddr is the listen address of a Prometheus /metrics endpoint
	// (-metrics-addr), a listener of its own so that it can stay on an
	// internal network. Empty means none.
	MetricsAddr string
	// AuditLog is where audit records go (-audit-log), one JSON line per
	// MCP call that touched the inventory (who, what, outcome, when; never
	// tokens or contents): AuditStdout for Stdout, "off", or a file path
	// (appended, created with mode 0600). Empty means off; the flag's
	// default is AuditStdout.
	AuditLog string
	// AuditWriter, when set, receives the audit records instead.
	AuditWriter io.Writer
	// RateList, RateRead, RateSearch and RateOther limit each caller's
	// calls per method class (-rate-list, -rate-read, -rate-search,
	// -rate-other): "PERSECOND[:BURST]", or "off". Callers are their
	// token's subject, else anonymous callers their client address (see
	// TrustedProxies). Empty means
	// no limit; the flags' defaults are DefaultRateList and the others.
	RateList, RateRead, RateSearch, RateOther string
	// RateRefused limits the credentials refused per client address
	// (-rate-refused), checked before a token's signature is: past it,
	// that address's requests with a token get 429. Same syntax; the
	// flag's default is DefaultRateRefused.
	RateRefused string
	// MaxInFlight bounds the MCP calls one caller (as the rate limits key
	// them) may have in flight at once (-max-in-flight): past it, 429. A
	// client that waits for each answer never meets it; a flood does.
	// Zero means no bound; the flag's default is DefaultMaxInFlight.
	MaxInFlight int
	// TrustedProxies names the reverse proxies in front of the server
	// (-trusted-proxies): comma-separated IP addresses and CIDR prefixes
	// ("127.0.0.1/32,10.0.0.0/8"). From them, and only from them, the
	// client address in ProxyHeader is believed: the per-address limits
	// (anonymous callers' buckets, -rate-refused, anonymous bodies) and
	// the audit trail's refusal records key on the real client instead
	// of on the proxy, which every client would share. Empty
	// means none: the remote address is the client's.
	TrustedProxies string
	// ProxyHeader is the header the trusted proxies put the client's
	// address in (-proxy-header): "X-Forwarded-For" (HAProxy's option
	// forwardfor, nginx's $proxy_add_x_forwarded_for) or "Forwarded"
	// (RFC 7239). Empty means X-Forwarded-For.
	ProxyHeader string

	// LogLevel is the minimum level of the default logger (-log-level).
	LogLevel slog.Level
	// Logger receives every log record. Nil means a text logger on
	// standard error at LogLevel.
	Logger *slog.Logger
	// Stdout receives the development-mode walk-through. Nil discards it.
	Stdout io.Writer
	// DevClientMetadataRoots are the certificate authorities the
	// development authorization server trusts when it fetches an https
	// client ID metadata document (no flag: for tests, and clients that
	// serve their document from a development host). Nil means the
	// system's.
	DevClientMetadataRoots *x509.CertPool

	// wrap, when set by tests, wraps the router.
	wrap func(http.Handler) http.Handler
}

// issuerIDs returns Issuer and those of MoreIssuers.
func (c Config) issuerIDs() []string {
	ids := []string{c.Issuer}
	for _, mi := range c.MoreIssuers {
		ids = append(ids, mi.Issuer)
	}
	return ids
}

// TrustedIssuer is one more issuer of JWT access tokens (Config.MoreIssuers).
type TrustedIssuer struct {
	Issuer  string // its exact "iss"
	JWKSURL string // its JWK Set
}

// ConfigError reports one invalid setting, naming its flag.
type ConfigError struct {
	Flag    string // without the leading dash
	Problem string
}

func (e *ConfigError) Error() string { return "-" + e.Flag + ": " + e.Problem }

// Development reports whether the built-in development issuer is used:
// no real issuer, JWK Set or introspection endpoint is configured.
func (c Config) Development() bool {
	return c.Issuer == "" && c.JWKSURL == "" && c.IntrospectionURL == ""
}

// withDefaults fills in the zero fields.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.DB == "" {
		c.DB = "sqlite:" + filepath.Join(c.DataDir, "documents.db")
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.AuthorizationServer == "" {
		c.AuthorizationServer = c.Issuer
	}
	return c
}

// Validate checks the configuration after defaults are applied and returns
// every problem found, each a *ConfigError (joined with errors.Join), in
// the order of the rules (configRules).
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, &ConfigError{Flag: flag, Problem: fmt.Sprintf(format, args...)})
	}
	for _, check := range configRules() {
		check(c, bad)
	}
	// Writers holding a nil pointer (a nil *bytes.Buffer) are refused
	// here rather than panicking at the first record.
	if typedNil(c.AuditWriter) {
		bad("audit-log", "Config.AuditWriter is a nil %T: give a writer, or leave the field nil", c.AuditWriter)
	}
	if typedNil(c.Stdout) {
		errs = append(errs, fmt.Errorf("app: Config.Stdout is a nil %T: give a writer, or leave the field nil", c.Stdout))
	}
	return errors.Join(errs...)
}

// reportFunc records one problem of a flag.
type reportFunc func(flag, format string, args ...any)

// configRule checks one setting, or settings that depend on each other,
// of a configuration with its defaults applied, and reports each problem.
type configRule func(c Config, bad reportFunc)

// configRules are the rules Validate applies, in order: where and what
// the server stores, who issues its tokens, then the limits and outputs.
func configRules() []configRule {
	return []configRule{
		checkAddr,
		checkDB,
		checkNotifyChannel,
		checkRedis,
		checkResource,
		checkAuthURLs,
		checkTokenKind,
		checkIntrospection,
		checkMoreIssuers,
		when("dpop", func(c Config) bool { return c.DPoP > dpop.Required },
			"must be off, allowed or required"),
		when("dpop-nonce", func(c Config) bool { return c.DPoPNonce && c.DPoP == dpop.Off },
			"needs -dpop allowed or required"),
		when("allow-plain-jwt-type", func(c Config) bool { return c.AllowPlainJWTType && c.JWKSURL == "" },
			"only applies to JWT access tokens from a real issuer (-jwks-url)"),
		when("authorization-server", func(c Config) bool { return c.Development() && c.AuthorizationServer != "" },
			"development mode publishes its built-in issuer; set -issuer to use another"),
		checkCursorKeys,
		checkOrigins,
		when("page-size", func(c Config) bool { return c.PageSize < 1 || c.PageSize > 100 },
			"must be from 1 to 100"),
		when("shutdown-timeout", func(c Config) bool { return c.ShutdownTimeout < 0 },
			"must not be negative"),
		when("seed", func(c Config) bool { return c.Seed > SeedNever },
			"must be auto, true or false"),
		when("otel", func(c Config) bool { return c.OTLPEndpoint != "" && !isOTLPEndpoint(c.OTLPEndpoint) },
			"must be an http or https URL of an OTLP/HTTP receiver, e.g. http://localhost:4318"),
		checkMetricsAddr,
		checkRates,
	}
}

// when is the rule that reports problem for flag when broken(c) holds.
func when(flag string, broken func(Config) bool, problem string) configRule {
	return func(c Config, bad reportFunc) {
		if broken(c) {
			bad(flag, "%s", problem)
		}
	}
}

// checkAddr: HOST:PORT, and loopback only in development mode.
func checkAddr(c Config, bad reportFunc) {
	host, problem := checkHostPort(c.Addr)
	switch {
	case problem != "":
		bad("addr", "%s", problem)
	case c.Development() && !isLoopback(host):
		bad("addr", "development mode (no -issuer) listens on loopback only (127.0.0.1, ::1 or localhost); configure a real issuer to listen on %q", host)
	}
}

// checkHostPort returns the host of a HOST:PORT listen address, or what
// is wrong with it.
func checkHostPort(addr string) (host, problem string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "must be HOST:PORT"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "port must be a number from 0 to 65535"
	}
	return host, ""
}

// checkDB: "sqlite:PATH" or a PostgreSQL DSN.
func checkDB(c Config, bad reportFunc) {
	switch {
	case strings.HasPrefix(c.DB, "sqlite:"):
		if strings.TrimPrefix(c.DB, "sqlite:") == "" {
			bad("db", "sqlite: needs a path (or :memory:)")
		}
	case isPostgres(c.DB):
	default:
		bad("db", `must be "sqlite:PATH" or a "postgres://" DSN`)
	}
}

// checkNotifyChannel: a valid channel name, with PostgreSQL only.
func checkNotifyChannel(c Config, bad reportFunc) {
	switch {
	case c.NotifyChannel == "":
	case !isPostgres(c.DB):
		bad("notify-channel", "only used with a postgres:// database (-db); with SQLite, notifications stay in the process")
	case !pgnotify.ValidChannel(c.NotifyChannel):
		bad("notify-channel", "must be 1-63 characters of [a-z0-9_], not starting with a digit")
	}
}

// checkRedis: a redis:// URL, and -rate-fail-closed only with it.
func checkRedis(c Config, bad reportFunc) {
	if p := checkRedisURL(c.Redis); p != "" {
		bad("redis", "%s", p)
	} else if c.RateFailClosed && c.Redis == "" {
		bad("rate-fail-closed", "only used with -redis")
	}
}

// checkResource: required with a real issuer; a URL with a well-known
// metadata path.
func checkResource(c Config, bad reportFunc) {
	switch {
	case c.Resource == "" && !c.Development():
		bad("resource", "required with a real issuer: the canonical URI of this server's MCP endpoint, e.g. https://mcp.example.com/mcp")
	case c.Resource == "":
	case checkURL(c.Resource) != "":
		bad("resource", "%s", checkURL(c.Resource))
	default:
		if _, err := authn.WellKnownPath(c.Resource); err != nil {
			bad("resource", "must be an absolute https URL (http only for loopback hosts) without userinfo, query or fragment")
		}
	}
}

// checkAuthURLs: the issuer's URLs that are set are https URLs (http on
// loopback); a defaulted -authorization-server (= -issuer) is not
// reported twice.
func checkAuthURLs(c Config, bad reportFunc) {
	for _, f := range []struct{ flag, value string }{
		{"issuer", c.Issuer}, {"jwks-url", c.JWKSURL},
		{"introspection-url", c.IntrospectionURL}, {"authorization-server", c.AuthorizationServer},
	} {
		if f.value == "" || f.flag == "authorization-server" && f.value == c.Issuer {
			continue
		}
		if p := checkURL(f.value); p != "" {
			bad(f.flag, "%s", p)
		}
	}
}

// checkTokenKind: JWTs (-issuer with -jwks-url) or opaque tokens
// (-introspection-url), not both.
func checkTokenKind(c Config, bad reportFunc) {
	switch {
	case c.JWKSURL != "" && c.IntrospectionURL != "":
		bad("jwks-url", "choose one of -jwks-url (JWT access tokens) and -introspection-url (opaque tokens)")
	case c.JWKSURL != "" && c.Issuer == "":
		bad("issuer", "required with -jwks-url: the exact \"iss\" of the tokens")
	case c.Issuer != "" && c.JWKSURL == "" && c.IntrospectionURL == "":
		bad("jwks-url", "required with -issuer (or use -introspection-url)")
	}
}

// checkIntrospection: the endpoint's client credentials and the
// authorization server to publish, and no credentials without it.
func checkIntrospection(c Config, bad reportFunc) {
	if c.IntrospectionURL == "" {
		if c.IntrospectionClientID != "" || c.IntrospectionClientSecret != "" {
			bad("introspection-client-id", "only used with -introspection-url")
		}
		return
	}
	if c.IntrospectionClientID == "" {
		bad("introspection-client-id", "required with -introspection-url")
	}
	if c.IntrospectionClientSecret == "" {
		bad("introspection-client-secret", "required with -introspection-url: set MCPKIT_INTROSPECTION_CLIENT_SECRET")
	}
	if c.AuthorizationServer == "" {
		bad("authorization-server", "required with -introspection-url when -issuer is not set")
	}
}

// checkMoreIssuers: several issuers are JWT issuers, each once, each with
// its JWK Set, and the metadata lists them all.
func checkMoreIssuers(c Config, bad reportFunc) {
	if len(c.MoreIssuers) == 0 {
		return
	}
	switch {
	case c.IntrospectionURL != "":
		bad("issuer", "several issuers need a -jwks-url each; -introspection-url serves one issuer")
	case c.AuthorizationServer != c.Issuer:
		bad("authorization-server", "with several issuers, the metadata lists every -issuer; leave -authorization-server unset")
	}
	seen := map[string]bool{c.Issuer: true}
	for _, mi := range c.MoreIssuers {
		if p := checkURL(mi.Issuer); p != "" {
			bad("issuer", "%q: %s", mi.Issuer, p)
		} else if seen[mi.Issuer] {
			bad("issuer", "%q is given twice", mi.Issuer)
		}
		seen[mi.Issuer] = true
		if p := checkURL(mi.JWKSURL); p != "" {
			bad("jwks-url", "%q: %s", mi.JWKSURL, p)
		}
	}
}

// checkCursorKeys: a key ring sealedcursor can parse.
func checkCursorKeys(c Config, bad reportFunc) {
	if c.CursorKeys == "" {
		return
	}
	if _, err := sealedcursor.ParseKeyRing(c.CursorKeys); err != nil {
		bad("cursor-keys", "%v (generate one with sealedcursor.GenerateKey)", err)
	}
}

// checkOrigins: every allowed origin is an origin.
func checkOrigins(c Config, bad reportFunc) {
	for _, o := range c.AllowedOrigins {
		if !isOrigin(o) {
			bad("allowed-origins", "%q is not an origin (scheme://host[:port], no path)", o)
		}
	}
}

// isOTLPEndpoint reports whether s is the http(s) base URL of an OTLP
// receiver.
func isOTLPEndpoint(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && u.RawQuery == "" && u.Fragment == ""
}

// checkMetricsAddr: HOST:PORT when set.
func checkMetricsAddr(c Config, bad reportFunc) {
	if c.MetricsAddr == "" {
		return
	}
	if _, problem := checkHostPort(c.MetricsAddr); problem != "" {
		bad("metrics-addr", "%s", problem)
	}
}

// checkRates: every rate limit parses, and so do the trusted proxies.
func checkRates(c Config, bad reportFunc) {
	for _, f := range c.rateFlags() {
		if _, err := parseRate(f.value); err != nil {
			bad(f.flag, "%v", err)
		}
	}
	if c.MaxInFlight < 0 {
		bad("max-in-flight", "must not be negative (0: no bound)")
	}
	if _, err := ratelimit.NewTrustedProxies(c.TrustedProxies, ""); err != nil {
		bad("trusted-proxies", "must be comma-separated IP addresses and CIDR prefixes (without host bits), e.g. 127.0.0.1/32,10.0.0.0/8")
	}
	if _, err := ratelimit.NewTrustedProxies("", c.ProxyHeader); err != nil {
		bad("proxy-header", "must be X-Forwarded-For or Forwarded")
	} else if c.ProxyHeader != "" && c.TrustedProxies == "" {
		bad("proxy-header", "only used with -trusted-proxies")
	}
}

// checkURL returns what is wrong with an absolute https URL (http for
// loopback hosts), or "".
func checkURL(raw string) string {
	const want = "must be an absolute https URL (http only for loopback hosts)"
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return want
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return want + " without userinfo, query or fragment"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return ""
	}
	return want
}

// isLoopback reports whether host is a loopback IP address or "localhost".
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isOrigin reports whether s is a serialized origin: scheme://host[:port].
func isOrigin(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "#")
}

// typedNil reports whether w is an interface holding a nil pointer (a nil
// *os.File, say), which would panic on the first write. (The example
// imports only the kit's public packages, so it has its own check.)
func typedNil(w io.Writer) bool {
	if w == nil {
		return false
	}
	v := reflect.ValueOf(w)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

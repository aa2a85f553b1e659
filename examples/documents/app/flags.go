package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/authn/dpop"
)

// EnvPrefix starts the name of every environment variable: the variable of
// flag -page-size is MCPKIT_PAGE_SIZE.
const EnvPrefix = "MCPKIT_"

// EnvIntrospectionSecret holds the introspection client secret. It has no
// flag: command lines are visible to other users of the machine.
const EnvIntrospectionSecret = EnvPrefix + "INTROSPECTION_CLIENT_SECRET"

// EnvOTLPEndpoint is OpenTelemetry's standard variable for the OTLP
// receiver, the fallback of -otel.
const EnvOTLPEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"

// EnvRedisURL is the variable of -redis: the name the redisstore
// documentation and other tools use.
const EnvRedisURL = EnvPrefix + "REDIS_URL"

// EnvName returns the environment variable of a flag (without its dash).
func EnvName(flagName string) string {
	if flagName == "redis" {
		return EnvRedisURL
	}
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ParseFlags fills a Config from command-line args and environment
// variables (read with getenv): a flag given on the command line wins over
// its MCPKIT_* variable, which wins over the default. Flags and positional
// arguments may be interleaved ("token alice -addr 127.0.0.1:9000"); the
// positional ones are returned. Usage and flag errors are written to
// output. The error is flag.ErrHelp for -h, else a *ConfigError or the
// flag package's error; either way main should exit with status 2 (0 for
// help). The Config is not validated, nor given its defaults (Addr stays
// empty without -addr or MCPKIT_ADDR): New and DevToken do that.
func ParseFlags(args []string, getenv func(string) string, output io.Writer) (Config, []string, error) {
	var c Config
	var multi issuerFlags
	fs := newFlagSet(&c, &multi, output)
	positional, err := parseInterleaved(fs, args, output)
	if err != nil {
		return Config{}, nil, err
	}
	if err := setFromEnv(fs, getenv); err != nil {
		fmt.Fprintln(output, err)
		return Config{}, nil, err
	}
	c.IntrospectionClientSecret = getenv(EnvIntrospectionSecret)
	if c.OTLPEndpoint == "" {
		c.OTLPEndpoint = getenv(EnvOTLPEndpoint) // the standard variable, when MCPKIT_OTEL and -otel are unset
	}
	if err := multi.apply(&c); err != nil {
		fmt.Fprintln(output, err)
		return Config{}, nil, err
	}
	return c, positional, nil
}

// flagSet is the documents flag set; str defines a string flag whose
// usage names its environment variable.
type flagSet struct{ *flag.FlagSet }

func (fs flagSet) str(p *string, name, def, usage string) {
	fs.StringVar(p, name, def, usage+" (env "+EnvName(name)+")")
}

// newFlagSet defines every flag, writing into c (and multi, for the
// repeatable -issuer and -jwks-url).
func newFlagSet(c *Config, multi *issuerFlags, output io.Writer) flagSet {
	fs := flagSet{flag.NewFlagSet("documents", flag.ContinueOnError)}
	fs.SetOutput(output)
	defineStorageFlags(fs, c)
	defineAuthFlags(fs, c, multi)
	defineServingFlags(fs, c)
	defineTelemetryFlags(fs, c)
	fs.Usage = func() { fmt.Fprintln(output, "run with -h for help") } // after a flag error
	return fs
}

// defineStorageFlags: where the server listens and keeps its data.
func defineStorageFlags(fs flagSet, c *Config) {
	// No default here: DevToken tells an -addr given from none (the
	// address of the server that recorded itself in -data-dir).
	fs.str(&c.Addr, "addr", "", `listen address; port 0 picks a free port (default "`+DefaultAddr+`"; for "token USER", the running server's)`)
	fs.str(&c.DataDir, "data-dir", DefaultDataDir, "directory for the SQLite database and the development signing key")
	fs.str(&c.DB, "db", "", `database: "sqlite:PATH" or "postgres://…" (default "sqlite:<data-dir>/documents.db")`)
	fs.str(&c.NotifyChannel, "notify-channel", "", `PostgreSQL LISTEN/NOTIFY channel carrying change notifications between the instances sharing a postgres:// database (default "mcpkit_notify")`)
	fs.str(&c.Redis, "redis", "", "URL of a Redis shared by several instances: sessions, DPoP replay memory, rate limits, the event log (Last-Event-ID), notifications (without postgres://): "+redisURLForms+"; prefer the env var when it has a password")
	fs.BoolVar(&c.RateFailClosed, "rate-fail-closed", false, "with -redis: refuse calls (503) while Redis cannot answer, instead of not limiting them (env "+EnvName("rate-fail-closed")+")")
}

// defineAuthFlags: who issues the tokens and how they are checked.
func defineAuthFlags(fs flagSet, c *Config, multi *issuerFlags) {
	// -issuer and -jwks-url may be repeated: the n-th -jwks-url belongs to
	// the n-th -issuer (see Config.MoreIssuers).
	fs.Func("issuer", "issuer identifier of the authorization server; repeat it (each with its -jwks-url, in the same order) to trust several; unset means development mode (env "+EnvName("issuer")+")", func(v string) error {
		multi.issuers = append(multi.issuers, v)
		return nil
	})
	fs.Func("jwks-url", "the issuer's JWK Set URL (JWT access tokens); one per -issuer, in the same order (env "+EnvName("jwks-url")+")", func(v string) error {
		multi.jwks = append(multi.jwks, v)
		return nil
	})
	fs.Func("dpop", "DPoP (RFC 9449) sender-constrained tokens: off, allowed or required (env "+EnvName("dpop")+`) (default "off")`, func(v string) error {
		m, ok := map[string]dpop.Mode{"off": dpop.Off, "allowed": dpop.Allowed, "required": dpop.Required}[strings.ToLower(v)]
		if !ok {
			return errors.New("must be off, allowed or required")
		}
		c.DPoP = m
		return nil
	})
	fs.BoolVar(&c.DPoPNonce, "dpop-nonce", false, "require server nonces in DPoP proofs (use_dpop_nonce, DPoP-Nonce) (env "+EnvName("dpop-nonce")+")")
	fs.str(&c.IntrospectionURL, "introspection-url", "", "RFC 7662 introspection endpoint (opaque tokens); secret from "+EnvIntrospectionSecret)
	fs.str(&c.IntrospectionClientID, "introspection-client-id", "", "client id for the introspection endpoint")
	fs.str(&c.Resource, "resource", "", "canonical resource URI of the MCP endpoint, the tokens' audience (default in development mode: http://ADDR/mcp)")
	fs.str(&c.AuthorizationServer, "authorization-server", "", "authorization server published in the resource metadata (default: -issuer)")
	fs.BoolVar(&c.RequireSignIn, "require-sign-in", false, "answer every request without credentials, initialize included, with the 401 challenge, for clients that start OAuth only at connect; the public about resource then needs sign-in too (env "+EnvName("require-sign-in")+")")
	fs.BoolVar(&c.AllowPlainJWTType, "allow-plain-jwt-type", false, `also accept JWTs typed "JWT" or untyped, for issuers that cannot type access tokens at+jwt: weaker (env `+EnvName("allow-plain-jwt-type")+")")
}

// defineServingFlags: cursors, origins, pages, seeding, limits and
// shutdown.
func defineServingFlags(fs flagSet, c *Config) {
	fs.str(&c.CursorKeys, "cursor-keys", "", "shared cursor key ring ID:SECRET[,ID:SECRET…] for several instances; prefer the env var (default: a random key per process)")
	fs.Func("allowed-origins", "comma-separated browser origins allowed to call the endpoint (env "+EnvName("allowed-origins")+")", func(v string) error {
		c.AllowedOrigins = c.AllowedOrigins[:0]
		for o := range strings.SplitSeq(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				c.AllowedOrigins = append(c.AllowedOrigins, o)
			}
		}
		return nil
	})
	fs.Func("page-size", "resources per resources/list page, 1..100 (env "+EnvName("page-size")+`) (default 50); clients that stop after 64 pages (TypeScript SDK v2, MCP Inspector) list at most 64 × this many`, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return errors.New("must be a number from 1 to 100")
		}
		c.PageSize = n
		return nil
	})
	fs.Func("seed", "create the demo documents of alice, bob and carol when they have none: auto (development mode only), true or false (env "+EnvName("seed")+`) (default "auto")`, func(v string) error {
		m, ok := map[string]SeedMode{"auto": SeedAuto, "true": SeedAlways, "1": SeedAlways, "yes": SeedAlways,
			"false": SeedNever, "0": SeedNever, "no": SeedNever}[strings.ToLower(v)]
		if !ok {
			return errors.New("must be auto, true or false")
		}
		c.Seed = m
		return nil
	})
	fs.str(&c.RateList, "rate-list", DefaultRateList, "per-caller limit of resources/list, resources/templates/list and the list_resources tool: PERSECOND[:BURST] or off")
	fs.str(&c.RateRead, "rate-read", DefaultRateRead, "per-caller limit of resources/read and the tools that read (read_resource, fetch, read_document, count_words): PERSECOND[:BURST] or off")
	fs.str(&c.RateSearch, "rate-search", DefaultRateSearch, "per-caller limit of completion/complete and the search tool: PERSECOND[:BURST] or off")
	fs.str(&c.RateOther, "rate-other", DefaultRateOther, "per-caller limit of every other MCP request: PERSECOND[:BURST] or off")
	fs.str(&c.RateRefused, "rate-refused", DefaultRateRefused, "per-client-address limit of refused tokens (see -trusted-proxies), checked before any signature: PERSECOND[:BURST] or off")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", DefaultMaxInFlight, "MCP calls one caller may have in flight at once, past which it gets 429 (a client that waits for each answer never does); 0: no bound (env "+EnvName("max-in-flight")+")")
	fs.str(&c.TrustedProxies, "trusted-proxies", "", "reverse proxies whose client address header is believed, for the per-address limits and the audit trail's refusal records: comma-separated IP addresses and CIDR prefixes, e.g. 127.0.0.1/32,10.0.0.0/8 (default: none; the remote address is the client's)")
	fs.str(&c.ProxyHeader, "proxy-header", "", `the header the trusted proxies put the client's address in: X-Forwarded-For or Forwarded (default "X-Forwarded-For")`)
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "how long shutdown waits for requests in flight (env "+EnvName("shutdown-timeout")+")")
}

// defineTelemetryFlags: traces, metrics, audit records and logs.
func defineTelemetryFlags(fs flagSet, c *Config) {
	fs.str(&c.OTLPEndpoint, "otel", "", "OTLP/HTTP receiver for traces and metrics, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT; unset: no export)")
	fs.str(&c.MetricsAddr, "metrics-addr", "", "listen address of a Prometheus /metrics endpoint, e.g. 127.0.0.1:9464 (default: none)")
	fs.str(&c.AuditLog, "audit-log", AuditStdout, `audit records, one JSON line per call that touched the inventory: "stdout", "off" or a file path`)
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (env "+EnvName("log-level")+")")
}

// parseInterleaved parses args, in which flags and positional arguments
// may alternate, and returns the positional ones. For -h it prints the
// usage and returns flag.ErrHelp.
func parseInterleaved(fs flagSet, args []string, output io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(output, usageHeader)
			fs.PrintDefaults()
			return nil, err
		} else if err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// setFromEnv sets each flag not given on the command line from its
// MCPKIT_* variable, when that is set.
func setFromEnv(fs flagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v := getenv(EnvName(f.Name)); v != "" {
			if fs.Set(f.Name, v) != nil {
				err = &ConfigError{Flag: f.Name, Problem: "invalid value in " + EnvName(f.Name)}
			}
		}
	})
	return err
}

// issuerFlags collects the repeatable -issuer and -jwks-url.
type issuerFlags struct{ issuers, jwks []string }

// apply sets c's Issuer and JWKSURL from the first of each, and
// MoreIssuers from the others, paired in order.
func (m issuerFlags) apply(c *Config) error {
	if len(m.issuers) > 0 {
		c.Issuer = m.issuers[0]
	}
	if len(m.jwks) > 0 {
		c.JWKSURL = m.jwks[0]
	}
	if len(m.issuers) <= 1 && len(m.jwks) <= 1 {
		return nil
	}
	if len(m.issuers) != len(m.jwks) {
		return &ConfigError{Flag: "jwks-url", Problem: fmt.Sprintf("%d -issuer and %d -jwks-url given: with several issuers, give each its -jwks-url, in the same order", len(m.issuers), len(m.jwks))}
	}
	for i := 1; i < len(m.issuers); i++ {
		c.MoreIssuers = append(c.MoreIssuers, TrustedIssuer{Issuer: m.issuers[i], JWKSURL: m.jwks[i]})
	}
	return nil
}

const usageHeader = `Usage:
  documents [flags]              serve the documents MCP server
  documents [flags] token USER   print a development access token for USER (1 hour,
                                 scopes documents:read documents:share) for the
                                 development server that started last with -data-dir,
                                 or, with -addr, for the one on that address, signed
                                 with the key in -data-dir (give the server's own)

Without -issuer, -jwks-url or -introspection-url the server runs in
development mode, with a built-in token issuer and a sign-in page for MCP
clients (anyone who can reach it signs in as anyone): never in production.
Every flag can also be set by its environment variable; a flag wins.

Flags:
`

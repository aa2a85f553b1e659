package app

import (
	"cmp"
	"errors"
	"flag"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/sealedcursor"
)

// flagsOf returns the sorted flags named by the *ConfigError values in err.
func flagsOf(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*ConfigError); ok {
			out = append(out, ce.Flag)
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	sort.Strings(out)
	return out
}

func TestValidate(t *testing.T) {
	key, err := sealedcursor.GenerateKey(1)
	require.NoError(t, err)
	prod := func(c Config) Config { // a real issuer; fields already set are kept
		c.Issuer = cmp.Or(c.Issuer, "https://auth.example.com")
		c.JWKSURL = cmp.Or(c.JWKSURL, "https://auth.example.com/jwks.json")
		c.Resource = cmp.Or(c.Resource, "https://mcp.example.com/mcp")
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		bad  []string // flags named by the errors; nil means valid
	}{
		{name: "zero value is development mode", cfg: Config{}},
		{name: "development on localhost", cfg: Config{Addr: "localhost:0"}},
		{name: "development on ::1", cfg: Config{Addr: "[::1]:9000"}},
		{name: "development on all interfaces", cfg: Config{Addr: ":8080"}, bad: []string{"addr"}},
		{name: "development on a public address", cfg: Config{Addr: "192.0.2.1:8080"}, bad: []string{"addr"}},
		{name: "addr without port", cfg: Config{Addr: "127.0.0.1"}, bad: []string{"addr"}},
		{name: "addr port out of range", cfg: Config{Addr: "127.0.0.1:70000"}, bad: []string{"addr"}},
		{name: "production on all interfaces", cfg: prod(Config{Addr: ":8080"})},
		{name: "production JWT", cfg: prod(Config{})},
		{name: "production with plain typ", cfg: prod(Config{AllowPlainJWTType: true})},
		{name: "production without resource", cfg: Config{Issuer: "https://a.example", JWKSURL: "https://a.example/k"}, bad: []string{"resource"}},
		{name: "resource over plain http", cfg: prod(Config{Resource: "http://mcp.example.com/mcp"}), bad: []string{"resource"}},
		{name: "resource on loopback http", cfg: prod(Config{Resource: "http://127.0.0.1:8080/mcp"})},
		{name: "resource with fragment", cfg: prod(Config{Resource: "https://mcp.example.com/mcp#x"}), bad: []string{"resource"}},
		{name: "resource with query", cfg: prod(Config{Resource: "https://mcp.example.com/mcp?a=b"}), bad: []string{"resource"}},
		{name: "resource with userinfo", cfg: prod(Config{Resource: "https://u:p@mcp.example.com/mcp"}), bad: []string{"resource"}},
		{name: "resource relative", cfg: prod(Config{Resource: "/mcp"}), bad: []string{"resource"}},
		{name: "development resource override", cfg: Config{Resource: "https://mcp.example.com/mcp"}},
		{name: "issuer without jwks", cfg: Config{Issuer: "https://a.example", Resource: "https://m.example/mcp"}, bad: []string{"jwks-url"}},
		{name: "jwks without issuer", cfg: Config{JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp"}, bad: []string{"issuer"}},
		{name: "jwks over plain http", cfg: prod(Config{JWKSURL: "http://auth.example.com/jwks.json"}), bad: []string{"jwks-url"}},
		{name: "issuer over plain http", cfg: prod(Config{Issuer: "http://auth.example.com"}), bad: []string{"issuer"}},
		{name: "jwks and introspection", cfg: prod(Config{IntrospectionURL: "https://a.example/i", IntrospectionClientID: "c", IntrospectionClientSecret: "s"}), bad: []string{"jwks-url"}},
		{name: "introspection", cfg: Config{IntrospectionURL: "https://a.example/i", IntrospectionClientID: "c", IntrospectionClientSecret: "s", Resource: "https://m.example/mcp", AuthorizationServer: "https://a.example"}},
		{name: "introspection with issuer", cfg: Config{Issuer: "https://a.example", IntrospectionURL: "https://a.example/i", IntrospectionClientID: "c", IntrospectionClientSecret: "s", Resource: "https://m.example/mcp"}},
		{name: "introspection without credentials or authorization server", cfg: Config{IntrospectionURL: "https://a.example/i", Resource: "https://m.example/mcp"},
			bad: []string{"authorization-server", "introspection-client-id", "introspection-client-secret"}},
		{name: "introspection client id alone", cfg: prod(Config{IntrospectionClientID: "c"}), bad: []string{"introspection-client-id"}},
		{name: "plain typ in development", cfg: Config{AllowPlainJWTType: true}, bad: []string{"allow-plain-jwt-type"}},
		{name: "notify channel with postgres", cfg: Config{DB: "postgres://db.example/docs", NotifyChannel: "docs_prod"}},
		{name: "notify channel with sqlite", cfg: Config{NotifyChannel: "docs_prod"}, bad: []string{"notify-channel"}},
		{name: "notify channel not an identifier", cfg: Config{DB: "postgres://db.example/docs", NotifyChannel: "docs-prod; DROP"}, bad: []string{"notify-channel"}},
		{name: "plain typ with introspection", cfg: Config{AllowPlainJWTType: true, Issuer: "https://a.example", IntrospectionURL: "https://a.example/i", IntrospectionClientID: "c", IntrospectionClientSecret: "s", Resource: "https://m.example/mcp"}, bad: []string{"allow-plain-jwt-type"}},
		{name: "authorization server in development", cfg: Config{AuthorizationServer: "https://a.example"}, bad: []string{"authorization-server"}},
		{name: "authorization server not https", cfg: prod(Config{AuthorizationServer: "ftp://a.example"}), bad: []string{"authorization-server"}},
		{name: "cursor keys", cfg: Config{CursorKeys: key}},
		{name: "cursor keys garbage", cfg: Config{CursorKeys: "1:short"}, bad: []string{"cursor-keys"}},
		{name: "origins", cfg: Config{AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000"}}},
		{name: "origin with path", cfg: Config{AllowedOrigins: []string{"https://app.example.com/x"}}, bad: []string{"allowed-origins"}},
		{name: "origin wildcard", cfg: Config{AllowedOrigins: []string{"*"}}, bad: []string{"allowed-origins"}},
		{name: "page size too large", cfg: Config{PageSize: 101}, bad: []string{"page-size"}},
		{name: "page size negative", cfg: Config{PageSize: -1}, bad: []string{"page-size"}},
		{name: "database scheme", cfg: Config{DB: "mysql://x"}, bad: []string{"db"}},
		{name: "database postgres", cfg: Config{DB: "postgres://u@localhost/db"}},
		{name: "database sqlite without path", cfg: Config{DB: "sqlite:"}, bad: []string{"db"}},
		{name: "negative shutdown timeout", cfg: Config{ShutdownTimeout: -time.Second}, bad: []string{"shutdown-timeout"}},
		{name: "several problems at once", cfg: Config{Addr: "x", PageSize: 500, DB: "x"}, bad: []string{"addr", "db", "page-size"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.bad == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ce *ConfigError
			assert.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.bad, flagsOf(err))
		})
	}
}

func TestConfigErrorNamesTheFlag(t *testing.T) {
	err := Config{Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "http://mcp.example.com/mcp"}.Validate()
	assert.EqualError(t, err, "-resource: must be an absolute https URL (http only for loopback hosts)")
}

func TestValidateNeverEchoesSecrets(t *testing.T) {
	// A malformed key ring: the message names the entry, not the secret.
	const secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"
	err := Config{CursorKeys: "1:" + secret}.Validate()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseFlagsPrecedence(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		c, pos, err := ParseFlags(nil, env(nil), io.Discard)
		require.NoError(t, err)
		assert.Empty(t, pos)
		assert.Empty(t, c.Addr, "DevToken tells -addr from none")
		assert.Equal(t, DefaultAddr, c.withDefaults().Addr)
		assert.Equal(t, DefaultDataDir, c.DataDir)
		assert.Zero(t, c.PageSize, "the mode decides")
		assert.Equal(t, DefaultPageSize, c.withDefaults().PageSize, "development mode pages as production does")
		assert.Equal(t, slog.LevelInfo, c.LogLevel)
		assert.Equal(t, SeedAuto, c.Seed)
		assert.True(t, c.Development())
		c.Issuer, c.JWKSURL = "https://a.example", "https://a.example/k"
		assert.Equal(t, DefaultPageSize, c.withDefaults().PageSize, "outside development mode: the kit's 50")
	})
	t.Run("env over default, flag over env", func(t *testing.T) {
		c, _, err := ParseFlags([]string{"-page-size", "7", "-allowed-origins", "https://a.example, https://b.example"}, env(map[string]string{
			"MCPKIT_PAGE_SIZE": "9", "MCPKIT_ADDR": "127.0.0.1:9999", "MCPKIT_LOG_LEVEL": "debug",
			"MCPKIT_ALLOW_PLAIN_JWT_TYPE": "true", "MCPKIT_SEED": "false", "MCPKIT_ALLOWED_ORIGINS": "https://c.example",
			"MCPKIT_INTROSPECTION_CLIENT_SECRET": "s3cret", "MCPKIT_SHUTDOWN_TIMEOUT": "3s",
		}), io.Discard)
		require.NoError(t, err)
		assert.Equal(t, 7, c.PageSize, "flag wins")
		assert.Equal(t, "127.0.0.1:9999", c.Addr, "env wins over default")
		assert.Equal(t, slog.LevelDebug, c.LogLevel)
		assert.True(t, c.AllowPlainJWTType)
		assert.Equal(t, SeedNever, c.Seed)
		assert.Equal(t, []string{"https://a.example", "https://b.example"}, c.AllowedOrigins)
		assert.Equal(t, "s3cret", c.IntrospectionClientSecret)
		assert.Equal(t, 3*time.Second, c.ShutdownTimeout)
	})
	t.Run("interleaved positional arguments", func(t *testing.T) {
		c, pos, err := ParseFlags([]string{"token", "alice", "-addr", "127.0.0.1:9000"}, env(nil), io.Discard)
		require.NoError(t, err)
		assert.Equal(t, []string{"token", "alice"}, pos)
		assert.Equal(t, "127.0.0.1:9000", c.Addr)
	})
	t.Run("no secret flag", func(t *testing.T) {
		_, _, err := ParseFlags([]string{"-introspection-client-secret", "x"}, env(nil), io.Discard)
		assert.Error(t, err)
	})
	t.Run("help", func(t *testing.T) {
		_, _, err := ParseFlags([]string{"-h"}, env(nil), io.Discard)
		assert.ErrorIs(t, err, flag.ErrHelp)
	})
	for _, tc := range []struct{ name, env, flag string }{
		{"bad env page size", "MCPKIT_PAGE_SIZE", "page-size"},
		{"bad env bool", "MCPKIT_ALLOW_PLAIN_JWT_TYPE", "allow-plain-jwt-type"},
		{"bad env seed", "MCPKIT_SEED", "seed"},
		{"bad env log level", "MCPKIT_LOG_LEVEL", "log-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseFlags(nil, env(map[string]string{tc.env: "nonsense"}), io.Discard)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.flag, ce.Flag)
			assert.Contains(t, ce.Error(), tc.env)
		})
	}
	for _, args := range [][]string{{"-page-size", "0"}, {"-page-size", "101"}, {"-seed", "maybe"}, {"-unknown"}} {
		_, _, err := ParseFlags(args, env(nil), io.Discard)
		assert.Error(t, err, args)
		assert.False(t, errors.Is(err, flag.ErrHelp))
	}
}

func TestEnvName(t *testing.T) {
	assert.Equal(t, "MCPKIT_ALLOW_PLAIN_JWT_TYPE", EnvName("allow-plain-jwt-type"))
	assert.Equal(t, "MCPKIT_DB", EnvName("db"))
}

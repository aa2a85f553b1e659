package app

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -h shows both forms of -redis: one Redis, and Redis Cluster's.
func TestRedisFlagHelpShowsTheClusterForm(t *testing.T) {
	var out strings.Builder
	_, _, err := ParseFlags([]string{"-h"}, func(string) string { return "" }, &out)
	require.True(t, errors.Is(err, flag.ErrHelp), "%v", err)
	assert.Contains(t, out.String(), "?addr=HOST2:PORT&addr=HOST3:PORT")
}

// A wrong password is a configuration error that says so, not "not
// reachable at start".
func TestRedisWrongPasswordAtStart(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	require.NoError(t, rs.client(t).ConfigSet(ctx, "requirepass", "secret").Err())
	for _, u := range []string{strings.Replace(rs.url(), "redis://", "redis://:s3cr3tguess@", 1), rs.url()} {
		_, err := New(ctx, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Redis: u, Logger: slog.New(slog.DiscardHandler)})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "redis", ce.Flag)
		assert.Contains(t, ce.Problem, "refused the credentials")
		assert.NotContains(t, ce.Problem, "s3cr3tguess", "never the password")
	}
}

// An ACL user without a permission the stores need: the error names it.
func TestRedisMissingPermissionAtStart(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	require.NoError(t, rs.client(t).Do(ctx, "ACL", "SETUSER", "kit", "on", ">pw", "~mcpkit:*", "+@read", "+@write", "+ping", "+hello", "+eval", "+evalsha").Err())
	u := strings.Replace(rs.url(), "redis://", "redis://kit:pw@", 1)
	_, err := New(ctx, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Redis: u, Logger: slog.New(slog.DiscardHandler)})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Problem, "may not run info")
}

// A Redis out of reach at start is checked again until it answers, and
// the log says when it does.
func TestRedisDownAtStartIsCheckedAgain(t *testing.T) {
	rs := startRedis(t)
	rs.stop()
	idp := startIdentityProvider(t, prodResource)
	s := start(t, func(c *Config) { jwtConfig(idp)(c); c.Redis = rs.url() })
	s.logs.waitFor(t, "redis: not reachable at start")
	rs.start(t)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logs.String(), "redis: reachable; the start-up check passed") {
		require.True(t, time.Now().Before(deadline), "never checked again")
		time.Sleep(20 * time.Millisecond)
	}
}

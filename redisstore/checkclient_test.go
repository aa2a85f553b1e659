package redisstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// limitedUser makes an ACL user "kit" (password "pw") on node with the
// keys' commands and scripts, plus more.
func limitedUser(t *testing.T, c *redis.Client, more ...string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", "kit", "reset", "on", ">pw", "~mcpkit:*", "+@read", "+@write", "+ping", "+hello", "+eval", "+evalsha"}
	for _, m := range more {
		args = append(args, m)
	}
	require.NoError(t, c.Do(context.Background(), args...).Err())
}

func userClient(addr, user, pass string) *redis.Client {
	o := redistest.ClientOptions(addr)
	o.Username, o.Password = user, pass
	return redis.NewClient(o)
}

// CheckClient names each start-up misconfiguration: a wrong password, an
// ACL user without a command the stores need (by name), a cluster client
// of a plain Redis; an unreachable Redis is the client's error.
func TestCheckClient(t *testing.T) {
	srv, client := startRedis(t)
	ctx := context.Background()
	require.NoError(t, redisstore.CheckClient(ctx, client))

	limitedUser(t, client, "+info")
	c := userClient(srv.Addr(), "kit", "pw")
	defer c.Close()
	assert.NoError(t, redisstore.CheckClient(ctx, c), "the keys' commands, scripts and INFO are enough outside a cluster")

	for name, pass := range map[string]string{"wrong password": "nope", "no password": ""} {
		c := userClient(srv.Addr(), "kit", pass)
		if pass == "" {
			c = userClient(srv.Addr(), "", "")
			require.NoError(t, client.ConfigSet(ctx, "requirepass", "secret").Err())
		}
		err := redisstore.CheckClient(ctx, c)
		assert.ErrorIs(t, err, redisstore.ErrAuth, name)
		_ = c.Close()
		if pass == "" {
			auth := userClient(srv.Addr(), "default", "secret")
			require.NoError(t, auth.ConfigSet(ctx, "requirepass", "").Err())
			_ = auth.Close()
		}
	}

	limitedUser(t, client) // no +info
	c2 := userClient(srv.Addr(), "kit", "pw")
	defer c2.Close()
	var pe *redisstore.PermissionError
	require.ErrorAs(t, redisstore.CheckClient(ctx, c2), &pe)
	assert.Equal(t, "info", pe.Command)
	assert.Contains(t, pe.Error(), "+info")

	cc := redis.NewClusterClient(redisstore.ClusterOptions(srv.Addr()))
	defer cc.Close()
	assert.ErrorIs(t, redisstore.CheckClient(ctx, cc), redisstore.ErrNotACluster)

	srv.Stop()
	err := redisstore.CheckClient(ctx, client)
	require.Error(t, err)
	assert.False(t, errors.Is(err, redisstore.ErrAuth) || errors.As(err, &pe), "unreachable: %v", err)
}

// On a cluster: a single-node client of a node is refused even when its
// user may not run INFO or CLUSTER (HELLO tells); a cluster client whose
// user may not run CLUSTER NODES is told so.
func testCheckClientOnCluster(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	for _, n := range c.Nodes() {
		if n.Running() {
			nc := n.Client(t)
			limitedUser(t, nc, "+info", "+cluster|myid")
		}
	}
	m := c.Masters[1]
	single := userClient(m.Addr(), "kit", "pw")
	defer single.Close()
	assert.ErrorIs(t, redisstore.CheckClient(ctx, single), redisstore.ErrClusterNode)
	bare := userClient(m.Addr(), "kit", "pw")
	defer bare.Close()
	limitedUser(t, m.Client(t)) // neither INFO nor CLUSTER
	assert.ErrorIs(t, redisstore.CheckClient(ctx, bare), redisstore.ErrClusterNode, "told by HELLO")
	limitedUser(t, m.Client(t), "-hello", "+info") // no HELLO, but INFO
	noHello := userClient(m.Addr(), "kit", "pw")
	defer noHello.Close()
	assert.ErrorIs(t, redisstore.CheckClient(ctx, noHello), redisstore.ErrClusterNode, "told by INFO")

	o := redisstore.ClusterOptions(c.Addrs()...)
	o.Username, o.Password = "kit", "pw"
	for _, n := range c.Nodes() {
		if n.Running() {
			limitedUser(t, n.Client(t), "+info", "+cluster|myid", "+cluster|slots", "+cluster|shards")
		}
	}
	cc := redis.NewClusterClient(o)
	defer cc.Close()
	var pe *redisstore.PermissionError
	require.ErrorAs(t, redisstore.CheckClient(ctx, cc), &pe)
	assert.Equal(t, "cluster|nodes", pe.Command)
	for _, n := range c.Nodes() {
		if n.Running() {
			require.NoError(t, n.Client(t).Do(ctx, "ACL", "DELUSER", "kit").Err())
		}
	}
}

// A prefix whose '{' opens no hash tag would spread one call's keys over
// several slots (CROSSSLOT on a cluster for every Remember and session
// call): refused by the constructors. A hash tag of its own is kept.
func TestPrefixWithABrokenHashTag(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, p := range []string{"app{}:", "app{:", "{"} {
		_, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{Prefix: p})
		assert.Error(t, err, "replay %q", p)
		_, err = redisstore.NewSessionStore(client, redisstore.SessionOptions{Prefix: p})
		assert.Error(t, err, "sessions %q", p)
	}
	for _, p := range []string{"{app}:", "app:", "a{b}c{}:"} {
		_, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{Prefix: p})
		assert.NoError(t, err, "replay %q", p)
		_, err = redisstore.NewSessionStore(client, redisstore.SessionOptions{Prefix: p})
		assert.NoError(t, err, "sessions %q", p)
	}
}

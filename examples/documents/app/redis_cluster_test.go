package app

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -redis takes one Redis or go-redis's Redis Cluster form (addr
// parameters), and refuses at start-up what it cannot honour: a comma
// list of hosts (go-redis took it for one impossible address, and the
// server ran as in an outage), Sentinel's form, a database on a cluster.
func TestRedisURLForms(t *testing.T) {
	for raw, cluster := range map[string]bool{
		"redis://127.0.0.1:6379/0":                                   false,
		"rediss://:pw@redis.example:6380":                            false,
		"redis://h1:7000?addr=h2:7001":                               true,
		"redis://:pw@h1:7000?addr=h2:7001&addr=h3:7002&pool_size=20": true,
	} {
		require.Empty(t, checkRedisURL(raw), raw)
		s, err := newSharedState(raw)
		require.NoError(t, err, raw)
		cc, isCluster := s.client.(*redis.ClusterClient)
		assert.Equal(t, cluster, isCluster, raw)
		if isCluster {
			o := cc.Options()
			assert.Equal(t, -1, o.MaxRetries, "no call run twice")
			assert.Equal(t, redisIOTimeout, o.ReadTimeout)
			assert.Less(t, o.ClusterStateReloadInterval.Seconds(), 2.0, "a promoted replica is used within a second or so")
		}
		require.NoError(t, s.close())
	}
	for raw, want := range map[string]string{
		"redis://h1:7000,h2:7001,h3:7002":       "commas",
		"redis://h1:7000?addr=h2:7001,h3:7002":  "commas",
		"redis://h1:26379?master_name=mymaster": "Sentinel",
		"redis://h1:7000/2?addr=h2:7001":        "database",
		"127.0.0.1:6379":                        "must be a URL",
		"http://127.0.0.1:6379":                 "must be a URL",
		"redis://h1:7000?addr=h2:7001&bogus=1":  "Cluster URL",
	} {
		assert.Contains(t, checkRedisURL(raw), want, raw)
		var ce *ConfigError
		require.ErrorAs(t, (&Config{Redis: raw}).Validate(), &ce, raw)
		assert.Equal(t, "redis", ce.Flag)
	}
	assert.Equal(t, "redis://h1:7000 (cluster, 3 seed nodes)", describeRedis("redis://:pw@h1:7000?addr=h2:7001&addr=h3:7002"), "no password in logs")
}

// Pointed with a single-node URL at a node of a Redis Cluster, the server
// refuses to start (it would serve a third of the keys and fail the
// others) and says what to give instead.
func TestRedisRefusesOneNodeOfACluster(t *testing.T) {
	rs := startRedisWith(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	info, err := rs.client(t).Info(context.Background(), "cluster").Result()
	require.NoError(t, err)
	require.Contains(t, info, "cluster_enabled:1")
	_, err = New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Redis: rs.url(), Logger: slog.New(slog.DiscardHandler)})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "redis", ce.Flag)
	assert.Contains(t, ce.Problem, "one node of a Redis Cluster")
	assert.Contains(t, ce.Problem, "addr=")
}

// A cluster URL of a Redis that is not a cluster: refused at start-up.
func TestRedisClusterURLOfOneRedis(t *testing.T) {
	rs := startRedis(t)
	raw := "redis://127.0.0.1:" + strconv.Itoa(rs.port) + "?addr=127.0.0.1:" + strconv.Itoa(rs.port)
	_, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Redis: raw, Logger: slog.New(slog.DiscardHandler)})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Problem, "not a cluster")
}

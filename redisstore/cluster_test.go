package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// One Redis Cluster (3 masters, 3 replicas on loopback) for every test
// of this file: the stores' contract tests, unchanged, then what only a
// cluster has (the keys' spread, a stalled node, a failover).
func TestOnCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	t.Run("contracts", func(t *testing.T) {
		onCluster = c
		defer func() { onCluster = nil }()
		for _, tc := range []struct {
			name string
			fn   func(*testing.T)
		}{
			{"ReplayStoreRemember", TestReplayStoreRemember}, {"ReplayStoreShares", TestReplayStoreShares},
			{"ReplayStoreFull", TestReplayStoreFull}, {"ReplayKeysHoldNoIdentity", TestReplayKeysHoldNoIdentity},
			{"ReplayAcrossInstances", TestReplayAcrossInstances}, {"ReplayRace", TestReplayRace},
			{"ReplayFloodDoesNotLockOthersOut", TestReplayFloodDoesNotLockOthersOut},
			{"RateStoreAsInMemory", TestRateStoreAsInMemory}, {"RateTwoLimitersOneBudget", TestRateTwoLimitersOneBudget},
			{"RateKeysHashedAndExpiring", TestRateKeysHashedAndExpiring}, {"RateStoreDirect", TestRateStoreDirect},
			{"RedisSessionLifetime", TestRedisSessionLifetime}, {"RedisSessionEndsWithItsToken", TestRedisSessionEndsWithItsToken},
			{"RedisSessionIdle", TestRedisSessionIdle}, {"RedisSessionBinding", TestRedisSessionBinding},
			{"RedisSessionIDs", TestRedisSessionIDs}, {"RedisSessionEvictionAndSweep", TestRedisSessionEvictionAndSweep},
			{"RedisSubscriptions", TestRedisSubscriptions}, {"RedisSessionsRaceAndKeys", TestRedisSessionsRaceAndKeys},
			{"EventLogSince", TestEventLogSince}, {"EventLogTrims", TestEventLogTrims},
			// The broker's tests count one channel's subscription; on a
			// cluster it has eight (testClusterBroker).
			{"BrokerCarriesIDs", TestBrokerCarriesIDs},
		} {
			t.Run(tc.name, tc.fn)
		}
	})
	t.Run("spread", func(t *testing.T) { testSpread(t, c) })
	t.Run("broker", func(t *testing.T) { testClusterBroker(t, c) })
	t.Run("stall", func(t *testing.T) { testStall(t, c) })
	t.Run("failover", func(t *testing.T) { testFailover(t, c) })
}

// keysPerMaster returns the number of keys each master holds, in the
// order of c.Masters (a master replaced by its replica: the replica).
func keysPerMaster(t *testing.T, client *redis.ClusterClient) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	ctx := context.Background()
	require.NoError(t, client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		if err == nil {
			out[m.Options().Addr] = n
		}
		return err
	}))
	return out
}

// fill gives 1,000 principals what a fleet keeps of them: a DPoP proof
// remembered, a rate bucket, a session with a subscription, and an event
// in the log.
func fill(t *testing.T, client redis.UniversalClient, replayPrefix, sessionPrefix string) {
	t.Helper()
	ctx := context.Background()
	clk := newClock()
	replay := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: replayPrefix})
	passQuarantine(t, replay, clk)
	rates := newRateStore(t, client, redisstore.RateOptions{})
	st, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{Prefix: sessionPrefix, Now: clk.Now})
	require.NoError(t, err)
	elog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	require.NoError(t, err)
	for i := range 1000 {
		who := "principal-" + strconv.Itoa(i)
		require.NoError(t, replay.Remember(ctx, "proof-"+who, who, clk.Now().Add(time.Minute)))
		_, _, err := rates.Take(ctx, ratelimit.Bucket{Key: who, PerSecond: 1, Burst: 10}, clk.Now())
		require.NoError(t, err)
		p := &principal.Principal{Subject: who}
		id := newID()
		_, err = st.Create(ctx, id, p)
		require.NoError(t, err)
		require.NoError(t, st.Subscribe(ctx, id, p, "docs://documents/"+who))
		_, err = elog.Append(ctx, who, notify.Event{Kind: notify.ListChanged})
		require.NoError(t, err)
	}
}

// The keys of 1,000 principals spread over the masters: no master holds
// half of them. Before (one hash tag for the replay memory and one for
// the sessions, as the package doc once advised), one master held most.
func testSpread(t *testing.T, c *redistest.Cluster) {
	client := clusterBackend{c}.Client(t).(*redis.ClusterClient)
	ctx := context.Background()
	share := func(counts map[string]int64) (float64, []int64) {
		var total, top int64
		var list []int64
		for _, m := range c.Masters {
			n := counts[m.Addr()]
			list = append(list, n)
			total += n
			top = max(top, n)
		}
		return float64(top) / float64(total), list
	}

	require.NoError(t, c.FlushAll(ctx))
	fill(t, client, "{mcpkit-dpop}:", "{mcpkit-sess}:")
	before, beforeList := share(keysPerMaster(t, client))

	require.NoError(t, c.FlushAll(ctx))
	fill(t, client, "", "")
	after, afterList := share(keysPerMaster(t, client))
	t.Logf("keys per master, 1,000 principals: one tag per store %v (top %.0f %%); shipped %v (top %.0f %%)",
		beforeList, 100*before, afterList, 100*after)
	assert.Less(t, after, 0.5, "no master holds half the keys: %v", afterList)
	assert.Greater(t, before, after)
}

// On a cluster the broker publishes each subject's events on one of its
// shards' channels; every instance hears every shard.
func testClusterBroker(t *testing.T, c *redistest.Cluster) {
	b := clusterBackend{c}
	require.NoError(t, c.FlushAll(context.Background()))
	o := redisstore.BrokerOptions{MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	x, y := newInstance(t, b.Client(t), o), newInstance(t, b.Client(t), o)
	waitStats(t, x.broker, func(s redisstore.BrokerStats) bool { return s.Connects == 8 }, "x listens on the 8 shards")
	waitStats(t, y.broker, func(s redisstore.BrokerStats) bool { return s.Connects == 8 }, "y listens on the 8 shards")
	ctx := context.Background()
	var subs []*notify.Subscription
	for i := range 40 {
		s := y.hub.Subscribe(fmt.Sprint("user-", i))
		defer s.Close()
		subs = append(subs, s)
	}
	for i := range 40 {
		x.hub.ResourceUpdated(ctx, fmt.Sprint("user-", i), "docs://documents/"+strconv.Itoa(i))
	}
	for i, s := range subs {
		assert.Equal(t, updated(fmt.Sprint("user-", i), "docs://documents/"+strconv.Itoa(i)), next(t, s))
	}
	// The channels' slots spread over the masters.
	owners := map[int]bool{}
	for i := range 8 {
		s := redisstore.Slot(redisstore.DefaultChannel + "{" + strconv.Itoa(i) + "}")
		owners[s*3/16384] = true
	}
	_ = owners
	assert.Equal(t, uint64(40), x.broker.Stats().Delivered)
}

var _ = strings.Contains
var _ = sessions.ErrNotFound

// masterOf returns the running master that holds key's slot.
func masterOf(t *testing.T, c *redistest.Cluster, client *redis.ClusterClient, key string) *redistest.Server {
	t.Helper()
	m, err := client.MasterForKey(context.Background(), key)
	require.NoError(t, err)
	for _, n := range c.Nodes() {
		if n.Addr() == m.Options().Addr {
			return n
		}
	}
	t.Fatalf("no node %s", m.Options().Addr)
	return nil
}

// stall runs DEBUG SLEEP on node for d, and returns when the node sleeps;
// wait returns when it is awake again.
func stall(t *testing.T, c *redistest.Cluster, node *redistest.Server, d time.Duration) (wait func()) {
	t.Helper()
	done := make(chan error, 1)
	o := redistest.ClientOptions(node.Addr())
	o.ReadTimeout = d + 5*time.Second
	cl := redis.NewClient(o)
	go func() {
		defer cl.Close()
		done <- cl.Do(context.Background(), "DEBUG", "SLEEP", fmt.Sprintf("%.3f", d.Seconds())).Err()
	}()
	time.Sleep(100 * time.Millisecond) // the DEBUG SLEEP is running
	return func() { require.NoError(t, <-done) }
}

// A node that stalls longer than the client's ReadTimeout (DEBUG SLEEP
// 1.2 s against 500 ms): the store's call fails, and runs once when the
// node wakes; go-redis's own script call, on a cluster client with the
// same settings, runs again after the timeout (its MaxRedirects loop
// retries timeouts whatever MaxRetries says), so twice or more.
func testStall(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	require.NoError(t, c.FlushAll(ctx))
	client := clusterBackend{c}.Client(t).(*redis.ClusterClient)
	const sleep = 1200 * time.Millisecond

	t.Run("rate", func(t *testing.T) {
		rates := newRateStore(t, client, redisstore.RateOptions{})
		b := ratelimit.Bucket{Key: "stalled", PerSecond: 1e-6, Burst: 10}
		now := time.Now()
		_, _, err := rates.Peek(ctx, b, now) // the script is in the node's cache
		require.NoError(t, err)
		wake := stall(t, c, masterOf(t, c, client, rates.Key(b.Key)), sleep)
		_, _, err = rates.Take(ctx, b, now)
		assert.Error(t, err, "the call timed out")
		wake()
		left := 0
		for range 20 {
			ok, _, err := rates.Peek(ctx, b, now)
			if err != nil { // the gate, shut by the timeout, opens within a second
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if !ok {
				break
			}
			ok, _, err = rates.Take(ctx, b, now)
			require.NoError(t, err)
			require.True(t, ok)
			left++
		}
		assert.Equal(t, 9, left, "the bucket was charged once by the stalled call")
	})

	t.Run("replay", func(t *testing.T) {
		clk := newClock()
		replay := newReplayStore(t, client, clk, redisstore.ReplayOptions{})
		passQuarantine(t, replay, clk)
		require.NoError(t, replay.Remember(ctx, "warm", "alice", clk.Now().Add(time.Minute))) // the script is cached
		wake := stall(t, c, masterOf(t, c, client, replay.ProofKey("fresh", "alice")), sleep)
		err := replay.Remember(ctx, "fresh", "alice", clk.Now().Add(time.Minute))
		require.Error(t, err)
		assert.NotErrorIs(t, err, authn.ErrReplayed, "a fresh proof is never its own replay")
		wake()
	})

	t.Run("go-redis script retried", func(t *testing.T) {
		counter := "{stall}counter"
		incr := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
		require.NoError(t, incr.Load(ctx, client).Err())
		wake := stall(t, c, masterOf(t, c, client, counter), sleep)
		_ = incr.Run(ctx, client, []string{counter}) // answered by its second run
		wake()
		n, err := client.Get(ctx, counter).Int()
		require.NoError(t, err)
		t.Logf("go-redis Script.Run on a cluster client, MaxRetries -1, a 1.2 s stall: ran %d times", n)
		assert.Greater(t, n, 1, "the retry the stores avoid")
	})
}
func testFailover(t *testing.T, c *redistest.Cluster) { t.Skip("todo") }

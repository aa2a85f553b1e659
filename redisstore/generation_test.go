package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// rememberAll remembers proofs name-0 … name-(n-1), each of a caller of
// its own (spread over the families), and returns how many were
// accepted (nil). A call that Redis did not answer (a connection broken
// by a restart, a gate shut after it) is tried again, for up to 10 s.
//
// twice says that the proofs were accepted before: then only an
// acceptance counts (a replay after a try that timed out is the store's
// answer), else a replay after such a try counts too (the timed-out try
// had remembered the proof).
func rememberAll(t testing.TB, s *redisstore.ReplayStore, clk *fakeclock.Clock, name string, n int, twice bool) int {
	t.Helper()
	ok := 0
	for i := range n {
		deadline := time.Now().Add(10 * time.Second)
		for tries := 0; ; tries++ {
			err := s.Remember(context.Background(), name+"-"+strconv.Itoa(i), "caller-"+strconv.Itoa(i), clk.Now().Add(40*time.Second))
			var ue *dpop.UnavailableError
			if err == nil {
				ok++
			}
			if err == nil || errors.Is(err, dpop.ErrReplayed) || errors.As(err, &ue) {
				if tries > 0 && errors.Is(err, dpop.ErrReplayed) && !twice {
					ok++ // the try that timed out had remembered it
				}
				break
			}
			require.True(t, time.Now().Before(deadline), "no answer: %v", err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	return ok
}

// A Redis that comes back from a snapshot older than the last proofs it
// remembered (SAVE, 200 more proofs, kill -9, restart from the dump)
// has forgotten them while its markers came back: a replay store must
// not accept them again (200 of 200 were before the markers carried the
// run id). It refuses every proof for a period instead, as for a Redis
// found empty.
func TestReplayAfterAnOlderSnapshot(t *testing.T) {
	srv, client := startRedis(t)
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	require.NoError(t, setMarkers(client, s)) // a Redis that lost nothing yet
	ctx := context.Background()
	require.Equal(t, 50, rememberAll(t, s, clk, "before", 50, false))
	require.NoError(t, client.Save(ctx).Err())
	require.Equal(t, 200, rememberAll(t, s, clk, "after", 200, false))
	srv.Stop()
	srv.Restart(t)
	waitReachable(t, client)

	twice := rememberAll(t, s, clk, "after", 200, true)
	t.Logf("proofs accepted twice after a restart from an older snapshot: %d of 200", twice)
	assert.Zero(t, twice)
	var ue *dpop.UnavailableError
	require.ErrorAs(t, s.Remember(ctx, "fresh", "caller-1", clk.Now().Add(40*time.Second)), &ue, "in quarantine")
	assert.Equal(t, period, ue.RetryAfter)
	clk.Advance(period)
	require.NoError(t, s.Remember(ctx, "fresh", "caller-1", clk.Now().Add(40*time.Second)), "back after a period")
	assert.ErrorIs(t, s.Remember(ctx, "fresh", "caller-1", clk.Now().Add(40*time.Second)), dpop.ErrReplayed)
}

// A replica promoted before it had every write of its master (here
// detached first, then the master remembers more) is another Redis
// process: the proofs it never received are not accepted again.
func TestReplayAfterAnUnsyncedPromotion(t *testing.T) {
	master, client := startRedis(t)
	replica, rclient := startRedis(t)
	clk := newClock()
	ctx := context.Background()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	require.NoError(t, setMarkers(client, s)) // a Redis that lost nothing yet
	require.Equal(t, 50, rememberAll(t, s, clk, "before", 50, false))
	require.NoError(t, client.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err())
	host, port, _ := strings.Cut(master.Addr(), ":")
	require.NoError(t, rclient.ReplicaOf(ctx, host, port).Err())
	require.Eventually(t, func() bool {
		info, err := rclient.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, rclient.ReplicaOf(ctx, "NO", "ONE").Err()) // promoted, before the next writes
	require.Equal(t, 200, rememberAll(t, s, clk, "after", 200, false))

	promoted := newReplayStore(t, replica.Client(t), clk, redisstore.ReplayOptions{Prefix: "t:"})
	twice := rememberAll(t, promoted, clk, "after", 200, true)
	t.Logf("proofs accepted twice after an unsynced promotion: %d of 200", twice)
	assert.Zero(t, twice)
}

// A Redis restarted empty or flushed holds no marker: the same
// quarantine.
func TestReplayAfterEmptyRestartAndFlush(t *testing.T) {
	for _, how := range []string{"restart empty", "flushall"} {
		t.Run(how, func(t *testing.T) {
			srv, client := startRedis(t)
			clk := newClock()
			s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
			require.NoError(t, setMarkers(client, s)) // a Redis that lost nothing yet
			require.Equal(t, 100, rememberAll(t, s, clk, "p", 100, false))
			if how == "flushall" {
				require.NoError(t, client.FlushAll(context.Background()).Err())
			} else {
				srv.Stop()
				srv.Restart(t)
				waitReachable(t, client)
			}
			assert.Zero(t, rememberAll(t, s, clk, "p", 100, true))
		})
	}
}

// waitReachable waits until client reaches its Redis again, and the
// stores' outage gates (shut by a failure seen meanwhile) have had time
// to open.
func waitReachable(t testing.TB, client redis.UniversalClient) {
	t.Helper()
	require.Eventually(t, func() bool { return client.Ping(context.Background()).Err() == nil }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(1100 * time.Millisecond) // maxGateWait
}

// A session ended after the snapshot a Redis comes back from is not
// brought back by it: sessions written by another Redis process are
// gone (as after an empty restart), and so are their subscriptions.
func TestSessionNotResurrectedByAnOlderSnapshot(t *testing.T) {
	srv, client := startRedis(t)
	clk := newClock()
	ctx := context.Background()
	st := newSessionStore(t, client, clk, sessions.Limits{})
	alice := &principal.Principal{Subject: "alice"}
	ended, kept := create(t, st, alice), create(t, st, alice)
	require.NoError(t, st.Subscribe(ctx, ended, alice, "file:///a"))
	require.NoError(t, client.Save(ctx).Err())
	require.NoError(t, st.End(ctx, ended, alice))
	srv.Stop()
	srv.Restart(t)
	waitReachable(t, client)
	require.Equal(t, int64(1), client.Exists(ctx, st.SessionKey("s", ended, alice)).Val(), "the snapshot holds the ended session")

	assert.False(t, alive(st, ended, alice), "an ended session stays ended")
	other := newSessionStore(t, srv.Client(t), clk, sessions.Limits{}) // another instance, which never saw it
	assert.False(t, alive(other, ended, alice))
	assert.False(t, alive(other, kept, alice), "every session of the old process is gone, as after an empty restart")
	ok, err := other.Subscribed(ctx, ended, "file:///a")
	require.NoError(t, err)
	assert.False(t, ok)
	uris, err := other.Subscriptions(ctx, ended)
	require.NoError(t, err)
	assert.Empty(t, uris)
	// New sessions work, and the stale ones do not count against the
	// principal's cap forever: they are dropped as ended ones.
	for range sessions.DefaultMaxSessionsPerPrincipal + 2 {
		create(t, st, alice)
	}
}

// An event log whose Redis comes back from an older snapshot has lost
// the events after it: a client holding an id from before the snapshot
// is not resumed over the gap, one holding a lost id is not either, and
// no id given before the restart is given again, even by a Redis whose
// clock is behind the last id.
func TestEventLogAcrossAnOlderSnapshot(t *testing.T) {
	srv, client := startRedis(t)
	ctx := context.Background()
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{Age: time.Hour})
	require.NoError(t, err)
	before := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	require.NoError(t, client.Save(ctx).Err())
	var lost []string
	for range 5 {
		lost = append(lost, appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged}))
	}
	// The lost ids as they would be given again by a Redis whose clock
	// stands where they were given: the next run's ids must differ.
	srv.Stop()
	srv.Restart(t)
	waitReachable(t, client)

	for _, id := range append([]string{before}, lost...) {
		_, ok, err := l.Since(ctx, "alice", id)
		require.NoError(t, err)
		assert.False(t, ok, "%s: resumed over a gap", id)
	}
	given := map[string]bool{before: true}
	for _, id := range lost {
		given[id] = true
	}
	for range 20 {
		id := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
		assert.False(t, given[id], "id %s given twice", id)
		given[id] = true
	}
	_, ok, err := l.Since(ctx, "alice", before)
	require.NoError(t, err)
	assert.False(t, ok, "the old stream is gone")
}

// Two runs of Redis never give the same id, even in the same ms: the
// sequence of each begins at a base of its own.
func TestEventLogIDsOfTwoRunsDiffer(t *testing.T) {
	srv, client := startRedis(t)
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{Age: time.Hour})
	require.NoError(t, err)
	first := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	srv.Stop()
	srv.Restart(t)
	waitReachable(t, client)
	second := appendOK(t, l, "alice", notify.Event{Kind: notify.ListChanged})
	_, s1, _ := strings.Cut(first, "-")
	_, s2, _ := strings.Cut(second, "-")
	assert.NotEqual(t, s1, s2, "each run's sequence has a base of its own")
}

// runGen returns the ident the stores write for the Redis process
// holding key (see runLua): its cluster node id's, run id's and
// replication id's first 12 digits.
func runGen(t testing.TB, client redis.UniversalClient, key string) string {
	t.Helper()
	ctx := context.Background()
	var c redis.Cmdable = client
	node := ""
	if cc, ok := client.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, key)
		require.NoError(t, err)
		c = m
		node, err = m.ClusterMyID(ctx).Result()
		require.NoError(t, err)
		node = node[:12]
	}
	info, err := c.Info(ctx, "server").Result()
	require.NoError(t, err)
	_, run, ok := strings.Cut(info, "run_id:")
	require.True(t, ok)
	info, err = c.Info(ctx, "replication").Result()
	require.NoError(t, err)
	_, repl, ok := strings.Cut(info, "master_replid:")
	require.True(t, ok)
	return node + ":" + run[:12] + ":" + repl[:12]
}

// A master of a cluster restarted from a snapshot older than its last
// writes (SAVE, more proofs, kill -9, restarted by a supervisor faster
// than cluster-node-timeout, so no replica takes over): its families'
// proofs are not accepted twice, and its ended sessions stay ended.
func testOlderSnapshot(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	require.NoError(t, c.FlushAll(ctx))
	client := redis.NewClusterClient(redisstore.ClusterOptions(c.Addrs()...))
	t.Cleanup(func() { _ = client.Close() })
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	require.NoError(t, setMarkers(client, s)) // a Redis that lost nothing yet
	st := newSessionStore(t, client, clk, sessions.Limits{})
	require.Equal(t, 300, rememberAll(t, s, clk, "before", 300, false))
	victim := masterOf(t, c, client, s.ProofKey("x", "caller-0"))
	var alice *principal.Principal
	for i := 0; alice == nil; i++ {
		p := &principal.Principal{Subject: "p" + strconv.Itoa(i)}
		if masterOf(t, c, client, st.SessionKey("s", "x", p)) == victim {
			alice = p
		}
	}
	ended := create(t, st, alice)
	for _, m := range c.Masters {
		if m.Running() {
			_, err := c.Do(ctx, m, "SAVE")
			require.NoError(t, err)
		}
	}
	for _, n := range c.Nodes() {
		if n.Running() {
			_, _ = c.Do(ctx, n, "SAVE")
		}
	}
	require.NoError(t, st.End(ctx, ended, alice))
	require.Equal(t, 300, rememberAll(t, s, clk, "after", 300, false))
	onVictim := 0
	for i := range 300 {
		if masterOf(t, c, client, s.ProofKey("after-"+strconv.Itoa(i), "caller-"+strconv.Itoa(i))) == victim {
			onVictim++
		}
	}
	victim.Stop()
	victim.Restart(t)
	require.Eventually(t, func() bool {
		role, err := c.Do(ctx, victim, "ROLE")
		return err == nil && role == "master"
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(1100 * time.Millisecond) // the gates open

	twice := rememberAll(t, s, clk, "after", 300, true)
	t.Logf("cluster: proofs accepted twice after a master's restart from an older snapshot: %d of the %d it held (300 in all)", twice, onVictim)
	assert.Zero(t, twice)
	assert.False(t, alive(st, ended, alice), "an ended session stays ended")
	require.NoError(t, c.WaitHealthy(ctx))
}

// Markers set to "0" (a Redis known to have lost nothing) carry the
// Redis process's ident after the store's first proof, in every family
// (arming): a replica promoted later cannot adopt them.
func TestReplayMarkersTakeTheIdent(t *testing.T) {
	_, client := startRedis(t)
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	require.NoError(t, setMarkers(client, s))
	require.Equal(t, 1, rememberAll(t, s, clk, "first", 1, false))
	ident := runGen(t, client, s.Markers()[0])
	for _, m := range s.Markers() {
		v, err := client.Get(context.Background(), m).Result()
		require.NoError(t, err)
		assert.Equal(t, "0:"+ident, v, m)
	}
}

// A manual failover (CLUSTER FAILOVER on a replica in sync, as an
// operator moves a master) loses nothing: the promoted replica's history
// continues its master's, which the old master proves by following it
// without a full resync (see runLua). So the stores trust what it holds:
// the proofs remembered before are still replays, new proofs are
// accepted (no quarantine), a session lives on; and again after failing
// back (two links of history). Before the stores could vouch for such a
// replica, every family of the shard began a quarantine (new proofs
// refused for 126 s) and its sessions were forgotten.
func testManualFailover(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	require.NoError(t, c.FlushAll(ctx))
	client := redis.NewClusterClient(redisstore.ClusterOptions(c.Addrs()...))
	t.Cleanup(func() { _ = client.Close() })
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	require.NoError(t, setMarkers(client, s))
	st := newSessionStore(t, client, clk, sessions.Limits{})
	require.Equal(t, 300, rememberAll(t, s, clk, "before", 300, false))
	victim := masterOf(t, c, client, s.ProofKey("x", "caller-0"))
	var alice *principal.Principal
	for i := 0; alice == nil; i++ {
		p := &principal.Principal{Subject: "p" + strconv.Itoa(i)}
		if masterOf(t, c, client, st.SessionKey("s", "x", p)) == victim {
			alice = p
		}
	}
	session := create(t, st, alice)
	failover := func(from *redistest.Server) *redistest.Server {
		t.Helper()
		var replica *redistest.Server
		require.Eventually(t, func() bool {
			for _, n := range c.Nodes() {
				if !n.Running() {
					continue
				}
				info, err := c.Do(ctx, n, "INFO", "replication")
				if err == nil && strings.Contains(info, "master_port:"+strconv.Itoa(from.Port())+"\r") &&
					strings.Contains(info, "master_link_status:up") {
					replica = n
					return true
				}
			}
			return false
		}, 20*time.Second, 10*time.Millisecond, "no replica in sync")
		// A manual failover that times out (a master just demoted may not
		// answer it at once) is not retried by Redis: asked again.
		var asked time.Time
		require.Eventually(t, func() bool {
			info, err := c.Do(ctx, replica, "INFO", "replication")
			if err == nil && strings.Contains(info, "role:master") {
				return true
			}
			if time.Since(asked) > 3*time.Second {
				asked = time.Now()
				_, err := c.Do(ctx, replica, "CLUSTER", "FAILOVER")
				require.NoError(t, err)
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "not promoted")
		time.Sleep(200 * time.Millisecond) // the cluster client follows MOVED
		return replica
	}
	promoted := failover(victim)

	check := func(round string) {
		t.Helper()
		assert.Zero(t, rememberAll(t, s, clk, "before", 300, true), "%s: remembered proofs are replays", round)
		assert.Equal(t, 100, rememberAll(t, s, clk, round, 100, false), "%s: new proofs accepted", round)
		assert.True(t, alive(st, session, alice), "%s: the session lives on", round)
	}
	check("failover")
	require.Equal(t, victim, failover(promoted)) // fails back to the victim
	check("failback")
}

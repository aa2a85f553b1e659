package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
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
	// The subtests that kill or stall no node run with a node timeout of
	// 5 s: with 1 s, a node starved on a loaded machine was taken for
	// failed, and answered CLUSTERDOWN for seconds (seen once in a
	// session test, load 22).
	require.NoError(t, c.SetNodeTimeout(context.Background(), 5*time.Second))
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
			{"SessionPointerExpiresWithItsSession", TestSessionPointerExpiresWithItsSession},
			{"SessionMaxSessionsExact", TestSessionMaxSessionsExact}, {"SessionMaxSessionsConcurrent", TestSessionMaxSessionsConcurrent},
			{"SessionSeatLedgerLost", TestSessionSeatLedgerLost}, {"SessionSeatLedgerOffTheRequestPath", TestSessionSeatLedgerOffTheRequestPath},
			{"EventLogSince", TestEventLogSince}, {"EventLogSharedID", TestEventLogSharedID}, {"EventLogTrims", TestEventLogTrims},
			// The broker's tests count one channel's subscription; on a
			// cluster it has eight (testClusterBroker).
			{"BrokerCarriesIDs", TestBrokerCarriesIDs}, {"BrokerCatchesUpFromTheLog", TestBrokerCatchesUpFromTheLog},
			{"BrokerCatchesUpNewStreams", TestBrokerCatchesUpNewStreams},
		} {
			t.Run(tc.name, tc.fn)
		}
	})
	t.Run("spread", func(t *testing.T) { testSpread(t, c) })
	t.Run("broker", func(t *testing.T) { testClusterBroker(t, c) })
	require.NoError(t, c.SetNodeTimeout(context.Background(), redistest.ClusterNodeTimeout))
	t.Run("stall", func(t *testing.T) { testStall(t, c) })
	t.Run("migration", func(t *testing.T) { testMigration(t, c) })
	t.Run("failover", func(t *testing.T) { testFailover(t, c) })
	t.Run("older snapshot", func(t *testing.T) { testOlderSnapshot(t, c) })
	t.Run("manual failover", func(t *testing.T) { testManualFailover(t, c) })
	t.Run("check client", func(t *testing.T) { testCheckClientOnCluster(t, c) })
}

// keysPerMaster returns the number of keys each master holds, in the
// order of c.Masters (a master replaced by its replica: the replica).
func keysPerMaster(t *testing.T, client *redis.ClusterClient) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	var mu sync.Mutex
	ctx := context.Background()
	require.NoError(t, client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		mu.Lock()
		defer mu.Unlock()
		out[m.Options().Addr] = n
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
	var logs logbuf.Buffer
	o := redisstore.BrokerOptions{MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	x, y := newInstance(t, b.Client(t), o), newInstance(t, b.Client(t), o) // each listening on the 8 shards
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
	// The subjects' channels spread over the masters.
	owners := map[int]bool{}
	for i := range 40 {
		owners[redisstore.Slot(x.broker.ChannelOf(fmt.Sprint("user-", i)))*3/16384] = true
	}
	assert.Len(t, owners, 3, "every master carries some channels")
	assert.Equal(t, uint64(40), y.broker.Stats().Delivered)
	// Eight first subscriptions are no reconnection: nothing says
	// "listening again" at start (each channel after the first did).
	assert.NotContains(t, logs.String(), "listening again")
}

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
	return func() {
		require.NoError(t, <-done)
		// A stall longer than the cluster's node timeout may be failed
		// over like a dead master (more likely on a loaded machine): fail
		// back, so the next tests find c.Masters masters.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n, err := c.RestoreMasters(ctx)
		require.NoError(t, err)
		if n > 0 {
			t.Logf("the stalled master had been failed over: failed back")
		}
	}
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
		assert.NotErrorIs(t, err, dpop.ErrReplayed, "a fresh proof is never its own replay")
		wake()
	})

	// A session Create against a stalled master fails after one
	// ReadTimeout (500 ms): every call it makes is sent once (its reads
	// were a pipeline, which go-redis retried up to MaxRedirects times:
	// 3.6 s). Logged, not asserted (a timing); the calls are counted.
	t.Run("session create", func(t *testing.T) {
		clk := newClock()
		st := newSessionStore(t, client, clk, sessions.Limits{})
		p := &principal.Principal{Subject: "stalled"}
		create(t, st, p) // the scripts are cached
		node := masterOf(t, c, client, st.SessionKey("s", "x", p))
		h := &countCalls{addr: node.Addr()}
		client.AddHook(h)
		defer h.off.Store(true)
		wake := stall(t, c, node, sleep)
		start := time.Now()
		_, err := st.Create(ctx, newID(), p)
		took := time.Since(start)
		wake()
		require.Error(t, err)
		t.Logf("a session Create against a stalled master failed after %v", took.Round(10*time.Millisecond))
		assert.LessOrEqual(t, h.n.Load(), int32(1), "no call sent again after its timeout")
	})

	// Past the node timeout for sure: the replica takes over, and the
	// stall's end fails back (the tests after this one need c.Masters
	// masters).
	t.Run("longer than the node timeout", func(t *testing.T) {
		node := c.Masters[0]
		wake := stall(t, c, node, 4*c.NodeTimeout)
		wake()
		for _, m := range c.Masters {
			role, err := c.Do(ctx, m, "ROLE")
			require.NoError(t, err)
			assert.Equal(t, "master", role, m.Addr())
		}
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

// instanceSet is one instance's stores on a client of its own.
type instanceSet struct {
	name    string
	client  *redis.ClusterClient
	replay  *redisstore.ReplayStore
	rates   *redisstore.RateStore
	st      *redisstore.SessionStore
	elog    *redisstore.EventLog
	recover time.Duration // from the kill to every store's first answer on the dead shard's keys
}

// A master is killed under a bounded load (one caller at a time, a few
// hundred calls a second): its replica takes over, and the stores come
// back by themselves. Meanwhile no proof is accepted twice, no bucket
// goes over its bound, no session is lost, no event id is missing, and
// the stores' calls to the healthy masters never fail (the gate is per
// node). The outage is measured with the shipped settings (ClusterOptions)
// and, with MCPKIT_CLUSTER_DEFAULTS=1 (a minute more), with go-redis's
// defaults, in the same run.
//
// Complexity: one failover scenario whose load goroutines, kill and checks share the principals and counts under one mutex; split, that shared state would be passed through every piece.
//
//gocyclo:ignore
func testFailover(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	// The victim is c.Masters[0], the master of the first third of the
	// slots: a stall of an earlier test may have failed it over (a stall
	// longer than the node timeout).
	_, err := c.RestoreMasters(ctx)
	require.NoError(t, err)
	require.NoError(t, c.FlushAll(ctx))
	clk := newClock()
	mk := func(name string, o *redis.ClusterOptions) *instanceSet {
		cl := redis.NewClusterClient(o)
		t.Cleanup(func() { _ = cl.Close() })
		in := &instanceSet{name: name, client: cl, replay: newReplayStore(t, cl, clk, redisstore.ReplayOptions{}),
			rates: newRateStore(t, cl, redisstore.RateOptions{})}
		var err error
		in.st, err = redisstore.NewSessionStore(cl, redisstore.SessionOptions{Now: clk.Now})
		require.NoError(t, err)
		in.elog, err = redisstore.NewEventLog(cl, redisstore.EventLogOptions{})
		require.NoError(t, err)
		return in
	}
	sets := []*instanceSet{mk("shipped", redisstore.ClusterOptions(c.Addrs()...)), mk("shipped-2", redisstore.ClusterOptions(c.Addrs()...))}
	if os.Getenv("MCPKIT_CLUSTER_DEFAULTS") == "1" {
		sets = append(sets, mk("go-redis defaults", &redis.ClusterOptions{Addrs: c.Addrs()}))
	}
	// A Redis that lost nothing yet (arming can time out under load), and
	// a proof in every family before the kill, so that each marker names
	// the victim (a marker "0" would be adopted by its replica).
	require.NoError(t, setMarkers(sets[0].client, sets[0].replay))
	warmed := map[string]bool{}
	for i := 0; len(warmed) < sets[0].replay.Families(); i++ {
		caller := "warm-" + strconv.Itoa(i)
		if warmed[sets[0].replay.MarkerKey(caller)] {
			continue
		}
		err := answered(t, func() error {
			return sets[0].replay.Remember(ctx, "warm-proof-"+strconv.Itoa(i), caller, clk.Now().Add(time.Minute))
		})
		require.True(t, err == nil || errors.Is(err, dpop.ErrReplayed), "%v", err) // a replay: a try that timed out had landed
		warmed[sets[0].replay.MarkerKey(caller)] = true
	}
	victim := c.Masters[0]
	onVictim := func(key string) bool { return redisstore.Slot(key) < 16384/3 }

	// Sessions and events of 60 principals, replicated before the kill.
	type who struct {
		p      *principal.Principal
		id     string
		bucket ratelimit.Bucket
		dead   bool // its keys live on the victim
		taken  int
		events []string
		proofs []string
		reset  int // the index of the first event the promoted replica logged (-1: none yet)
	}
	var ws []*who
	for i := range 60 {
		w := &who{p: &principal.Principal{Subject: "p" + strconv.Itoa(i)}, id: newID(), reset: -1,
			bucket: ratelimit.Bucket{Key: "b" + strconv.Itoa(i), PerSecond: 1e-6, Burst: 20}}
		_, err := sets[0].st.Create(ctx, w.id, w.p)
		require.NoError(t, err)
		id, err := sets[0].elog.Append(ctx, w.p.Subject, notify.Event{Kind: notify.ListChanged})
		require.NoError(t, err)
		w.events = append(w.events, id)
		w.dead = onVictim(sets[0].st.SessionKey("s", w.id, w.p))
		ws = append(ws, w)
	}
	for _, m := range c.Masters {
		_, err := c.Do(ctx, m, "WAIT", 1, 2000)
		require.NoError(t, err)
	}

	// A broker listener whose subject's channel lives on the victim (its
	// log on another master): what is published while the listener is
	// cut off reaches it from the log when it has subscribed again.
	elogX := sets[0].elog
	subject := ""
	for i := 0; subject == ""; i++ {
		s := "listener-" + strconv.Itoa(i)
		b, err := redisstore.NewBroker(sets[0].client, redisstore.BrokerOptions{})
		require.NoError(t, err)
		if onVictim(b.ChannelOf(s)) && !onVictim(elogX.Key(s)) {
			subject = s
		}
	}
	bo := redisstore.BrokerOptions{Log: elogX, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}
	pubX, subX := newInstance(t, sets[0].client, bo), newInstance(t, sets[1].client, bo)
	heard := subX.hub.Subscribe(subject)
	defer heard.Close()
	pubX.hub.ResourceUpdated(ctx, subject, "docs://documents/before")
	require.Equal(t, updated(subject, "docs://documents/before"), next(t, heard))

	victim.Stop()
	killed := time.Now()
	for _, u := range []string{"x", "y", "z"} { // logged, not published: the channel's master is dead
		pubX.hub.ResourceUpdated(ctx, subject, "docs://documents/"+u)
	}
	promoted := make(chan time.Duration, 1)
	go func() { // when the victim's replica becomes a master
		for time.Since(killed) < 30*time.Second {
			if role, err := c.Do(ctx, c.Replicas[0], "ROLE"); err == nil && role == "master" {
				promoted <- time.Since(killed)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		promoted <- -1
	}()
	deadline := killed.Add(20 * time.Second)
	if len(sets) > 2 {
		deadline = killed.Add(90 * time.Second)
	}
	var mu sync.Mutex // guards ws and the counts
	healthyFailures, proof := 0, 0
	var healthyErrs []string
	var wg sync.WaitGroup
	for n, in := range sets {
		other := sets[(n+1)%2] // a shipped instance: the other's calls must not slow this one's loop
		wg.Go(func() {
			down := map[string]bool{"replay": true, "rate": true, "session": true, "events": true}
			fail := func(deadKey bool, err error, store string) {
				// An answer: the promoted replica is another Redis
				// process, which may lack the last writes: the replay
				// store's quarantine and a session not found are what
				// it answers (see the package documentation, Faults).
				var ue *dpop.UnavailableError
				answered := err == nil || errors.As(err, &ue) || errors.Is(err, sessions.ErrNotFound)
				switch {
				case answered && deadKey:
					delete(down, store)
				case err != nil && !deadKey:
					mu.Lock()
					healthyFailures++
					if len(healthyErrs) < 5 {
						healthyErrs = append(healthyErrs, store+": "+err.Error())
					}
					mu.Unlock()
				}
			}
			for len(down) > 0 && time.Now().Before(deadline) {
				for _, w := range ws {
					// A fresh proof; accepted, it is refused by the other instance.
					mu.Lock()
					proof++
					pr := fmt.Sprint("proof-", proof)
					mu.Unlock()
					err := in.replay.Remember(ctx, pr, w.p.Subject, clk.Now().Add(time.Minute))
					fail(onVictim(in.replay.ProofKey(pr, w.p.Subject)), err, "replay")
					if err == nil {
						mu.Lock()
						w.proofs = append(w.proofs, pr)
						mu.Unlock()
						assert.Error(t, other.replay.Remember(ctx, pr, w.p.Subject, clk.Now().Add(time.Minute)), "accepted twice")
					}
					ok, _, err := in.rates.Take(ctx, w.bucket, clk.Now())
					fail(onVictim(in.rates.Key(w.bucket.Key)), err, "rate")
					if err == nil && ok {
						mu.Lock()
						w.taken++
						mu.Unlock()
					}
					_, err = in.st.Find(ctx, w.id, w.p)
					fail(w.dead, err, "session")
					// Events up to a bound (below the log's 64), so that
					// the log never trims the first (the test's own load
					// made it flake); on the dead shard until it answers.
					mu.Lock()
					more := len(w.events) < 40
					mu.Unlock()
					if more || down["events"] && onVictim(in.elog.Key(w.p.Subject)) {
						id, err := in.elog.Append(ctx, w.p.Subject, notify.Event{Kind: notify.ListChanged})
						fail(onVictim(in.elog.Key(w.p.Subject)), err, "events")
						if err == nil {
							mu.Lock()
							if onVictim(in.elog.Key(w.p.Subject)) && w.reset < 0 {
								w.reset = len(w.events) // the promoted replica's first
							}
							w.events = append(w.events, id)
							mu.Unlock()
						}
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			in.recover = time.Since(killed)
			assert.Empty(t, down, "%s: stores still down on the dead shard's keys after %v", in.name, in.recover)
		})
	}
	wg.Wait()
	for _, w := range ws { // the promoted replica's first event, where the loop logged none
		if onVictim(sets[0].elog.Key(w.p.Subject)) && w.reset < 0 {
			id, err := sets[0].elog.Append(ctx, w.p.Subject, notify.Event{Kind: notify.ListChanged})
			require.NoError(t, err)
			w.reset = len(w.events)
			w.events = append(w.events, id)
		}
	}
	prom := <-promoted
	for _, in := range sets {
		t.Logf("%s: every store answered on the dead shard's keys %.1f s after the kill, %.1f s after the replica's promotion (%.1f s; cluster-node-timeout %v)",
			in.name, in.recover.Seconds(), (in.recover - prom).Seconds(), prom.Seconds(), c.NodeTimeout)
	}
	assert.Zero(t, healthyFailures, "calls to healthy masters never fail: %q", healthyErrs)
	for _, u := range []string{"x", "y", "z"} {
		assert.Equal(t, updated(subject, "docs://documents/"+u), next(t, heard), "caught up from the log")
	}

	// After: every session of a healthy master is there, for every
	// instance, and every one of the promoted replica's is gone (it may
	// lack their End); no bucket gave more than its burst; every event
	// recorded is in the log (on the promoted replica, from its first:
	// what the dead master logged may be lost, and a client holding such
	// an id starts over); every accepted proof is a replay, and the dead
	// shard's families are in quarantine.
	for _, w := range ws {
		assert.LessOrEqual(t, w.taken, w.bucket.Burst, "bucket over its bound")
		for _, in := range sets {
			err := answered(t, func() error { _, err := in.st.Find(ctx, w.id, w.p); return err })
			if w.dead {
				assert.ErrorIs(t, err, sessions.ErrNotFound, "%s: a session of the failed master", in.name)
			} else {
				assert.NoError(t, err, "%s: session lost", in.name)
			}
			for _, pr := range w.proofs {
				err := answered(t, func() error { return in.replay.Remember(ctx, pr, w.p.Subject, clk.Now().Add(time.Minute)) })
				if onVictim(in.replay.ProofKey(pr, w.p.Subject)) {
					var ue *dpop.UnavailableError
					assert.ErrorAs(t, err, &ue, "in quarantine")
				} else {
					assert.ErrorIs(t, err, dpop.ErrReplayed)
				}
			}
		}
		from, want := w.events[0], w.events[1:]
		if onVictim(sets[0].elog.Key(w.p.Subject)) {
			_, ok, err := sets[0].elog.Since(ctx, w.p.Subject, w.events[0])
			require.NoError(t, err)
			assert.False(t, ok, "an id of the failed master: start over")
			require.GreaterOrEqual(t, w.reset, 0, "the promoted replica logged")
			// From the promoted replica's first (the two instances'
			// appends may be recorded here in another order).
			post := append([]string(nil), w.events[w.reset:]...)
			sort.Slice(post, func(i, j int) bool { return streamIDLess(post[i], post[j]) })
			from, want = post[0], post[1:]
		}
		evs, ok, err := sets[0].elog.Since(ctx, w.p.Subject, from)
		require.NoError(t, err)
		require.True(t, ok, "victim %v, from %s of %d events", onVictim(sets[0].elog.Key(w.p.Subject)), from, len(w.events))
		var got []string
		for _, e := range evs {
			got = append(got, e.ID)
		}
		assert.ElementsMatch(t, want, got, "no event id missing")
	}
}

// streamIDLess reports whether stream id a ("ms-seq") comes before b.
func streamIDLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	x, _ := strconv.ParseUint(am, 10, 64)
	y, _ := strconv.ParseUint(bm, 10, 64)
	if x != y {
		return x < y
	}
	x, _ = strconv.ParseUint(as, 10, 64)
	y, _ = strconv.ParseUint(bs, 10, 64)
	return x < y
}

// countCalls counts the connections a cluster client dials to addr: a
// call that timed out loses its connection, so each retry after a
// timeout dials one more.
type countCalls struct {
	addr string
	n    atomic.Int32
	off  atomic.Bool
}

func (h *countCalls) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == h.addr && !h.off.Load() {
			h.n.Add(1)
		}
		return next(ctx, network, addr)
	}
}
func (h *countCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *countCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// answered runs call until Redis answers it (nil, or an error that is a
// store's answer), for up to 10 s: a call that timed out on a loaded
// machine, and the gate it shut, are not what a check is about.
func answered(t *testing.T, call func() error) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := call()
		var ue *dpop.UnavailableError
		if err == nil || errors.Is(err, dpop.ErrReplayed) || errors.As(err, &ue) ||
			errors.Is(err, sessions.ErrNotFound) || errors.Is(err, sessions.ErrFull) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

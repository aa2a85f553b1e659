package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// moveSlot moves slot from the master src to dst as redis-cli --cluster
// reshard does (SETSLOT IMPORTING and MIGRATING, MIGRATE of batch keys at
// a time, SETSLOT NODE on every master), pausing between batches so that
// the move lasts a while. It returns when the slot is dst's.
func moveSlot(t *testing.T, c *redistest.Cluster, slot int, src, dst *redistest.Server, batch int, pause time.Duration) {
	t.Helper()
	ctx := context.Background()
	srcID, err := c.Do(ctx, src, "CLUSTER", "MYID")
	require.NoError(t, err)
	dstID, err := c.Do(ctx, dst, "CLUSTER", "MYID")
	require.NoError(t, err)
	_, err = c.Do(ctx, dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	require.NoError(t, err)
	_, err = c.Do(ctx, src, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	require.NoError(t, err)
	s := redis.NewClient(redistest.ClientOptions(src.Addr()))
	defer s.Close()
	for {
		keys, err := s.ClusterGetKeysInSlot(ctx, slot, batch).Result()
		require.NoError(t, err)
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", dst.Port(), "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		require.NoError(t, s.Do(ctx, args...).Err())
		time.Sleep(pause)
	}
	for _, n := range append([]*redistest.Server{dst, src}, c.Masters...) {
		if n.Running() {
			_, err := c.Do(ctx, n, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
			require.NoError(t, err)
		}
	}
}

// inSlot returns n names made of prefix and a number whose key (key of
// the name) lies in slot.
func inSlot(t *testing.T, n int, slot int, prefix string, key func(string) string) []string {
	t.Helper()
	var out []string
	for i := 0; len(out) < n; i++ {
		require.Less(t, i, 1<<21, "no name in slot %d", slot)
		name := prefix + strconv.Itoa(i)
		if redisstore.Slot(key(name)) == slot {
			out = append(out, name)
		}
	}
	return out
}

// A slot holding a replay family, a session family, rate buckets and
// event logs moves to another master (1,500 keys more in it, moved 20 at
// a time) while two instances call the stores on it. Redis answers
// TRYAGAIN to the scripts of several keys for the whole move; the stores
// wait it out (bounded), so every call succeeds, and none runs twice: no
// bucket is charged more than once a take, no fresh proof is its own
// replay, every accepted proof is a replay after, every event id is in
// the log. The same move with the waits off, in the same run, counts the
// calls a move fails without them.
func testMigration(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	require.NoError(t, c.FlushAll(ctx))
	clk := newClock()
	type inst struct {
		replay *redisstore.ReplayStore
		rates  *redisstore.RateStore
		st     *redisstore.SessionStore
		elog   *redisstore.EventLog
	}
	mk := func() inst {
		cl := clusterBackend{c}.Client(t)
		st, err := redisstore.NewSessionStore(cl, redisstore.SessionOptions{Now: clk.Now})
		require.NoError(t, err)
		elog, err := redisstore.NewEventLog(cl, redisstore.EventLogOptions{Events: 100000}) // none trimmed
		require.NoError(t, err)
		return inst{newReplayStore(t, cl, clk, redisstore.ReplayOptions{}), newRateStore(t, cl, redisstore.RateOptions{}), st, elog}
	}
	ins := []inst{mk(), mk()}
	passQuarantine(t, ins[0].replay, clk)
	client := clusterBackend{c}.Client(t).(*redis.ClusterClient)

	// A slot of a replay family that is also a session family's.
	sessSlots := map[int]*principal.Principal{}
	others := map[int]*principal.Principal{} // another principal of the family, whose sessions are created meanwhile
	for i := range 2000 {
		p := &principal.Principal{Subject: "sp-" + strconv.Itoa(i)}
		k := redisstore.Slot(ins[0].st.SessionKey("s", "x", p))
		if sessSlots[k] != nil {
			others[k] = sessSlots[k]
		}
		sessSlots[k] = p
	}
	var caller string
	var p *principal.Principal
	for i := 0; p == nil; i++ {
		require.Less(t, i, 2000, "no replay family shares a slot with a session family")
		caller = "caller-" + strconv.Itoa(i)
		p = sessSlots[redisstore.Slot(ins[0].replay.ProofKey("x", caller))]
	}
	slot := redisstore.Slot(ins[0].replay.ProofKey("x", caller))
	require.NotNil(t, others[slot])
	buckets := inSlot(t, 3, slot, "bucket-", ins[0].rates.Key)
	subjects := inSlot(t, 3, slot, "subject-", ins[0].elog.Key)
	sid := newID()
	_, err := ins[0].st.Create(ctx, sid, p)
	require.NoError(t, err)

	type tally struct {
		ok, failed, tryAgain atomic.Int64
		mu                   sync.Mutex
		byStore              map[string]int // failed calls
	}
	round := func(name string, src, dst *redistest.Server, waits bool) {
		prev := redisstore.NoTryAgain(!waits)
		defer redisstore.NoTryAgain(prev)
		// Filler keys in the slot, so that the move lasts.
		pipe := client.Pipeline()
		for i := range 1500 {
			pipe.Set(ctx, ins[0].replay.ProofKey(fmt.Sprint("fill-", name, i), caller), "x", time.Hour)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)

		starts := map[string]string{}
		for _, s := range subjects {
			starts[s], err = ins[0].elog.Append(ctx, s, notify.Event{Kind: notify.ListChanged})
			require.NoError(t, err)
		}
		tl := tally{byStore: map[string]int{}}
		count := func(store string, err error) {
			if err != nil {
				tl.mu.Lock()
				tl.byStore[store]++
				tl.mu.Unlock()
			}
			switch {
			case err == nil:
				tl.ok.Add(1)
			case redis.IsTryAgainError(err):
				tl.tryAgain.Add(1)
				tl.failed.Add(1)
			default:
				tl.failed.Add(1)
				if waits {
					t.Logf("%s: %v", name, err)
				}
			}
		}
		var mu sync.Mutex
		taken := map[string]int{}
		var accepted []string
		events := map[string][]string{}
		replayedFresh := 0
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for n, in := range ins {
			wg.Go(func() {
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					proof := fmt.Sprint("proof-", name, "-", n, "-", k)
					err := in.replay.Remember(ctx, proof, caller, clk.Now().Add(time.Minute))
					count("replay", err)
					mu.Lock()
					if err == nil {
						accepted = append(accepted, proof)
					}
					if errors.Is(err, dpop.ErrReplayed) {
						replayedFresh++
					}
					mu.Unlock()
					b := ratelimit.Bucket{Key: buckets[k%len(buckets)], PerSecond: 1, Burst: 100000}
					ok, _, err := in.rates.Take(ctx, b, clk.Now())
					count("rate", err)
					if err == nil && ok {
						mu.Lock()
						taken[b.Key]++
						mu.Unlock()
					}
					_, err = in.st.Find(ctx, sid, p)
					count("session", err)
					if k%5 == 0 {
						_, err := in.st.Create(ctx, newID(), others[slot])
						count("session", err)
					}
					count("session", in.st.Subscribe(ctx, sid, p, fmt.Sprint("docs://documents/", k%3)))
					s := subjects[k%len(subjects)]
					id, err := in.elog.Append(ctx, s, notify.Event{Kind: notify.ListChanged})
					count("events", err)
					if err == nil {
						mu.Lock()
						events[s] = append(events[s], id)
						mu.Unlock()
					}
				}
			})
		}
		time.Sleep(50 * time.Millisecond) // calls before the move
		start := time.Now()
		moveSlot(t, c, slot, src, dst, 20, 10*time.Millisecond)
		moved := time.Since(start)
		time.Sleep(100 * time.Millisecond) // and after
		close(stop)
		wg.Wait()
		t.Logf("%s: the slot's move took %.2f s; calls during it: %d succeeded, %d failed (%d TRYAGAIN; by store %v)",
			name, moved.Seconds(), tl.ok.Load(), tl.failed.Load(), tl.tryAgain.Load(), tl.byStore)

		assert.Zero(t, replayedFresh, "%s: a fresh proof refused as its own replay", name)
		for _, pr := range accepted {
			assert.ErrorIs(t, ins[1].replay.Remember(ctx, pr, caller, clk.Now().Add(time.Minute)), dpop.ErrReplayed, "accepted twice")
		}
		for _, k := range buckets {
			tat, err := client.Get(ctx, ins[0].rates.Key(k)).Int64()
			if errors.Is(err, redis.Nil) {
				assert.Zero(t, taken[k])
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, int64(taken[k]), (tat-clk.Now().UnixMicro())/1e6, "%s: bucket %s charged once a take", name, k)
			require.NoError(t, client.Del(ctx, ins[0].rates.Key(k)).Err())
		}
		for s, ids := range events {
			last, err := ins[0].elog.Append(ctx, s, notify.Event{Kind: notify.ListChanged})
			require.NoError(t, err)
			evs, ok, err := ins[0].elog.Since(ctx, s, starts[s])
			require.NoError(t, err)
			require.True(t, ok)
			var got []string
			for _, e := range evs {
				got = append(got, e.ID)
			}
			assert.ElementsMatch(t, append(ids, last), got, "%s: every event once", name)
		}
		if waits {
			assert.Zero(t, tl.failed.Load(), "%s: every call succeeds", name)
		}
		// The next move carries as many keys.
		for i := range 1500 {
			pipe.Del(ctx, ins[0].replay.ProofKey(fmt.Sprint("fill-", name, i), caller))
		}
		for _, pr := range accepted {
			pipe.Del(ctx, ins[0].replay.ProofKey(pr, caller))
		}
		_, err = pipe.Exec(ctx)
		require.NoError(t, err)
		assert.Positive(t, tl.ok.Load())
	}
	src := masterOf(t, c, client, ins[0].replay.ProofKey("x", caller))
	var dst *redistest.Server
	for _, m := range c.Masters {
		if m != src && m.Running() {
			dst = m
			break
		}
	}
	round("without the waits", src, dst, false)
	round("shipped", dst, src, true)
}

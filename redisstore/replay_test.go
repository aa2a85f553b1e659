package redisstore_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/redisstore"
)

func TestNewReplayStoreRejects(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	_, err := redisstore.NewReplayStore(nil, redisstore.ReplayOptions{})
	assert.Error(t, err, "nil client")
	for name, o := range map[string]redisstore.ReplayOptions{
		"negative window":        {ProofWindow: -time.Second},
		"negative skew":          {ClockSkew: -time.Second},
		"negative bound":         {MaxEntries: -1},
		"negative share":         {MaxEntriesPerCaller: -1},
		"share over the bound":   {MaxEntries: 10, MaxEntriesPerCaller: 11},
		"share over the default": {MaxEntriesPerCaller: redisstore.DefaultMaxReplayEntries + 1},
	} {
		_, err := redisstore.NewReplayStore(client, o)
		assert.Error(t, err, name)
	}
	_, err = redisstore.NewReplayStore(client, redisstore.ReplayOptions{MaxEntries: 10, MaxEntriesPerCaller: 10})
	assert.NoError(t, err, "a share of the whole bound turns shares off")
}

// A proof is remembered once, whoever presents it again, for its
// remaining lifetime and the clock skew; a Redis without the store's
// marker first refuses everything for a period (see passQuarantine).
func TestReplayStoreRemember(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	passQuarantine(t, s, clk)
	ctx := context.Background()
	expires := clk.Now().Add(40 * time.Second)

	require.NoError(t, s.Remember(ctx, "proof-1", "caller-1", expires))
	assert.ErrorIs(t, s.Remember(ctx, "proof-1", "caller-1", expires), dpop.ErrReplayed)
	// Another caller cannot present it: the Authenticator's proof digest
	// covers the proof's key, and a proof is bound to one token (ath), so
	// to one caller. The store finds it within the caller's family only.
	other := "caller-2"
	for i := 3; s.Families() > 1 && s.MarkerKey(other) != s.MarkerKey("caller-1"); i++ {
		other = "caller-" + strconv.Itoa(i)
	}
	assert.ErrorIs(t, s.Remember(ctx, "proof-1", other, expires), dpop.ErrReplayed, "a replay whoever of its family presents it")
	require.NoError(t, s.Remember(ctx, "proof-2", "caller-1", expires))

	ttl, err := client.PTTL(ctx, s.ProofKey("proof-1", "caller-1")).Result()
	require.NoError(t, err)
	want := 40*time.Second + redisstore.DefaultClockSkew
	assert.InDelta(t, want.Seconds(), ttl.Seconds(), 2, "the remaining lifetime and the skew: got %v, want %v", ttl, want)

	// A proof already past its expiry (the Authenticator's clock at the
	// edge) is still remembered, for the skew.
	require.NoError(t, s.Remember(ctx, "proof-3", "caller-1", clk.Now().Add(-time.Second)))
	assert.ErrorIs(t, s.Remember(ctx, "proof-3", "caller-1", clk.Now()), dpop.ErrReplayed)

	// Garbage in the marker (not a time) is a lost marker: a quarantine.
	require.NoError(t, client.Set(ctx, s.MarkerKey("caller-1"), "garbage", 0).Err())
	var ue *dpop.UnavailableError
	require.ErrorAs(t, s.Remember(ctx, "proof-4", "caller-1", expires), &ue)
	assert.Equal(t, period, ue.RetryAfter)
}

// retryAt is the in-memory cache's Retry-After for a refusal at now: the
// end of the current period, and a period more when the last period holds
// none of the entries in the way.
func retryAt(now time.Time, olderEmpty bool) time.Duration {
	p := period.Milliseconds()
	ms := now.UnixMilli()
	r := max(time.Duration((ms/p+1)*p-ms)*time.Millisecond, time.Second)
	if olderEmpty {
		r += period
	}
	return r
}

// A caller at its share is refused until its proofs age out of the
// counters (two periods), while others are served, and its replays are
// still reported as replays.
func TestReplayStoreShares(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	log, logs := newLogger()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{MaxEntries: 100, MaxEntriesPerCaller: 3, Logger: log})
	passQuarantine(t, s, clk)
	ctx := context.Background()
	exp := func() time.Time { return clk.Now().Add(time.Minute) }

	for _, p := range []string{"a1", "a2", "a3"} {
		require.NoError(t, s.Remember(ctx, p, "alice", exp()))
	}
	var ue *dpop.UnavailableError
	require.ErrorAs(t, s.Remember(ctx, "a4", "alice", exp()), &ue, "alice at her share")
	assert.Equal(t, retryAt(clk.Now(), true), ue.RetryAfter)
	require.ErrorAs(t, s.Remember(ctx, "a5", "alice", exp()), &ue)
	assert.ErrorIs(t, s.Remember(ctx, "a1", "alice", exp()), dpop.ErrReplayed, "a replay is a replay, share or not")
	require.NoError(t, s.Remember(ctx, "b1", "bob", exp()), "bob is served")
	assert.Equal(t, 1, strings.Count(logs.String(), "holds its share"), "logged once a period: %s", logs)

	clk.Advance(period) // alice's proofs are the last period's now
	require.ErrorAs(t, s.Remember(ctx, "a6", "alice", exp()), &ue)
	assert.Equal(t, retryAt(clk.Now(), false), ue.RetryAfter)
	clk.Advance(period)
	require.NoError(t, s.Remember(ctx, "a7", "alice", exp()), "two periods later, her share is free")
}

// The bound holds for everyone: when the counters reach it, every new
// proof is refused, and replays are still replays.
func TestReplayStoreFull(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	log, logs := newLogger()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{MaxEntries: 4, MaxEntriesPerCaller: 4, Logger: log})
	passQuarantine(t, s, clk)
	ctx := context.Background()
	exp := clk.Now().Add(time.Minute)
	for i, c := range []string{"alice", "alice", "bob", "carol"} {
		require.NoError(t, s.Remember(ctx, "p"+string(rune('0'+i)), c, exp))
	}
	var ue *dpop.UnavailableError
	require.ErrorAs(t, s.Remember(ctx, "p9", "dave", exp), &ue, "full")
	assert.Equal(t, retryAt(clk.Now(), true), ue.RetryAfter)
	assert.ErrorIs(t, s.Remember(ctx, "p2", "bob", exp), dpop.ErrReplayed)
	assert.Contains(t, logs.String(), "replay memory is full")
}

// Redis keys hold digests only: the Authenticator's opaque proof and
// caller digests, never a subject, client id or key thumbprint.
func TestReplayKeysHoldNoIdentity(t *testing.T) {
	_, client := startBackend(t)
	f := newFleet(t)
	s := newReplayStore(t, client, f.clock, redisstore.ReplayOptions{})
	passQuarantine(t, s, f.clock)
	a := f.instance(t, s)
	c := f.caller(t, "alice@example.com")
	require.Equal(t, http.StatusOK, send(a, c, f.proof(t, c)).Code)
	jkt, err := c.key.Thumbprint()
	require.NoError(t, err)
	keys, err := allKeys(client, "*")
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, redisstore.DefaultReplayPrefix), k)
		for _, secret := range []string{"alice", "example.com", "client-1", jkt, f.is.ID()} {
			assert.NotContains(t, k, secret)
		}
	}
}

// Two instances sharing one Redis (each its own client and store): a
// proof accepted by one is refused by the other, and by itself.
func TestReplayAcrossInstances(t *testing.T) {
	srv, client := startBackend(t)
	f := newFleet(t)
	sa := newReplayStore(t, client, f.clock, redisstore.ReplayOptions{})
	sb := newReplayStore(t, srv.Client(t), f.clock, redisstore.ReplayOptions{})
	passQuarantine(t, sa, f.clock)
	a, b := f.instance(t, sa), f.instance(t, sb)
	alice := f.caller(t, "alice")

	for _, first := range []*authn.Authenticator{a, b} {
		p := f.proof(t, alice)
		require.Equal(t, http.StatusOK, send(first, alice, p).Code)
		for _, again := range []*authn.Authenticator{a, b} {
			w := send(again, alice, p)
			assert.Equal(t, http.StatusUnauthorized, w.Code)
			assert.Equal(t, "invalid_dpop_proof", dpopError(w))
		}
	}
}

// 32 goroutines present one proof to two instances at once: exactly one
// is accepted, every other request is refused as a replay.
func TestReplayRace(t *testing.T) {
	srv, client := startBackend(t)
	f := newFleet(t)
	sa := newReplayStore(t, client, f.clock, redisstore.ReplayOptions{})
	sb := newReplayStore(t, srv.Client(t), f.clock, redisstore.ReplayOptions{})
	passQuarantine(t, sa, f.clock)
	insts := []*authn.Authenticator{f.instance(t, sa), f.instance(t, sb)}
	alice := f.caller(t, "alice")
	for round := range 10 {
		p := f.proof(t, alice)
		var ok, replays atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 32 {
			wg.Go(func() {
				<-start
				w := send(insts[i%2], alice, p)
				switch {
				case w.Code == http.StatusOK:
					ok.Add(1)
				case w.Code == http.StatusUnauthorized && dpopError(w) == "invalid_dpop_proof":
					replays.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		assert.Equal(t, int32(1), ok.Load(), "round %d: exactly one wins", round)
		assert.Equal(t, int32(31), replays.Load(), "round %d: every other one is a replay", round)
	}
}

// One token holder flooding the store with fresh proofs fills its own
// share, fleet-wide, and nobody else's.
func TestReplayFloodDoesNotLockOthersOut(t *testing.T) {
	srv, client := startBackend(t)
	f := newFleet(t)
	o := redisstore.ReplayOptions{MaxEntries: 1000, MaxEntriesPerCaller: 5}
	sa := newReplayStore(t, client, f.clock, o)
	sb := newReplayStore(t, srv.Client(t), f.clock, o)
	passQuarantine(t, sa, f.clock)
	a, b := f.instance(t, sa), f.instance(t, sb)
	mallory, alice := f.caller(t, "mallory"), f.caller(t, "alice")

	for i := range 5 {
		require.Equal(t, http.StatusOK, send([]*authn.Authenticator{a, b}[i%2], mallory, f.proof(t, mallory)).Code)
	}
	for range 20 {
		for _, inst := range []*authn.Authenticator{a, b} {
			w := send(inst, mallory, f.proof(t, mallory))
			require.Equal(t, http.StatusServiceUnavailable, w.Code, "mallory at her share on every instance")
			assert.NotEmpty(t, w.Header().Get("Retry-After"))
		}
	}
	for _, inst := range []*authn.Authenticator{a, b, a} {
		w := send(inst, alice, f.proof(t, alice))
		assert.Equal(t, http.StatusOK, w.Code, "alice is served")
		assert.Equal(t, "alice", w.Header().Get("X-Subject"))
	}
}

// failSetNX fails every pipeline that sets a marker (as a pipeline with
// a command for a dead node fails), and counts them.
type failSetNX struct{ tries atomic.Int32 }

func (h *failSetNX) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *failSetNX) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *failSetNX) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() == "eval" { // arming's
				h.tries.Add(1)
				return redis.ErrClosed
			}
		}
		return next(ctx, cmds)
	}
}

// Arming every family's marker is tried once, by the store's first
// proof: when it fails (a node down), later proofs do not try again and
// so do not wait for the dead node; each family then sets its own marker
// at its first proof, and its proofs are checked as before.
func TestReplayStoreArmsOnce(t *testing.T) {
	_, client := startBackend(t)
	h := &failSetNX{}
	client.AddHook(h)
	clk := newClock()
	s := newReplayStore(t, client, clk, redisstore.ReplayOptions{Prefix: "t:"})
	if s.Families() == 1 {
		t.Skip("one family: nothing to arm")
	}
	ctx := context.Background()
	remember := func(proof string, i int) error {
		return s.Remember(ctx, proof+strconv.Itoa(i), "caller-"+strconv.Itoa(i), clk.Now().Add(40*time.Second))
	}
	// Unarmed: each family begins its quarantine at its first proof.
	for i := range 12 {
		var ue *dpop.UnavailableError
		if err := remember("early-", i); err != nil {
			require.ErrorAs(t, err, &ue)
		}
	}
	clk.Advance(period)
	for i := range 12 {
		require.NoError(t, remember("proof-", i))
	}
	assert.ErrorIs(t, remember("proof-", 1), dpop.ErrReplayed)
	assert.Equal(t, int32(1), h.tries.Load(), "one try to arm, however many proofs")
}

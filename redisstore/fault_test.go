package redisstore_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
)

// Redis stopped mid-run (killed: nothing saved) and started again, empty:
// DPoP fails closed throughout (503 with Retry-After), never accepting a
// replay, neither while Redis is down nor after it is back with its
// memory lost; then it comes back by itself.
func TestReplayFailsClosedAcrossARedisRestart(t *testing.T) {
	srv, client := startRedis(t)
	f := newFleet(t)
	sa := newReplayStore(t, client, f.clock, redisstore.ReplayOptions{Logger: f.log})
	sb := newReplayStore(t, srv.Client(t), f.clock, redisstore.ReplayOptions{Logger: f.log})
	passQuarantine(t, sa, f.clock)
	insts := []*authn.Authenticator{f.instance(t, sa), f.instance(t, sb)}
	alice := f.caller(t, "alice")

	accepted := f.proof(t, alice)
	require.Equal(t, http.StatusOK, send(insts[0], alice, accepted).Code)

	srv.Stop()
	for i := range 10 {
		for _, p := range []string{accepted, f.proof(t, alice)} {
			w := send(insts[i%2], alice, p)
			require.Equal(t, http.StatusServiceUnavailable, w.Code, "Redis down: fail closed")
			assert.Equal(t, "1", w.Header().Get("Retry-After"))
		}
	}

	srv.Restart(t)
	// Until the stores see Redis again (their gates open within a
	// second) they answer 503 with Retry-After 1; then Redis, found
	// empty, is in quarantine for a period. Nothing is accepted meanwhile.
	deadline := time.Now().Add(10 * time.Second)
	for _, inst := range insts {
		for {
			w := send(inst, alice, f.proof(t, alice))
			require.Equal(t, http.StatusServiceUnavailable, w.Code)
			if w.Header().Get("Retry-After") != "1" {
				assert.Equal(t, "126", w.Header().Get("Retry-After"), "the quarantine: a period")
				break
			}
			require.True(t, time.Now().Before(deadline), "the store never saw Redis again")
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, inst := range insts {
		w := send(inst, alice, accepted)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code, "the proof accepted before, within its window: still refused")
	}

	f.clock.Advance(period)
	for _, inst := range insts {
		w := send(inst, alice, accepted)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "after the quarantine the old proof is out of its window")
		assert.Equal(t, "invalid_dpop_proof", dpopError(w))
	}
	fresh := f.proof(t, alice)
	require.Equal(t, http.StatusOK, send(insts[1], alice, fresh).Code, "back by itself")
	w := send(insts[0], alice, fresh)
	assert.Equal(t, http.StatusUnauthorized, w.Code, "and replays are refused across instances again")

	logs := f.logs.String()
	assert.Contains(t, logs, "replay store cannot answer")
	// The fresh Redis's quarantine (seen by the first store), and the one
	// after the restart, seen by both: once each per store.
	assert.Equal(t, 3, strings.Count(logs, "holds no DPoP replay memory"), "each quarantine logged once per store")
	assert.NotContains(t, logs, srv.Addr(), "never the client's error text")
}

// Rate limits follow Limits.FailClosed while Redis is down (fail open by
// default, logged once; closed: refused), and limit again by themselves
// when it is back.
func TestRateLimitsAcrossARedisRestart(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(map[bool]string{false: "open", true: "closed"}[closed], func(t *testing.T) {
			srv, client := startRedis(t)
			clk := newClock()
			log, logs := newLogger()
			store := newRateStore(t, client, redisstore.RateOptions{})
			l := newLimiter(t, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 2}, Store: store, FailClosed: closed, Logger: log, Now: clk.Now})
			alice := who("alice")
			allow := func() bool { ok, _ := l.Allow(anyRequest, alice, mcphttp.ClassRead); return ok }
			require.True(t, allow())
			require.True(t, allow())
			require.False(t, allow(), "limited")

			srv.Stop()
			for range 20 {
				assert.Equal(t, !closed, allow())
			}
			assert.Equal(t, 1, strings.Count(logs.String(), "rate-limit store cannot answer"), "logged once: %s", logs)
			assert.NotContains(t, logs.String(), srv.Addr())

			srv.Restart(t)
			clk.Advance(time.Hour) // whatever Redis held, the bucket is full now
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, _, err := store.Peek(context.Background(), ratelimit.Bucket{Key: "probe", PerSecond: 1, Burst: 1}, clk.Now())
				if err == nil {
					break
				}
				require.True(t, time.Now().Before(deadline), "the store never saw Redis again")
				time.Sleep(20 * time.Millisecond)
			}
			assert.True(t, allow())
			assert.True(t, allow())
			assert.False(t, allow(), "limited again")
		})
	}
}

// The broker's listener survives Redis going away and coming back: it
// subscribes again by itself and delivers what is published after.
func TestBrokerAcrossARedisRestart(t *testing.T) {
	srv, client := startRedis(t)
	log, logs := newLogger()
	o := redisstore.BrokerOptions{Logger: log, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	a := newInstance(t, client, o)
	b := newInstance(t, srv.Client(t), o)
	bob := a.hub.Subscribe("bob")
	defer bob.Close()
	ctx := context.Background()
	b.hub.ListChanged(ctx, "bob")
	require.Equal(t, listChanged("bob"), next(t, bob))

	for round := uint64(1); round <= 2; round++ {
		srv.Stop()
		assert.Error(t, b.broker.Publish(ctx, listChanged("bob")), "Redis down: not sent")
		srv.Restart(t)
		waitStats(t, a.broker, func(s redisstore.BrokerStats) bool { return s.Connects == round+1 }, "A never subscribed again")
		waitStats(t, b.broker, func(s redisstore.BrokerStats) bool { return s.Connects == round+1 }, "B never subscribed again")
		uri := "docs://documents/after-restart"
		deadline := time.Now().Add(10 * time.Second)
		for b.broker.Publish(ctx, updated("bob", uri)) != nil { // B's gate opens within a second
			require.True(t, time.Now().Before(deadline))
			time.Sleep(20 * time.Millisecond)
		}
		assert.Equal(t, missed("bob"), next(t, bob), "round %d: what was published meanwhile is not known", round)
		assert.Equal(t, updated("bob", uri), next(t, bob), "round %d", round)
	}
	assert.Contains(t, logs.String(), "broker connection lost")
	assert.Contains(t, logs.String(), "broker listening again")
}

// A connection that stops answering without closing (here: Redis pauses
// every client) is detected by the health check's ping and replaced.
func TestBrokerHealthCheck(t *testing.T) {
	_, client := startRedis(t)
	log, logs := newLogger()
	in := newInstance(t, client, redisstore.BrokerOptions{Logger: log, HealthCheck: 100 * time.Millisecond,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	bob := in.hub.Subscribe("bob")
	defer bob.Close()
	ctx := context.Background()
	require.NoError(t, client.Do(ctx, "CLIENT", "PAUSE", "800", "ALL").Err())
	waitStats(t, in.broker, func(s redisstore.BrokerStats) bool { return s.Connects >= 2 }, "never replaced the silent connection")
	assert.Contains(t, logs.String(), "no answer to a ping")
	assert.Equal(t, missed("bob"), next(t, bob), "no log: the stream is told it may have missed events")
	in.hub.ListChanged(ctx, "bob")
	assert.Equal(t, listChanged("bob"), next(t, bob))
}

var _ = notify.Event{}

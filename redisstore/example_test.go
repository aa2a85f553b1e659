package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// The stores of one instance of a fleet, on one client. (Compiled,
// not run: it needs a Redis. TestExampleFleet runs the same wiring
// against a redis-server of its own.)
func Example() {
	opt, err := redis.ParseURL(os.Getenv("MCPKIT_REDIS_URL")) // redis://host:6379/0
	if err != nil {
		log.Fatal(err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, 500*time.Millisecond, 500*time.Millisecond
	opt.MaxRetries = -1 // a store's call is never run twice
	opt.DialerRetries = 1
	client := redis.NewClient(opt)
	defer client.Close()

	replay, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{})
	if err != nil {
		log.Fatal(err)
	}
	rates, err := redisstore.NewRateStore(client, redisstore.RateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	broker, err := redisstore.NewBroker(client, redisstore.BrokerOptions{})
	if err != nil {
		log.Fatal(err)
	}

	dp := dpop.Options{Mode: dpop.Allowed, ReplayStore: replay} // in authn.Options.DPoP
	limiter, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 50, Burst: 200}, Store: rates})
	if err != nil {
		log.Fatal(err)
	}
	events, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	if err != nil {
		log.Fatal(err)
	}
	hub := notify.New(notify.Options{Broker: broker, Log: events}) // events get ids every instance can resume from
	defer hub.Close()                                              // before client.Close
	store, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	part, err := sessions.New(hub, sessions.Options{Store: store})
	if err != nil {
		log.Fatal(err)
	}

	// dp goes in the Authenticator's Options; the parts in mcphttp.New.
	_, _, _ = dp, limiter.Part(), part
}

// TestExampleFleet is Example run: two instances (each its own client,
// stores, Limiter and hub) on one redis-server. A caller's budget is one
// across both, a change published on one reaches the caller's stream on
// the other, and a DPoP proof accepted by one is refused by the other.
func TestExampleFleet(t *testing.T) {
	srv, _ := startRedis(t)
	f := newFleet(t)
	type inst struct {
		auth    *authn.Authenticator
		limiter *ratelimit.Limiter
		hub     *notify.Hub
	}
	var fleet []inst
	for range 2 {
		client := srv.Client(t)
		replay, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{Now: f.clock.Now, Logger: f.log})
		require.NoError(t, err)
		rates, err := redisstore.NewRateStore(client, redisstore.RateOptions{})
		require.NoError(t, err)
		broker, err := redisstore.NewBroker(client, redisstore.BrokerOptions{Logger: f.log})
		require.NoError(t, err)
		limiter, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 3}, Store: rates, Now: f.clock.Now})
		require.NoError(t, err)
		events, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
		require.NoError(t, err)
		hub := notify.New(notify.Options{Broker: broker, Log: events, Logger: f.log})
		t.Cleanup(hub.Close)
		fleet = append(fleet, inst{f.instance(t, replay), limiter, hub})
		waitStats(t, broker, func(s redisstore.BrokerStats) bool { return s.Connects == 1 }, "not listening")
	}
	a, b := fleet[0], fleet[1]

	// The budget: 3 reads at once for alice, wherever they land.
	alice := &principal.Principal{Issuer: f.is.ID(), Subject: "alice"}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	var got []bool
	for i := range 5 {
		ok, _ := fleet[i%2].limiter.Allow(r, alice, mcphttp.ClassRead)
		got = append(got, ok)
	}
	assert.Equal(t, []bool{true, true, true, false, false}, got)

	// A change made through b reaches alice's stream on a.
	sub := a.hub.Subscribe("alice")
	defer sub.Close()
	b.hub.ListChanged(context.Background(), "alice")
	var e notify.Event
	select {
	case e = <-sub.Events():
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	assert.Equal(t, notify.Event{Subject: "alice", Kind: notify.ListChanged, ID: e.ID}, e)
	// What a stream of alice's that resumes after it on a is given: what
	// came after, from the log b wrote.
	b.hub.ResourceUpdated(context.Background(), "alice", "docs://documents/1")
	missed, ok, err := a.hub.Since(context.Background(), "alice", e.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, missed, 1)
	assert.Equal(t, "docs://documents/1", missed[0].URI)

	// A new Redis refuses DPoP proofs for a period (it may have forgotten
	// some); then a proof accepted by a is a replay on b.
	c := f.caller(t, "alice")
	w := send(a.auth, c, f.proof(t, c))
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "126", w.Header().Get("Retry-After"))
	f.clock.Advance(period)
	p := f.proof(t, c)
	assert.Equal(t, http.StatusOK, send(a.auth, c, p).Code)
	assert.Equal(t, "invalid_dpop_proof", dpopError(send(b.auth, c, p)))
}

package redisstore_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

const (
	testResource = "https://mcp.example.com/mcp"
	testURL      = testResource
)

// newClock returns the fake clock shared by the Authenticators, the
// issuer and the stores of a test.
func newClock() *fakeclock.Clock { return fakeclock.New(time.Unix(1_800_000_000, 0)) }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer = logbuf.Buffer

func newLogger() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// period is the store's counter period (and quarantine) for the default
// window and skew: 2 × 60 s + 5 s + 1 s.
const period = 2*redisstore.DefaultProofWindow + redisstore.DefaultClockSkew + time.Second

// newReplayStore returns a store on client with the test's clock, past
// the quarantine that a Redis without the store's marker begins with
// (asserted).
func newReplayStore(t testing.TB, client redis.UniversalClient, clk *fakeclock.Clock, o redisstore.ReplayOptions) *redisstore.ReplayStore {
	t.Helper()
	o.Now = clk.Now
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := redisstore.NewReplayStore(client, o)
	require.NoError(t, err)
	return s
}

// passQuarantine makes the first call on a fresh Redis (which begins the
// quarantine), checks it, and moves the clock past it.
func passQuarantine(t testing.TB, s *redisstore.ReplayStore, clk *fakeclock.Clock) {
	t.Helper()
	err := s.Remember(context.Background(), "quarantine-probe", "probe-caller", clk.Now().Add(time.Minute))
	var ue *dpop.UnavailableError
	require.ErrorAs(t, err, &ue, "a Redis without the marker begins a quarantine")
	require.Equal(t, period, ue.RetryAfter)
	clk.Advance(period)
}

// fleet is Authenticators (instances) sharing an issuer, a clock and
// a replay store each (the same one, or stores on the same Redis).
type fleet struct {
	clock *fakeclock.Clock
	is    *testissuer.Issuer
	logs  *syncBuffer
	log   *slog.Logger
}

func newFleet(t testing.TB) *fleet {
	t.Helper()
	clk := newClock()
	log, logs := newLogger()
	is := testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now})
	return &fleet{clock: clk, is: is, logs: logs, log: log}
}

// instance returns an Authenticator (one instance of the fleet) that
// remembers proofs in store.
func (f *fleet) instance(t testing.TB, store dpop.ReplayStore) *authn.Authenticator {
	t.Helper()
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: f.is.ID(), Resource: testResource, JWKSURL: f.is.JWKSURL(), Logger: f.log, Now: f.clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	a, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{Now: f.clock.Now}), authn.Options{
		Resource: testResource, Scopes: []string{"read"}, Logger: f.log,
		DPoP: dpop.Options{Mode: dpop.Allowed, Now: f.clock.Now, ReplayStore: store}})
	require.NoError(t, err)
	return a
}

// caller is a client with a DPoP key and a token bound to it.
type caller struct {
	key   *testissuer.ProofKey
	token string
}

func (f *fleet) caller(t testing.TB, subject string) caller {
	t.Helper()
	k, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, err := k.Thumbprint()
	require.NoError(t, err)
	tok := f.is.Token(t, testissuer.Claims{Subject: subject, ClientID: "client-1", Scopes: []string{"read"}, DPoPThumbprint: jkt},
		testissuer.WithKey(testissuer.KidES256))
	return caller{key: k, token: tok}
}

// proof signs a fresh proof for a POST to testURL at the fleet's clock.
func (f *fleet) proof(t testing.TB, c caller) string {
	t.Helper()
	p, err := c.key.Sign(testissuer.Proof{Method: http.MethodPost, URL: testURL, Token: c.token, Time: f.clock.Now()})
	require.NoError(t, err)
	return p
}

// send authenticates a DPoP request with the proof through a's Handler.
func send(a *authn.Authenticator, c caller, proof string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, testURL, nil)
	r.Header.Set("Authorization", "DPoP "+c.token)
	r.Header.Set("DPoP", proof)
	w := httptest.NewRecorder()
	a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		w.Header().Set("X-Subject", p.Subject)
	})).ServeHTTP(w, r)
	return w
}

// dpopError returns the error attribute of the DPoP challenge of w ("" when
// there is none).
func dpopError(w *httptest.ResponseRecorder) string {
	for _, v := range w.Header().Values("WWW-Authenticate") {
		if !strings.HasPrefix(v, "DPoP ") {
			continue
		}
		i := strings.Index(v, `error="`)
		if i < 0 {
			return ""
		}
		rest := v[i+len(`error="`):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	return ""
}

// startRedis starts a throw-away server and returns it with a client.
func startRedis(t testing.TB) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	return srv, srv.Client(t)
}

// backend is the Redis a contract test runs on: one redis-server, or,
// inside TestOnCluster, a Redis Cluster. Client returns another client of
// it (another instance).
type backend interface {
	Client(t testing.TB) redis.UniversalClient
}

type singleBackend struct{ srv *redistest.Server }

func (b singleBackend) Client(t testing.TB) redis.UniversalClient { return b.srv.Client(t) }

// clusterBackend is a running cluster, emptied before each test.
type clusterBackend struct{ c *redistest.Cluster }

func (b clusterBackend) Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	c := redis.NewClusterClient(redisstore.ClusterOptions(b.c.Addrs()...))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// onCluster is set while TestOnCluster runs the contract tests (one at a
// time, never in parallel).
var onCluster *redistest.Cluster

// startBackend returns the backend of a contract test and a client of it.
func startBackend(t testing.TB) (backend, redis.UniversalClient) {
	t.Helper()
	if onCluster != nil {
		require.NoError(t, onCluster.FlushAll(context.Background()))
		b := clusterBackend{onCluster}
		return b, b.Client(t)
	}
	srv := redistest.Start(t)
	return singleBackend{srv}, srv.Client(t)
}

// allKeys returns the keys matching pattern, of every master of a
// cluster.
func allKeys(client redis.UniversalClient, pattern string) ([]string, error) {
	ctx := context.Background()
	cc, ok := client.(*redis.ClusterClient)
	if !ok {
		return client.Keys(ctx, pattern).Result()
	}
	var mu sync.Mutex
	var out []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		keys, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		defer mu.Unlock()
		out = append(out, keys...)
		return err
	})
	return out, err
}

package redisstore_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

func newRateStore(t testing.TB, client redis.UniversalClient, o redisstore.RateOptions) *redisstore.RateStore {
	t.Helper()
	s, err := redisstore.NewRateStore(client, o)
	require.NoError(t, err)
	return s
}

func newLimiter(t testing.TB, l ratelimit.Limits) *ratelimit.Limiter {
	t.Helper()
	rl, err := ratelimit.New(l)
	require.NoError(t, err)
	return rl
}

func who(subject string) *principal.Principal {
	return &principal.Principal{Issuer: "https://issuer.example", Subject: subject, ClientID: "client-1"}
}

var anyRequest = httptest.NewRequest(http.MethodPost, "/mcp", nil)

// The Redis buckets decide as the in-memory ones: the same calls at the
// same (fake) times, for three callers and two classes, get the same
// answers and the same Retry-After (to the millisecond), whether they
// take or peek.
func TestRateStoreAsInMemory(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	limits := ratelimit.Limits{
		List: ratelimit.Rate{PerSecond: 10, Burst: 5}, Read: ratelimit.Rate{PerSecond: 2.5, Burst: 3},
		Refused: ratelimit.Rate{PerSecond: 1, Burst: 2}, Now: clk.Now,
	}
	mem := newLimiter(t, limits)
	limits.Store = newRateStore(t, client, redisstore.RateOptions{})
	red := newLimiter(t, limits)

	rng := rand.New(rand.NewPCG(1, 2))
	callers := []*principal.Principal{who("alice"), who("bob"), nil}
	classes := []string{mcphttp.ClassList, mcphttp.ClassRead}
	allowed, refused := 0, 0
	for i := range 3000 {
		// Steps of whole 7 µs: never on a token's exact boundary, where
		// float32 tokens (in memory) and µs (in Redis) may round apart.
		clk.Advance(time.Duration(rng.IntN(5000)) * 7 * time.Microsecond)
		c := callers[rng.IntN(len(callers))]
		r := anyRequest
		if c == nil {
			r = httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.RemoteAddr = "192.0.2.7:4711"
		}
		var okM, okR bool
		var retryM, retryR time.Duration
		switch rng.IntN(4) {
		case 0:
			okM, retryM = mem.Admit(r)
			okR, retryR = red.Admit(r)
		case 1:
			mem.Refused(r)
			red.Refused(r)
			continue
		default:
			class := classes[rng.IntN(len(classes))]
			okM, retryM = mem.Allow(r, c, class)
			okR, retryR = red.Allow(r, c, class)
		}
		require.Equal(t, okM, okR, "call %d", i)
		require.InDelta(t, retryM.Seconds(), retryR.Seconds(), 1e-3, "call %d", i)
		if okR {
			allowed++
		} else {
			refused++
		}
	}
	assert.Greater(t, allowed, 500)
	assert.Greater(t, refused, 500, "the sequence runs into the limits")
}

// Two Limiters (two instances) sharing a store hold one budget: a caller
// alternating between them, or hammering both from 32 goroutines, gets
// the burst and the rate, not twice that.
func TestRateTwoLimitersOneBudget(t *testing.T) {
	srv, client := startBackend(t)
	clk := newClock()
	rate := ratelimit.Rate{PerSecond: 2, Burst: 4}
	a := newLimiter(t, ratelimit.Limits{Read: rate, Now: clk.Now, Store: newRateStore(t, client, redisstore.RateOptions{})})
	b := newLimiter(t, ratelimit.Limits{Read: rate, Now: clk.Now, Store: newRateStore(t, srv.Client(t), redisstore.RateOptions{})})
	one := newLimiter(t, ratelimit.Limits{Read: rate, Now: clk.Now}) // one process, in memory: the budget
	alice := who("alice")

	allowed, budget := 0, 0
	for i := range 200 { // 0 to 9.95 s, a call every 50 ms, alternating
		if ok, _ := []*ratelimit.Limiter{a, b}[i%2].Allow(anyRequest, alice, mcphttp.ClassRead); ok {
			allowed++
		}
		if ok, _ := one.Allow(anyRequest, alice, mcphttp.ClassRead); ok {
			budget++
		}
		clk.Advance(50 * time.Millisecond)
	}
	assert.Equal(t, 4+19, budget, "the burst and 2 a second for 9.95 s")
	assert.Equal(t, budget, allowed, "across both instances: one budget")

	clk.Advance(time.Minute) // full again
	var n atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			for range 4 {
				if ok, _ := []*ratelimit.Limiter{a, b}[i%2].Allow(anyRequest, alice, mcphttp.ClassRead); ok {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(4), n.Load(), "128 calls at one instant: the burst, once")
	ok, _ := a.Allow(anyRequest, who("bob"), mcphttp.ClassRead)
	assert.True(t, ok, "bob has his own bucket")
}

// Keys are the prefix and a SHA-256: no identity, no address; each
// expires when its bucket is full again.
func TestRateKeysHashedAndExpiring(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	store := newRateStore(t, client, redisstore.RateOptions{Prefix: "app1:rl:"})
	l := newLimiter(t, ratelimit.Limits{List: ratelimit.Rate{PerSecond: 10, Burst: 5}, Refused: ratelimit.Rate{PerSecond: 1, Burst: 3},
		Now: clk.Now, Store: store})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "198.51.100.23:5555"
	for range 2 {
		l.Allow(r, who("alice@example.com"), mcphttp.ClassList)
		l.Allow(r, nil, mcphttp.ClassList) // by address
	}
	l.Refused(r)
	ctx := context.Background()
	keys, err := allKeys(client, "*")
	require.NoError(t, err)
	require.Len(t, keys, 3, "alice's list bucket, the address's list bucket and its refusals: %v", keys)
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, "app1:rl:"), k)
		assert.Len(t, k, len("app1:rl:")+43, "the prefix and a base64url SHA-256: %q", k)
		for _, raw := range []string{"alice", "example.com", "issuer", "198.51.100.23", string([]byte{198, 51, 100, 23})} {
			assert.NotContains(t, k, raw)
		}
		ttl, err := client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Duration(0), "%s expires", k)
		assert.LessOrEqual(t, ttl, 2*time.Second, "%s: when its bucket is full again", k)
	}
	assert.Equal(t, store.Key("anything"), store.Key("anything"))
	assert.NotEqual(t, store.Key("a"), store.Key("b"))
}

// A bucket's key lives until the bucket is full again (its tokens spent
// times the interval), and a peek writes nothing.
func TestRateStoreDirect(t *testing.T) {
	_, client := startBackend(t)
	s := newRateStore(t, client, redisstore.RateOptions{})
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	b := ratelimit.Bucket{Key: "r:salice", PerSecond: 4, Burst: 2}

	ok, _, err := s.Peek(ctx, b, now)
	require.NoError(t, err)
	assert.True(t, ok)
	n, err := client.Exists(ctx, s.Key(b.Key)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a peek writes nothing")

	for range 2 {
		ok, _, err = s.Take(ctx, b, now)
		require.NoError(t, err)
		require.True(t, ok)
	}
	ttl, err := client.PTTL(ctx, s.Key(b.Key)).Result()
	require.NoError(t, err)
	assert.InDelta(t, 500, ttl.Milliseconds(), 50, "two tokens at 4 a second: full in 500 ms")
	ok, retry, err := s.Take(ctx, b, now)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, 250*time.Millisecond, retry)
	ok, retry, err = s.Peek(ctx, b, now.Add(249*time.Millisecond))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, time.Millisecond, retry)
	ok, _, err = s.Take(ctx, b, now.Add(250*time.Millisecond))
	require.NoError(t, err)
	assert.True(t, ok)

	for _, bad := range []ratelimit.Bucket{{Key: "x", PerSecond: 0, Burst: 1}, {Key: "x", PerSecond: 1, Burst: 0}, {Key: "x", PerSecond: -1, Burst: 1}} {
		_, _, err := s.Take(ctx, bad, now)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = redisstore.NewRateStore(nil, redisstore.RateOptions{})
	assert.Error(t, err)
}

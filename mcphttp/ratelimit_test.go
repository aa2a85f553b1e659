package mcphttp_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// fakeClock is a RateLimits.Now that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newLimiter(t testing.TB, l mcphttp.RateLimits) *mcphttp.RateLimiter {
	t.Helper()
	rl, err := mcphttp.NewRateLimiter(l)
	require.NoError(t, err)
	return rl
}

// TestRateLimit429: past the burst a caller gets 429 with Retry-After and
// a JSON-RPC error; the bucket refills with time.
func TestRateLimit429(t *testing.T) {
	clock := newFakeClock()
	f := newFixture(t, fixtureOptions{limiter: newLimiter(t, mcphttp.RateLimits{
		List: mcphttp.Rate{PerSecond: 0.5, Burst: 3}, Now: clock.Now,
	})})
	alice := f.token(t, "alice")
	list := request{body: legacy(1, "resources/list", nil), token: alice, headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}
	for i := range 3 {
		require.Equal(t, http.StatusOK, f.do(t, list).Code, "call %d is within the burst", i)
	}
	w := f.do(t, list)
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "2", w.Header().Get("Retry-After"), "one token at 0.5/s")
	r := decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(mcphttp.CodeRateLimited), r.Error.Code)
	assert.Equal(t, "1", string(r.ID))
	assert.JSONEq(t, `{"retryAfter":2}`, string(r.Error.Data))
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))

	clock.Advance(time.Second)
	w = f.do(t, list)
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "half a token after 1 s")
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	clock.Advance(time.Second)
	assert.Equal(t, http.StatusOK, f.do(t, list).Code, "a whole token after 2 s")
	assert.Equal(t, http.StatusTooManyRequests, f.do(t, list).Code)

	// The modern era gets the same answer.
	body, h := modern(2, "resources/list", nil)
	w = f.do(t, request{body: body, headers: h, token: alice})
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.NotEmpty(t, w.Header().Get("Retry-After"))

	// Notifications are never limited.
	w = f.do(t, request{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, token: alice})
	assert.Equal(t, http.StatusAccepted, w.Code)
}

// TestRateLimitClasses: each method class has its own bucket; an
// unlimited class is never refused.
func TestRateLimitClasses(t *testing.T) {
	clock := newFakeClock()
	f := newFixture(t, fixtureOptions{limiter: newLimiter(t, mcphttp.RateLimits{
		List: mcphttp.Rate{PerSecond: 1, Burst: 1}, Read: mcphttp.Rate{PerSecond: 1, Burst: 1},
		Search: mcphttp.Rate{PerSecond: 1, Burst: 1}, Now: clock.Now,
	})})
	alice := f.token(t, "alice")
	calls := map[string]string{
		"list":      legacy(1, "resources/list", nil),
		"templates": legacy(2, "resources/templates/list", nil), // the list class too
		"read":      legacy(3, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}),
		"complete": legacy(4, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"},
			"argument": map[string]any{"name": "id", "value": "1"}}),
		"ping": legacy(5, "ping", nil), // Other: not limited here
	}
	do := func(name string) int { return f.do(t, request{body: calls[name], token: alice}).Code }
	assert.Equal(t, http.StatusOK, do("list"))
	assert.Equal(t, http.StatusTooManyRequests, do("templates"), "templates/list shares the list bucket")
	assert.Equal(t, http.StatusOK, do("read"), "the read bucket is its own")
	assert.Equal(t, http.StatusTooManyRequests, do("read"))
	assert.Equal(t, http.StatusOK, do("complete"), "completion is in the search class")
	assert.Equal(t, http.StatusTooManyRequests, do("complete"))
	for range 20 {
		assert.Equal(t, http.StatusOK, do("ping"))
	}
}

// TestRateLimitNoisyNeighbour floods as one principal from many
// goroutines while another principal's calls all succeed: buckets are per
// caller.
func TestRateLimitNoisyNeighbour(t *testing.T) {
	f := newFixture(t, fixtureOptions{limiter: newLimiter(t, mcphttp.RateLimits{
		List: mcphttp.Rate{PerSecond: 5, Burst: 10}, Read: mcphttp.Rate{PerSecond: 5, Burst: 10},
	})})
	alice, bob := f.token(t, "alice"), f.token(t, "bob")
	var refused, served atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch f.do(t, request{body: legacy(1, "resources/list", nil), token: alice}).Code {
				case http.StatusTooManyRequests:
					refused.Add(1)
				case http.StatusOK:
					served.Add(1)
				}
			}
		})
	}
	for refused.Load() < 200 { // the flood is on
		runtime.Gosched()
	}
	for i := range 10 { // bob, within his own burst, during the flood
		assert.Equal(t, http.StatusOK, f.do(t, request{body: legacy(i, "resources/list", nil), token: bob}).Code, "bob's call %d", i)
		w := f.do(t, request{body: legacy(i, "resources/read", map[string]any{"uri": "docs://documents/bob-0001"}), token: bob})
		assert.Equal(t, http.StatusOK, w.Code, "bob's read %d", i)
	}
	close(stop)
	wg.Wait()
	assert.Positive(t, served.Load(), "alice got her burst")
	t.Logf("flood: alice %d served, %d refused; bob 20 of 20 served", served.Load(), refused.Load())
}

// TestRateLimitKeys: who shares a bucket.
func TestRateLimitKeys(t *testing.T) {
	clock := newFakeClock()
	one := mcphttp.Rate{PerSecond: 1, Burst: 1}
	req := func(addr string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = addr
		return r
	}
	alice := &principal.Principal{Subject: "alice", ClientID: "app-1"}
	for _, tc := range []struct {
		name     string
		key      func(*http.Request, *principal.Principal) string
		a, b     *http.Request
		pa, pb   *principal.Principal
		together bool
	}{
		{name: "one subject through two clients", a: req("192.0.2.1:1"), b: req("192.0.2.2:2"),
			pa: alice, pb: &principal.Principal{Subject: "alice", ClientID: "app-2"}, together: true},
		// Several issuers: alice of one is not alice of another (Principal.Issuer).
		{name: "one subject of two issuers", a: req("192.0.2.1:1"), b: req("192.0.2.1:1"),
			pa: &principal.Principal{Subject: "alice", Issuer: "https://a.example"}, pb: &principal.Principal{Subject: "alice", Issuer: "https://b.example"}},
		{name: "one subject of one issuer", a: req("192.0.2.1:1"), b: req("192.0.2.2:1"), together: true,
			pa: &principal.Principal{Subject: "alice", Issuer: "https://a.example"}, pb: &principal.Principal{Subject: "alice", Issuer: "https://a.example"}},
		{name: "two subjects from one address", a: req("192.0.2.1:1"), b: req("192.0.2.1:1"),
			pa: alice, pb: &principal.Principal{Subject: "bob", ClientID: "app-1"}},
		{name: "a token without subject is keyed on its client", a: req("192.0.2.1:1"), b: req("192.0.2.9:1"),
			pa: &principal.Principal{ClientID: "svc"}, pb: &principal.Principal{ClientID: "svc"}, together: true},
		{name: "a client id is not a subject", a: req("192.0.2.1:1"), b: req("192.0.2.1:1"),
			pa: &principal.Principal{ClientID: "alice"}, pb: &principal.Principal{Subject: "alice"}},
		{name: "anonymous: one address, two ports", a: req("192.0.2.1:1000"), b: req("192.0.2.1:2000"), together: true},
		{name: "anonymous: two addresses", a: req("192.0.2.1:1000"), b: req("192.0.2.2:1000")},
		{name: "anonymous: an IPv4-mapped IPv6 address is the IPv4 one", a: req("192.0.2.1:1"), b: req("[::ffff:192.0.2.1]:2"), together: true},
		// One host holds a whole /64: rotating within it gains nothing.
		{name: "anonymous: one IPv6 /64", a: req("[2001:db8:1:2::1]:1"), b: req("[2001:db8:1:2:ffff::9]:1"), together: true},
		{name: "anonymous: two IPv6 /64s", a: req("[2001:db8:1:2::1]:1"), b: req("[2001:db8:1:3::1]:1")},
		{name: "anonymous: not host:port", a: req("@unix"), b: req("@unix"), together: true},
		{name: "an authenticated caller is not its address", a: req("192.0.2.1:1"), b: req("192.0.2.1:1"), pa: alice},
		{name: "a Key (behind a proxy)", a: req("10.0.0.1:1"), b: req("10.0.0.1:1"),
			key: func(r *http.Request, p *principal.Principal) string {
				if p != nil {
					return ""
				}
				return r.Header.Get("X-Forwarded-For")
			}},
		{name: "a Key's empty result is the default key", a: req("10.0.0.1:1"), b: req("10.0.0.2:1"), pa: alice, pb: alice, together: true,
			key: func(*http.Request, *principal.Principal) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(t, mcphttp.RateLimits{Read: one, Key: tc.key, Now: clock.Now})
			if tc.key != nil && tc.pa == nil {
				tc.a.Header.Set("X-Forwarded-For", "198.51.100.1")
				tc.b.Header.Set("X-Forwarded-For", "198.51.100.2")
			}
			ok, _ := l.Allow(tc.a, tc.pa, "resources/read")
			require.True(t, ok)
			ok, _ = l.Allow(tc.b, tc.pb, "resources/read")
			assert.Equal(t, !tc.together, ok, "a second caller with its own bucket is allowed")
		})
	}
}

// TestRateLimitMemory: 100,000 distinct anonymous addresses stay within
// MaxCallers, and refilled buckets are forgotten.
func TestRateLimitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 callers")
	}
	clock := newFakeClock()
	l := newLimiter(t, mcphttp.RateLimits{Read: mcphttp.Rate{PerSecond: 1, Burst: 5}, Now: clock.Now})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const callers = 100_000
	for i := range callers {
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:443", i>>16, (i>>8)&255, i&255)
		ok, _ := l.Allow(r, nil, "resources/read")
		require.True(t, ok, "a new caller starts with a full bucket")
		if i%1000 == 999 {
			clock.Advance(time.Millisecond) // 100 ms in all: nothing refills
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := l.Len()
	assert.LessOrEqual(t, n, mcphttp.DefaultMaxCallers, "bounded by MaxCallers")
	assert.Greater(t, n, mcphttp.DefaultMaxCallers*9/10, "the table is used, not emptied")
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d distinct addresses: %d tracked, heap %+d KiB (%.0f bytes a tracked caller)", callers, n, heap>>10, float64(heap)/float64(n))
	assert.Less(t, heap, int64(16<<20), "well under 16 MiB")

	// After the refill time (5 s) every bucket is full: new callers sweep
	// the shards, and the table holds only the recent ones.
	clock.Advance(6 * time.Second)
	for i := range 1000 {
		r.RemoteAddr = fmt.Sprintf("172.16.%d.%d:443", i>>8, i&255)
		l.Allow(r, nil, "resources/read")
	}
	assert.LessOrEqual(t, l.Len(), 1000, "refilled callers are forgotten")

	// A small table forgets the least recently seen callers.
	small := newLimiter(t, mcphttp.RateLimits{Read: mcphttp.Rate{PerSecond: 1, Burst: 5}, MaxCallers: 1000, Now: clock.Now})
	for i := range 10_000 {
		r.RemoteAddr = fmt.Sprintf("10.1.%d.%d:443", i>>8, i&255)
		small.Allow(r, nil, "resources/read")
	}
	assert.LessOrEqual(t, small.Len(), 1024, "1000 rounded up to 64 shards")
}

func TestRateLimitStreamsAndBatches(t *testing.T) {
	clock := newFakeClock()
	l := newLimiter(t, mcphttp.RateLimits{List: mcphttp.Rate{PerSecond: 1, Burst: 2}, Other: mcphttp.Rate{PerSecond: 1, Burst: 1}, Now: clock.Now})
	f := newFixture(t, fixtureOptions{limiter: l})
	alice := f.token(t, "alice")

	// A batch whose second element is over the limit: 429 for the whole.
	batch := "[" + legacy(1, "resources/list", nil) + "," + legacy(2, "resources/list", nil) + "," + legacy(3, "resources/list", nil) + "]"
	w := f.do(t, request{body: batch, token: alice})
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	var resp map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp), "one error object, not an array")
	assert.JSONEq(t, "3", string(resp["id"]))

	// GET and DELETE of a session are in the Other class.
	hub := newNotifyFixture(t, 8)
	lim := newLimiter(t, mcphttp.RateLimits{Other: mcphttp.Rate{PerSecond: 1, Burst: 2}, Now: clock.Now})
	ep, err := mcphttp.New(hub.inv, mcphttp.Options{Authenticator: hub.auth, Notifications: hub.hub, RateLimiter: lim})
	require.NoError(t, err)
	srv := httptest.NewServer(ep)
	t.Cleanup(srv.Close)
	hub.srv = srv
	token := hub.token(t, "alice")
	session := hub.initialize(t, token) // Other: 1 of 2
	resp2 := hub.get(t, token, session) // 2 of 2: the stream opens
	assert.Equal(t, http.StatusOK, resp2.StatusCode)
	resp2.Body.Close()
	resp3 := hub.get(t, token, session)
	defer resp3.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp3.StatusCode)
	assert.NotEmpty(t, resp3.Header.Get("Retry-After"))
}

func TestNewRateLimiterErrors(t *testing.T) {
	for _, l := range []mcphttp.RateLimits{
		{List: mcphttp.Rate{PerSecond: -1}},
		{Read: mcphttp.Rate{PerSecond: math.NaN()}},
		{Search: mcphttp.Rate{PerSecond: math.Inf(1)}},
		{Other: mcphttp.Rate{PerSecond: 1, Burst: -1}},
		{MaxCallers: -1},
	} {
		_, err := mcphttp.NewRateLimiter(l)
		assert.Error(t, err, "%+v", l)
	}
	l, err := mcphttp.NewRateLimiter(mcphttp.RateLimits{})
	require.NoError(t, err)
	ok, _ := l.Allow(httptest.NewRequest(http.MethodPost, "/", nil), nil, "resources/read")
	assert.True(t, ok, "the zero value limits nothing")
	var nilLimiter *mcphttp.RateLimiter
	ok, _ = nilLimiter.Allow(nil, nil, "ping")
	assert.True(t, ok)
	assert.Zero(t, l.Len())

	// Burst defaults to the rate rounded up.
	l = newLimiter(t, mcphttp.RateLimits{Read: mcphttp.Rate{PerSecond: 2.5}, Now: newFakeClock().Now})
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	n := 0
	for ok, _ := l.Allow(r, nil, "resources/read"); ok; ok, _ = l.Allow(r, nil, "resources/read") {
		n++
	}
	assert.Equal(t, 3, n)
}

// BenchmarkRateLimiterAllow is the limiter's decision: one caller again
// and again, and many callers in parallel (each goroutine its own).
func BenchmarkRateLimiterAllow(b *testing.B) {
	l := newLimiter(b, mcphttp.RateLimits{Read: mcphttp.Rate{PerSecond: 1e9, Burst: 1 << 30}})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	p := &principal.Principal{Subject: "alice", ClientID: "app"}
	b.Run("one-caller", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.Allow(r, p, "resources/read")
		}
	})
	b.Run("parallel-callers", func(b *testing.B) {
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			me := &principal.Principal{Subject: fmt.Sprintf("user-%d", n.Add(1))}
			for pb.Next() {
				l.Allow(r, me, "resources/read")
			}
		})
	})
	b.Run("anonymous", func(b *testing.B) {
		r.RemoteAddr = "[2001:db8::1]:443"
		b.ReportAllocs()
		for b.Loop() {
			l.Allow(r, nil, "resources/read")
		}
	})
}

package ratelimit_test

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

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// fakeClock is a RateLimits.Now that tests move by hand.
type fakeClock = fakeclock.Clock

func newFakeClock() *fakeClock { return fakeclock.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) }

func newLimiter(t testing.TB, l ratelimit.Limits) *ratelimit.Limiter {
	t.Helper()
	rl, err := ratelimit.New(l)
	require.NoError(t, err)
	return rl
}

// TestRateLimit429: past the burst a caller gets 429 with Retry-After and
// a JSON-RPC error; the bucket refills with time.
func TestRateLimit429(t *testing.T) {
	clock := newFakeClock()
	f := mcptest.New(t, mcptest.Options{}, (newLimiter(t, ratelimit.Limits{
		List: ratelimit.Rate{PerSecond: 0.5, Burst: 3}, Now: clock.Now,
	})).Part())
	alice := f.Token(t, "alice")
	list := mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}
	for i := range 3 {
		require.Equal(t, http.StatusOK, f.Do(t, list).Code, "call %d is within the burst", i)
	}
	w := f.Do(t, list)
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "2", w.Header().Get("Retry-After"), "one token at 0.5/s")
	r := mcptest.Decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(ratelimit.CodeRateLimited), r.Error.Code)
	assert.Equal(t, "1", string(r.ID))
	assert.JSONEq(t, `{"retryAfterMs":2000}`, string(r.Error.Data), "the MCP draft's shape (SEP-3304)")
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))

	clock.Advance(time.Second)
	w = f.Do(t, list)
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "half a token after 1 s")
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	clock.Advance(time.Second)
	assert.Equal(t, http.StatusOK, f.Do(t, list).Code, "a whole token after 2 s")
	assert.Equal(t, http.StatusTooManyRequests, f.Do(t, list).Code)

	// The modern era gets the same answer.
	body, h := mcptest.Modern(2, "resources/list", nil)
	w = f.Do(t, mcptest.Request{Body: body, Headers: h, Token: alice})
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.NotEmpty(t, w.Header().Get("Retry-After"))

	// Notifications are never limited.
	w = f.Do(t, mcptest.Request{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Token: alice})
	assert.Equal(t, http.StatusAccepted, w.Code)
}

// TestRateLimitClasses: each method class has its own bucket; an
// unlimited class is never refused.
func TestRateLimitClasses(t *testing.T) {
	clock := newFakeClock()
	f := mcptest.New(t, mcptest.Options{}, (newLimiter(t, ratelimit.Limits{
		List: ratelimit.Rate{PerSecond: 1, Burst: 1}, Read: ratelimit.Rate{PerSecond: 1, Burst: 1},
		Search: ratelimit.Rate{PerSecond: 1, Burst: 1}, Now: clock.Now,
	})).Part())
	alice := f.Token(t, "alice")
	calls := map[string]string{
		"list":      mcptest.Legacy(1, "resources/list", nil),
		"templates": mcptest.Legacy(2, "resources/templates/list", nil), // the list class too
		"read":      mcptest.Legacy(3, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}),
		"complete": mcptest.Legacy(4, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"},
			"argument": map[string]any{"name": "id", "value": "1"}}),
		"ping": mcptest.Legacy(5, "ping", nil), // Other: not limited here
	}
	do := func(name string) int { return f.Do(t, mcptest.Request{Body: calls[name], Token: alice}).Code }
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
	f := mcptest.New(t, mcptest.Options{}, (newLimiter(t, ratelimit.Limits{
		List: ratelimit.Rate{PerSecond: 5, Burst: 10}, Read: ratelimit.Rate{PerSecond: 5, Burst: 10},
	})).Part())
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
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
				switch f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice}).Code {
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
		assert.Equal(t, http.StatusOK, f.Do(t, mcptest.Request{Body: mcptest.Legacy(i, "resources/list", nil), Token: bob}).Code, "bob's call %d", i)
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(i, "resources/read", map[string]any{"uri": "docs://documents/bob-0001"}), Token: bob})
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
	one := ratelimit.Rate{PerSecond: 1, Burst: 1}
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
			l := newLimiter(t, ratelimit.Limits{Read: one, Key: tc.key, Now: clock.Now})
			if tc.key != nil && tc.pa == nil {
				tc.a.Header.Set("X-Forwarded-For", "198.51.100.1")
				tc.b.Header.Set("X-Forwarded-For", "198.51.100.2")
			}
			ok, _ := l.Allow(tc.a, tc.pa, mcphttp.ClassRead)
			require.True(t, ok)
			ok, _ = l.Allow(tc.b, tc.pb, mcphttp.ClassRead)
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
	l := newLimiter(t, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 5}, Now: clock.Now})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const callers = 100_000
	for i := range callers {
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:443", i>>16, (i>>8)&255, i&255)
		ok, _ := l.Allow(r, nil, mcphttp.ClassRead)
		require.True(t, ok, "a new caller starts with a full bucket")
		if i%1000 == 999 {
			clock.Advance(time.Millisecond) // 100 ms in all: nothing refills
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := l.Len()
	assert.LessOrEqual(t, n, ratelimit.DefaultMaxCallers, "bounded by MaxCallers")
	assert.Greater(t, n, ratelimit.DefaultMaxCallers*9/10, "the table is used, not emptied")
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d distinct addresses: %d tracked, heap %+d KiB (%.0f bytes a tracked caller)", callers, n, heap>>10, float64(heap)/float64(n))
	assert.Less(t, heap, int64(16<<20), "well under 16 MiB")

	// After the refill time (5 s) every bucket is full: new callers sweep
	// the shards, and the table holds only the recent ones.
	clock.Advance(6 * time.Second)
	for i := range 1000 {
		r.RemoteAddr = fmt.Sprintf("172.16.%d.%d:443", i>>8, i&255)
		l.Allow(r, nil, mcphttp.ClassRead)
	}
	assert.LessOrEqual(t, l.Len(), 1000, "refilled callers are forgotten")

	// A small table forgets the least recently seen callers.
	small := newLimiter(t, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 5}, MaxCallers: 1000, Now: clock.Now})
	for i := range 10_000 {
		r.RemoteAddr = fmt.Sprintf("10.1.%d.%d:443", i>>8, i&255)
		small.Allow(r, nil, mcphttp.ClassRead)
	}
	assert.LessOrEqual(t, small.Len(), 1024, "1000 rounded up to 64 shards")
}

func TestRateLimitStreamsAndBatches(t *testing.T) {
	clock := newFakeClock()
	l := newLimiter(t, ratelimit.Limits{List: ratelimit.Rate{PerSecond: 1, Burst: 2}, Other: ratelimit.Rate{PerSecond: 1, Burst: 1}, Now: clock.Now})
	f := mcptest.New(t, mcptest.Options{}, (l).Part())
	alice := f.Token(t, "alice")

	// A batch whose second element is over the limit: 429 for the whole.
	batch := "[" + mcptest.Legacy(1, "resources/list", nil) + "," + mcptest.Legacy(2, "resources/list", nil) + "," + mcptest.Legacy(3, "resources/list", nil) + "]"
	w := f.Do(t, mcptest.Request{Body: batch, Token: alice})
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	var resp map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp), "one error object, not an array")
	assert.JSONEq(t, "3", string(resp["id"]))

	// The HTTP methods parts serve (GET and DELETE of a legacy session)
	// are in the Other class.
	lim := newLimiter(t, ratelimit.Limits{Other: ratelimit.Rate{PerSecond: 1, Burst: 2}, Now: clock.Now})
	verbs := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		seam.Of(s).HandleHTTP(http.MethodGet, func(w http.ResponseWriter, _ *http.Request, _ *principal.Principal) { w.WriteHeader(http.StatusOK) })
		return nil
	})
	g := mcptest.New(t, mcptest.Options{}, lim.Part(), verbs)
	galice := g.Token(t, "alice")
	get := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+galice)
		w := httptest.NewRecorder()
		g.EP.ServeHTTP(w, r)
		return w
	}
	assert.Equal(t, http.StatusOK, get().Code)
	assert.Equal(t, http.StatusOK, get().Code)
	w = get()
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
}

func TestNewRateLimiterErrors(t *testing.T) {
	for _, l := range []ratelimit.Limits{
		{List: ratelimit.Rate{PerSecond: -1}},
		{Read: ratelimit.Rate{PerSecond: math.NaN()}},
		{Search: ratelimit.Rate{PerSecond: math.Inf(1)}},
		{Other: ratelimit.Rate{PerSecond: 1, Burst: -1}},
		{MaxCallers: -1},
	} {
		_, err := ratelimit.New(l)
		assert.Error(t, err, "%+v", l)
	}
	l, err := ratelimit.New(ratelimit.Limits{})
	require.NoError(t, err)
	ok, _ := l.Allow(httptest.NewRequest(http.MethodPost, "/", nil), nil, mcphttp.ClassRead)
	assert.True(t, ok, "the zero value limits nothing")
	var nilLimiter *ratelimit.Limiter
	ok, _ = nilLimiter.Allow(nil, nil, "ping")
	assert.True(t, ok)
	assert.Zero(t, l.Len())

	// Burst defaults to the rate rounded up.
	l = newLimiter(t, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 2.5}, Now: newFakeClock().Now})
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	n := 0
	for ok, _ := l.Allow(r, nil, mcphttp.ClassRead); ok; ok, _ = l.Allow(r, nil, mcphttp.ClassRead) {
		n++
	}
	assert.Equal(t, 3, n)
}

// BenchmarkRateLimiterAllow is the limiter's decision: one caller again
// and again, and many callers in parallel (each goroutine its own).
func BenchmarkRateLimiterAllow(b *testing.B) {
	l := newLimiter(b, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1e9, Burst: 1 << 30}})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	p := &principal.Principal{Subject: "alice", ClientID: "app"}
	b.Run("one-caller", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.Allow(r, p, mcphttp.ClassRead)
		}
	})
	b.Run("parallel-callers", func(b *testing.B) {
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			me := &principal.Principal{Subject: fmt.Sprintf("user-%d", n.Add(1))}
			for pb.Next() {
				l.Allow(r, me, mcphttp.ClassRead)
			}
		})
	})
	b.Run("anonymous", func(b *testing.B) {
		r.RemoteAddr = "[2001:db8::1]:443"
		b.ReportAllocs()
		for b.Loop() {
			l.Allow(r, nil, mcphttp.ClassRead)
		}
	})
}

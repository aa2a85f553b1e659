package ratelimit_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// MaxInFlight: a caller with that many calls in flight gets 429 (the MCP
// draft's -32023, Retry-After 1) for the next one, which takes nothing
// from its buckets; another caller is served meanwhile; once the calls
// return, calls one after another are served however many there are.
func TestMaxInFlight(t *testing.T) {
	limiter := newLimiter(t, ratelimit.Limits{MaxInFlight: 2, List: ratelimit.Rate{PerSecond: 0.001, Burst: 4}})
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var blocking atomic.Bool
	blocking.Store(true)
	// Inside the limiter's part (the first Use is the outermost): holds
	// each call until release.
	hold := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				if blocking.Load() {
					entered <- struct{}{}
					<-release
				}
				return next(ctx, c)
			}
		})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{}, limiter.Part(), hold)
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	lh := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	list := func(token string) mcptest.Request {
		return mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: token, Headers: lh}
	}
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Go(func() { codes <- f.Do(t, list(alice)).Code })
	}
	<-entered
	<-entered // both of alice's calls are in flight

	w := f.Do(t, list(alice))
	require.Equal(t, http.StatusTooManyRequests, w.Code, "a third call at once")
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	r := mcptest.Decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(ratelimit.CodeRateLimited), r.Error.Code)
	assert.JSONEq(t, `{"retryAfterMs":1000}`, string(r.Error.Data))

	bobDone := make(chan int, 1)
	go func() { bobDone <- f.Do(t, list(bob)).Code }()
	<-entered // bob is served beside alice's two
	blocking.Store(false)
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		assert.Equal(t, http.StatusOK, c)
	}
	assert.Equal(t, http.StatusOK, <-bobDone)

	// The refused call took no token: two more fit alice's burst of 4.
	for i := range 2 {
		assert.Equal(t, http.StatusOK, f.Do(t, list(alice)).Code, "sequential call %d", i)
	}
	assert.Equal(t, http.StatusTooManyRequests, f.Do(t, list(alice)).Code, "then the burst is spent")
}

// Many calls one after another never meet MaxInFlight.
func TestMaxInFlightSequential(t *testing.T) {
	limiter := newLimiter(t, ratelimit.Limits{MaxInFlight: 1})
	f := mcptest.New(t, mcptest.Options{}, limiter.Part())
	alice := f.Token(t, "alice")
	for i := range 200 {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(i+1, "ping", nil), Token: alice, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
		require.Equal(t, http.StatusOK, w.Code, "call %d", i)
	}
	_, err := ratelimit.New(ratelimit.Limits{MaxInFlight: -1})
	assert.Error(t, err)
}

package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// fakeStore counts tokens per key, refilling nothing: a shared engine as
// the Limiter sees it.
type fakeStore struct {
	mu    sync.Mutex
	taken map[string]int
	seen  []ratelimit.Bucket
	err   error
}

func (s *fakeStore) Take(_ context.Context, b ratelimit.Bucket, _ time.Time) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, b)
	if s.err != nil {
		return false, 0, s.err
	}
	if s.taken[b.Key] >= b.Burst {
		return false, 3 * time.Second, nil
	}
	s.taken[b.Key]++
	return true, 0, nil
}

func (s *fakeStore) Peek(_ context.Context, b ratelimit.Bucket, _ time.Time) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false, 0, s.err
	}
	return s.taken[b.Key] < b.Burst, 0, nil
}

// Two endpoints (two instances of a fleet) sharing one store limit a
// caller as one: its budget is the configured one, not one per instance.
func TestStoreIsShared(t *testing.T) {
	store := &fakeStore{taken: map[string]int{}}
	limits := ratelimit.Limits{List: ratelimit.Rate{PerSecond: 1, Burst: 3}, Store: store}
	a := mcptest.New(t, mcptest.Options{}, newLimiter(t, limits).Part())
	b, err := mcphttp.New(a.Inv, mcphttp.Options{Authenticator: a.Auth}, newLimiter(t, limits).Part())
	require.NoError(t, err)
	alice := a.Token(t, "alice")
	list := mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice}
	codes := []int{a.Do(t, list).Code, mcptest.Do(t, b, list).Code, a.Do(t, list).Code, mcptest.Do(t, b, list).Code}
	assert.Equal(t, []int{200, 200, 200, 429}, codes, "three in all across both instances")
	require.NotEmpty(t, store.seen)
	assert.Equal(t, 3, store.seen[0].Burst)
	assert.Equal(t, 1.0, store.seen[0].PerSecond)
	assert.True(t, strings.HasPrefix(store.seen[0].Key, "l:s"), "the list class, a subject: %q", store.seen[0].Key)
	assert.Contains(t, store.seen[0].Key, "alice")
}

// A store that cannot answer: calls go through (fail open), logged once a
// minute, unless FailClosed, which answers 503 with Retry-After.
func TestStoreFailure(t *testing.T) {
	for _, closed := range []bool{false, true} {
		var log strings.Builder
		var mu sync.Mutex
		logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) }), nil))
		store := &fakeStore{taken: map[string]int{}, err: errors.New("redis: connection refused at 10.0.0.7:6379")}
		l := newLimiter(t, ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 1}, Store: store, FailClosed: closed, Logger: logger})
		f := mcptest.New(t, mcptest.Options{}, l.Part())
		read := mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), Token: f.Token(t, "alice")}
		for range 5 {
			w := f.Do(t, read)
			if closed {
				assert.Equal(t, http.StatusServiceUnavailable, w.Code)
				assert.Equal(t, "1", w.Header().Get("Retry-After"))
			} else {
				assert.Equal(t, http.StatusOK, w.Code, "fail open")
			}
		}
		mu.Lock()
		assert.Equal(t, 1, strings.Count(log.String(), "rate-limit store cannot answer"), "logged once: %s", log.String())
		assert.NotContains(t, log.String(), "10.0.0.7", "never the store's error text")
		mu.Unlock()
		ok, _ := l.Allow(httptest.NewRequest(http.MethodPost, "/", nil), nil, mcphttp.ClassRead)
		assert.Equal(t, !closed, ok)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

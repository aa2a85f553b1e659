package authn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// memoryReplayStore is a shared store as two instances see it.
type memoryReplayStore struct {
	mu      sync.Mutex
	proofs  map[string]time.Time
	callers map[string]int
	err     error
}

func (s *memoryReplayStore) Remember(_ context.Context, proof, caller string, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, ok := s.proofs[proof]; ok {
		return dpop.ErrReplayed
	}
	if s.callers[caller] >= 3 {
		return &dpop.UnavailableError{RetryAfter: 7 * time.Second}
	}
	s.proofs[proof] = expires
	s.callers[caller]++
	return nil
}

// Two instances sharing a dpop.ReplayStore (issue 23): a proof accepted by one
// is a replay on the other; the store's refusals are 503 with its
// Retry-After; a store that cannot answer refuses (fail closed), logged
// once, without its error text.
func TestDPoPSharedReplayStore(t *testing.T) {
	store := &memoryReplayStore{proofs: map[string]time.Time{}, callers: map[string]int{}}
	a := newDPoPEnv(t, testissuer.Ed25519, func(o *dpop.Options) { o.ReplayStore = store })
	b, err := NewAuthenticator(a.cache, Options{Resource: testResource, Scopes: []string{"read"}, Logger: a.log,
		DPoP: dpop.Options{Mode: dpop.Allowed, Now: a.clock.Now, ReplayStore: store}})
	require.NoError(t, err)

	p := a.proof(t, http.MethodPost, nil)
	require.Equal(t, http.StatusOK, a.send(http.MethodPost, a.url, "DPoP "+a.token, p).Code)
	other := *a
	other.a = b
	w := other.send(http.MethodPost, a.url, "DPoP "+a.token, p)
	assert.Equal(t, "invalid_dpop_proof", challengeError(w, "DPoP"), "replayed to another instance: refused")
	for range 2 {
		require.Equal(t, http.StatusOK, other.send(http.MethodPost, a.url, "DPoP "+a.token, a.proof(t, http.MethodPost, nil)).Code)
	}
	w = other.send(http.MethodPost, a.url, "DPoP "+a.token, a.proof(t, http.MethodPost, nil))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, "the caller's share, fleet-wide")
	assert.Equal(t, "7", w.Header().Get("Retry-After"))

	store.err = errors.New("redis: dial tcp 10.0.0.7:6379: connection refused")
	for range 3 {
		w = a.send(http.MethodPost, a.url, "DPoP "+a.token, a.proof(t, http.MethodPost, nil))
		assert.Equal(t, http.StatusServiceUnavailable, w.Code, "fail closed")
		assert.Equal(t, "1", w.Header().Get("Retry-After"))
	}
	assert.Equal(t, 1, strings.Count(a.logs.String(), "replay store cannot answer"))
	assert.NotContains(t, a.logs.String(), "10.0.0.7")
}

package upstream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/evict"
)

// Store keeps the grants and the authorizations in progress, for one
// instance or a fleet. Rows are sealed by [Grants] before they reach it
// (AEAD, bound to the user and the upstream): a store, or a dump of it,
// holds nothing usable without the key ring, and a row moved to another
// user's key does not open. Implementations must be safe for concurrent
// use.
type Store interface {
	// SaveGrant stores row as the grant of key, replacing any.
	SaveGrant(ctx context.Context, key, row string) error
	// LoadGrant returns the grant of key, or ErrNoGrant.
	LoadGrant(ctx context.Context, key string) (string, error)
	// DeleteGrant removes the grant of key; none is no error.
	DeleteGrant(ctx context.Context, key string) error
	// SavePending stores row, an authorization in progress, under key
	// (an elicitation's id: one per elicitation, a new one replacing the
	// old) until expires.
	SavePending(ctx context.Context, key, row string, expires time.Time) error
	// TakePending returns and removes the row of key: once, and never
	// after it expired (ErrNoPending).
	TakePending(ctx context.Context, key string) (string, error)
}

// Errors of a [Store].
var (
	ErrNoGrant   = errors.New("upstream: no grant")
	ErrNoPending = errors.New("upstream: no such authorization in progress")
)

// DefaultMaxPending bounds a MemoryStore's authorizations in progress.
const DefaultMaxPending = 10000

// MemoryStore is a [Store] in this process's memory: grants are lost on
// restart (users connect again), and a fleet needs a shared store.
type MemoryStore struct {
	mu         sync.Mutex
	grants     map[string]string
	pending    map[string]pendingRow
	maxPending int
	now        func() time.Time
}

type pendingRow struct {
	row     string
	expires time.Time
}

// NewMemoryStore returns an empty MemoryStore holding at most maxPending
// authorizations in progress (0 means DefaultMaxPending; the expired, or
// else a random one, make room). now is its clock; nil means time.Now.
func NewMemoryStore(maxPending int, now func() time.Time) (*MemoryStore, error) {
	if maxPending < 0 {
		return nil, errors.New("upstream: NewMemoryStore: maxPending must not be negative")
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{grants: map[string]string{}, pending: map[string]pendingRow{},
		maxPending: cmpOr(maxPending, DefaultMaxPending), now: now}, nil
}

func (s *MemoryStore) SaveGrant(_ context.Context, key, row string) error {
	s.mu.Lock()
	s.grants[key] = row
	s.mu.Unlock()
	return nil
}

func (s *MemoryStore) LoadGrant(_ context.Context, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	row, ok := s.grants[key]
	if !ok {
		return "", ErrNoGrant
	}
	return row, nil
}

func (s *MemoryStore) DeleteGrant(_ context.Context, key string) error {
	s.mu.Lock()
	delete(s.grants, key)
	s.mu.Unlock()
	return nil
}

func (s *MemoryStore) SavePending(_ context.Context, state, row string, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[state]; !ok && len(s.pending) >= s.maxPending {
		now := s.now()
		evict.Sample(s.pending, func(p pendingRow) bool { return !now.Before(p.expires) })
	}
	s.pending[state] = pendingRow{row, expires}
	return nil
}

func (s *MemoryStore) TakePending(_ context.Context, state string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[state]
	if !ok {
		return "", ErrNoPending
	}
	delete(s.pending, state)
	if !s.now().Before(p.expires) {
		return "", ErrNoPending
	}
	return p.row, nil
}

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/authn/upstream"
)

// DefaultUpstreamPrefix starts the keys of an UpstreamStore.
const DefaultUpstreamPrefix = "mcpkit:upstream:"

// UpstreamOptions configures an UpstreamStore.
type UpstreamOptions struct {
	// Prefix starts every key; empty means DefaultUpstreamPrefix.
	Prefix string
}

// UpstreamStore keeps the per-user upstream grants of package
// authn/upstream, and the authorizations in progress, in Redis, for a
// fleet: a grant made on one instance is used on every other, and a
// callback may land on any instance. Rows arrive sealed (AEAD, bound to
// the user and the upstream); keys are SHA-256 digests of the grant keys
// and states, so Redis holds no user name either. A Redis that lost its
// data loses grants (users connect again) and authorizations in progress
// (users try again): nothing is ever granted that was not.
type UpstreamStore struct {
	client redis.UniversalClient
	prefix string
	gates  gates
}

var _ upstream.Store = (*UpstreamStore)(nil)

// NewUpstreamStore returns an UpstreamStore on client.
func NewUpstreamStore(client redis.UniversalClient, o UpstreamOptions) (*UpstreamStore, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = DefaultUpstreamPrefix
	}
	return &UpstreamStore{client: client, prefix: o.Prefix}, nil
}

func (s *UpstreamStore) grantKey(key string) string { return hashKey(s.prefix+"g:", key) }
func (s *UpstreamStore) stateKey(st string) string  { return hashKey(s.prefix+"p:", st) }

// do runs fn on key's gate.
func (s *UpstreamStore) do(ctx context.Context, key string, fn func() error) error {
	g := s.gates.For(ctx, s.client, key)
	if !g.allow() {
		return ErrUnavailable
	}
	err := fn()
	if errors.Is(err, redis.Nil) {
		g.done(ctx, nil)
		return err
	}
	g.done(ctx, err)
	if err != nil {
		return fmt.Errorf("redisstore: upstream: %w", err)
	}
	return nil
}

// SaveGrant stores row as the grant of key.
func (s *UpstreamStore) SaveGrant(ctx context.Context, key, row string) error {
	k := s.grantKey(key)
	return s.do(ctx, k, func() error { return s.client.Set(ctx, k, row, 0).Err() })
}

// LoadGrant returns the grant of key, or upstream.ErrNoGrant.
func (s *UpstreamStore) LoadGrant(ctx context.Context, key string) (string, error) {
	k := s.grantKey(key)
	var row string
	err := s.do(ctx, k, func() (err error) { row, err = s.client.Get(ctx, k).Result(); return err })
	if errors.Is(err, redis.Nil) {
		return "", upstream.ErrNoGrant
	}
	return row, err
}

// DeleteGrant removes the grant of key.
func (s *UpstreamStore) DeleteGrant(ctx context.Context, key string) error {
	k := s.grantKey(key)
	return s.do(ctx, k, func() error { return s.client.Del(ctx, k).Err() })
}

// SavePending stores row under state until expires.
func (s *UpstreamStore) SavePending(ctx context.Context, state, row string, expires time.Time) error {
	k := s.stateKey(state)
	ttl := time.Until(expires)
	if ttl <= 0 {
		return nil // expired already: never to be taken
	}
	return s.do(ctx, k, func() error { return s.client.Set(ctx, k, row, ttl).Err() })
}

// TakePending returns and removes the row of state (GETDEL: once, on
// whichever instance asks first), or upstream.ErrNoPending.
func (s *UpstreamStore) TakePending(ctx context.Context, state string) (string, error) {
	k := s.stateKey(state)
	var row string
	err := s.do(ctx, k, func() (err error) { row, err = s.client.GetDel(ctx, k).Result(); return err })
	if errors.Is(err, redis.Nil) {
		return "", upstream.ErrNoPending
	}
	return row, err
}

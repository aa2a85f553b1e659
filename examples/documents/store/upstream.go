package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/authn/upstream"
)

// upstreamSchema is the same on SQLite and PostgreSQL: rows are sealed
// by package authn/upstream before they arrive (AEAD, bound to the user
// and the upstream), so the tables hold nothing usable without the key
// ring.
var upstreamSchema = []string{
	`CREATE TABLE IF NOT EXISTS upstream_grants (
		grant_key TEXT PRIMARY KEY,
		grant_row TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS upstream_pending (
		state TEXT PRIMARY KEY,
		pending_row TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	)`,
}

// UpstreamStore is an upstream.Store (package authn/upstream) in the
// documents database, SQLite or PostgreSQL: the users' sealed grants to
// upstream services and the authorizations in progress, shared by every
// instance on the database.
type UpstreamStore struct {
	r   runner
	now func() time.Time
}

var _ upstream.Store = (*UpstreamStore)(nil)

// OpenUpstream returns the upstream grant store of db (opened by Open),
// creating its tables if needed.
func OpenUpstream(ctx context.Context, db DB) (*UpstreamStore, error) {
	st := &UpstreamStore{}
	switch d := db.(type) {
	case *sqliteStore:
		st.r, st.now = sqliteRunner{d.db}, d.now
	case *postgresStore:
		st.r, st.now = postgresRunner{d}, d.now
	default:
		return nil, fmt.Errorf("%w: not a database of this package", ErrInvalid)
	}
	err := st.r.inTx(ctx, "migrate upstream", func(exec execFunc) error {
		for _, q := range upstreamSchema {
			if _, err := exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// SaveGrant stores row as the grant of key.
func (s *UpstreamStore) SaveGrant(ctx context.Context, key, row string) error {
	return s.r.inTx(ctx, "save grant", func(exec execFunc) error {
		_, err := exec(`INSERT INTO upstream_grants (grant_key, grant_row) VALUES (?, ?)
ON CONFLICT (grant_key) DO UPDATE SET grant_row = excluded.grant_row`, key, row)
		return err
	})
}

// LoadGrant returns the grant of key, or upstream.ErrNoGrant.
func (s *UpstreamStore) LoadGrant(ctx context.Context, key string) (string, error) {
	var row string
	found := false
	err := s.r.query(ctx, "load grant", `SELECT grant_row FROM upstream_grants WHERE grant_key = ?`, []any{key},
		func(scan func(...any) error) error { found = true; return scan(&row) })
	switch {
	case err != nil:
		return "", err
	case !found:
		return "", upstream.ErrNoGrant
	}
	return row, nil
}

// DeleteGrant removes the grant of key.
func (s *UpstreamStore) DeleteGrant(ctx context.Context, key string) error {
	return s.r.inTx(ctx, "delete grant", func(exec execFunc) error {
		_, err := exec(`DELETE FROM upstream_grants WHERE grant_key = ?`, key)
		return err
	})
}

// SavePending stores row under state until expires; the expired are
// removed on the way.
func (s *UpstreamStore) SavePending(ctx context.Context, state, row string, expires time.Time) error {
	now := s.now().UnixMilli()
	return s.r.inTx(ctx, "save pending", func(exec execFunc) error {
		if _, err := exec(`DELETE FROM upstream_pending WHERE expires_at <= ?`, now); err != nil {
			return err
		}
		_, err := exec(`INSERT INTO upstream_pending (state, pending_row, expires_at) VALUES (?, ?, ?)
ON CONFLICT (state) DO UPDATE SET pending_row = excluded.pending_row, expires_at = excluded.expires_at`, state, row, expires.UnixMilli())
		return err
	})
}

// TakePending returns and removes the row of state, once (DELETE …
// RETURNING: of two instances asking at once, one gets it), or
// upstream.ErrNoPending when there is none or it expired.
func (s *UpstreamStore) TakePending(ctx context.Context, state string) (string, error) {
	var row string
	var expires int64
	found := false
	err := s.r.query(ctx, "take pending", `DELETE FROM upstream_pending WHERE state = ? RETURNING pending_row, expires_at`, []any{state},
		func(scan func(...any) error) error { found = true; return scan(&row, &expires) })
	switch {
	case err != nil:
		return "", err
	case !found || expires <= s.now().UnixMilli():
		return "", upstream.ErrNoPending
	}
	return row, nil
}

package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/upstream"
)

func TestUpstreamStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		s, err := OpenUpstream(ctx, db)
		require.NoError(t, err)
		_, err = OpenUpstream(ctx, db)
		require.NoError(t, err, "migrating again changes nothing")

		_, err = s.LoadGrant(ctx, "photos|alice")
		assert.ErrorIs(t, err, upstream.ErrNoGrant)
		require.NoError(t, s.SaveGrant(ctx, "photos|alice", "row-1"))
		require.NoError(t, s.SaveGrant(ctx, "photos|alice", "row-2"))
		row, err := s.LoadGrant(ctx, "photos|alice")
		require.NoError(t, err)
		assert.Equal(t, "row-2", row, "replaced")
		_, err = s.LoadGrant(ctx, "photos|bob")
		assert.ErrorIs(t, err, upstream.ErrNoGrant)
		require.NoError(t, s.DeleteGrant(ctx, "photos|alice"))
		_, err = s.LoadGrant(ctx, "photos|alice")
		assert.ErrorIs(t, err, upstream.ErrNoGrant)

		require.NoError(t, s.SavePending(ctx, "st-1", "p", time.Now().Add(time.Minute)))
		var got atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := s.TakePending(ctx, "st-1"); err == nil && r == "p" {
					got.Add(1)
				}
			}()
		}
		wg.Wait()
		assert.EqualValues(t, 1, got.Load(), "a state is taken once")
		require.NoError(t, s.SavePending(ctx, "st-2", "p", time.Now().Add(-time.Second)))
		_, err = s.TakePending(ctx, "st-2")
		assert.ErrorIs(t, err, upstream.ErrNoPending, "expired")
		_, err = s.TakePending(ctx, "nope")
		assert.ErrorIs(t, err, upstream.ErrNoPending)
	})
}

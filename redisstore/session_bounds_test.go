package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
)

// MaxSessions holds as documented on one Redis: MaxSessions sessions of
// as many principals are created, the next is refused (before, each of
// 16 families held MaxSessions/16, and principals hash unevenly: the
// first ErrFull came far earlier).
func TestSessionMaxSessionsExact(t *testing.T) {
	_, client := startRedis(t)
	clk := newClock()
	const max = 400
	st := newSessionStore(t, client, clk, sessions.Limits{MaxSessions: max, MaxSessionsPerPrincipal: 2})
	ctx := context.Background()
	created := 0
	for i := range max + 1 {
		_, err := st.Create(ctx, newID(), &principal.Principal{Subject: "p" + strconv.Itoa(i)})
		if errors.Is(err, sessions.ErrFull) {
			break
		}
		require.NoError(t, err)
		created++
	}
	t.Logf("sessions created before the first ErrFull: %d of MaxSessions %d", created, max)
	assert.Equal(t, max, created)
}

// On a cluster a session's pointer (the key naming its family, for the
// calls that know no principal) expires with the session: a second after
// its idle deadline, moved on by its use, and goes with End (before, it
// lived the whole Lifetime, 24 h by default, after the session ended).
func TestSessionPointerExpiresWithItsSession(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{IdleTimeout: time.Minute})
	if st.Families() == 1 {
		t.Skip("one family: no pointers")
	}
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	ttl, err := client.PTTL(ctx, st.PointerKey(id)).Result()
	require.NoError(t, err)
	assert.InDelta(t, (time.Minute + time.Second).Seconds(), ttl.Seconds(), 2, "the idle deadline and a second, not the lifetime: %v", ttl)

	clk.Advance(50 * time.Second)
	require.True(t, alive(st, id, alice))
	ttl, err = client.PTTL(ctx, st.PointerKey(id)).Result()
	require.NoError(t, err)
	assert.InDelta(t, (time.Minute + time.Second).Seconds(), ttl.Seconds(), 2, "moved on with the use: %v", ttl)

	require.NoError(t, st.End(ctx, id, alice))
	n, err := client.Exists(ctx, st.PointerKey(id)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "gone with End")
}

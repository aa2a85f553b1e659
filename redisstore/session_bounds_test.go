package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// MaxSessions holds as documented, on one Redis and (inside TestOnCluster)
// on a cluster, whose sessions are spread over families by principal:
// MaxSessions sessions are created, half of them by principals of one
// family, the next is refused; a principal at its cap still replaces its
// oldest in a full store; a session ended (or gone idle) gives its room
// back. Before, each of 16 families held MaxSessions/16, and principals
// hash unevenly: the first ErrFull came far earlier (on one Redis at 305
// of 400, and on the cluster at 25 here).
func TestSessionMaxSessionsExact(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	const max = 400
	lim := sessions.Limits{MaxSessions: max, MaxSessionsPerPrincipal: 2, IdleTimeout: time.Hour}
	st := newSessionStore(t, client, clk, lim)
	ctx := context.Background()
	t.Logf("families: %d", st.Families())

	// Principals: half of family 0, the others as they come.
	var ps []*principal.Principal
	skewed := 0
	for i := 0; len(ps) < max; i++ {
		p := &principal.Principal{Subject: "p" + strconv.Itoa(i)}
		if st.FamilyOf(p) == 0 {
			skewed++
		} else if skewed < max/2 && i%st.Families() != 0 {
			continue
		}
		ps = append(ps, p)
	}
	ids := make([]string, len(ps))
	created := 0
	for i, p := range ps {
		ids[i] = newID()
		_, err := st.Create(ctx, ids[i], p)
		if errors.Is(err, sessions.ErrFull) {
			break
		}
		require.NoError(t, err)
		created++
	}
	t.Logf("sessions created before the first ErrFull: %d of MaxSessions %d", created, max)
	require.Equal(t, max, created)
	n, err := st.Len(ctx)
	require.NoError(t, err)
	assert.Equal(t, max, n)

	// Full: a newcomer, and a principal under its cap, are refused.
	newcomer := &principal.Principal{Subject: "newcomer"}
	_, err = st.Create(ctx, newID(), newcomer)
	require.ErrorIs(t, err, sessions.ErrFull, "the store holds MaxSessions live sessions")
	_, err = st.Create(ctx, newID(), ps[0])
	require.ErrorIs(t, err, sessions.ErrFull, "a principal under its cap takes no room of others")

	// A principal at its cap replaces its oldest, full or not.
	_, err = st.Create(ctx, newID(), ps[1])
	require.ErrorIs(t, err, sessions.ErrFull)
	require.NoError(t, st.End(ctx, ids[0], ps[0]))
	second := create(t, st, ps[1]) // ps[1] now at its cap of 2
	third := newID()
	ended, err := st.Create(ctx, third, ps[1])
	require.NoError(t, err, "a principal at its cap replaces its oldest in a full store")
	assert.Equal(t, []string{ids[1]}, ended)
	assert.False(t, alive(st, ids[1], ps[1]))
	assert.True(t, alive(st, second, ps[1]))
	assert.True(t, alive(st, third, ps[1]))
	_, err = st.Create(ctx, newID(), newcomer)
	require.ErrorIs(t, err, sessions.ErrFull, "still full: the replacement took the room of the session it ended")

	// Another principal's End of a session frees nothing.
	require.ErrorIs(t, st.End(ctx, ids[2], ps[3]), sessions.ErrNotFound)
	_, err = st.Create(ctx, newID(), newcomer)
	require.ErrorIs(t, err, sessions.ErrFull)

	// An End gives its room back, at once.
	require.NoError(t, st.End(ctx, ids[2], ps[2]))
	create(t, st, newcomer)
	_, err = st.Create(ctx, newID(), &principal.Principal{Subject: "late"})
	require.ErrorIs(t, err, sessions.ErrFull)

	// Sessions gone idle give theirs back: all but one used lately.
	clk.Advance(50 * time.Minute)
	require.True(t, alive(st, third, ps[1]))
	clk.Advance(20 * time.Minute)
	for i := range max - 1 {
		create(t, st, &principal.Principal{Subject: "after" + strconv.Itoa(i)})
	}
	_, err = st.Create(ctx, newID(), &principal.Principal{Subject: "one too many"})
	require.ErrorIs(t, err, sessions.ErrFull, "the session used lately still holds its room")
}

// Concurrent Creates from two instances never hold more than MaxSessions
// between them, and fill it exactly.
func TestSessionMaxSessionsConcurrent(t *testing.T) {
	b, client := startBackend(t)
	clk := newClock()
	const max = 200
	lim := sessions.Limits{MaxSessions: max, MaxSessionsPerPrincipal: 1}
	stores := []*redisstore.SessionStore{newSessionStore(t, client, clk, lim), newSessionStore(t, b.Client(t), clk, lim)}
	var ok, full atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range (max + 40) / 8 {
				_, err := stores[w%2].Create(context.Background(), newID(), &principal.Principal{Subject: fmt.Sprintf("w%d-%d", w, i)})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, sessions.ErrFull):
					full.Add(1)
				default:
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(max), ok.Load(), "created")
	assert.Equal(t, int64(40), full.Load(), "refused")
	n, err := stores[0].Len(context.Background())
	require.NoError(t, err)
	assert.Equal(t, max, n)
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

// On a cluster, a seat ledger lost (its keys gone, or its marker written
// in a history its Redis cannot vouch for: a restart from an older
// snapshot, a replica promoted before it synced) is rebuilt from the
// families' live sessions before the next seat is taken: the store does
// not take MaxSessions more. A test that fails without the rebuild (a
// ledger found empty would then seat MaxSessions more).
func TestSessionSeatLedgerLost(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	const max = 100
	st := newSessionStore(t, client, clk, sessions.Limits{MaxSessions: max, MaxSessionsPerPrincipal: 1})
	if st.Families() == 1 {
		t.Skip("one family: no ledger")
	}
	ctx := context.Background()
	for i := range max {
		create(t, st, &principal.Principal{Subject: "p" + strconv.Itoa(i)})
	}
	all, gen := st.LedgerKeys()
	for _, lose := range []struct {
		name string
		do   func() error
	}{
		{"keys gone", func() error { return client.Del(ctx, all, gen).Err() }},
		{"marker of another history", func() error { return client.Set(ctx, gen, "0123456789ab:0123456789ab:0123456789ab", 0).Err() }},
		{"marker gone", func() error { return client.Del(ctx, gen).Err() }},
	} {
		require.NoError(t, lose.do(), lose.name)
		_, err := st.Create(ctx, newID(), &principal.Principal{Subject: "newcomer " + lose.name})
		require.ErrorIs(t, err, sessions.ErrFull, "%s: the ledger is rebuilt with the store's %d live sessions", lose.name, max)
		n, err := client.ZCard(ctx, all).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(max), n, lose.name)
	}
}

// keyWatch records the commands that name a key containing part.
type keyWatch struct {
	part string
	mu   sync.Mutex
	seen []string
}

func (h *keyWatch) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *keyWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.Contains(s, h.part) {
				h.mu.Lock()
				h.seen = append(h.seen, fmt.Sprint(cmd.Args()[0]))
				h.mu.Unlock()
			}
		}
		return next(ctx, cmd)
	}
}
func (h *keyWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *keyWatch) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.seen
	h.seen = nil
	return s
}

// On a cluster the seat ledger is touched by Create and End only: a
// session's requests (Find, Subscribe, Unsubscribe, Subscribed,
// Subscriptions) never reach it, so no single key is hot.
func TestSessionSeatLedgerOffTheRequestPath(t *testing.T) {
	b, _ := startBackend(t)
	client := b.Client(t)
	w := &keyWatch{part: "{~seats}"}
	client.AddHook(w)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{})
	if st.Families() == 1 {
		t.Skip("one family: no ledger")
	}
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	assert.NotEmpty(t, w.take(), "Create takes a seat")
	for range 3 {
		require.True(t, alive(st, id, alice))
		require.NoError(t, st.Subscribe(ctx, id, alice, "doc://1"))
		ok, err := st.Subscribed(ctx, id, "doc://1")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = st.Subscriptions(ctx, id)
		require.NoError(t, err)
		require.NoError(t, st.Unsubscribe(ctx, id, alice, "doc://1"))
	}
	assert.Empty(t, w.take(), "the requests of a session never reach the ledger")
	require.NoError(t, st.End(ctx, id, alice))
	assert.NotEmpty(t, w.take(), "End gives the seat back")
}

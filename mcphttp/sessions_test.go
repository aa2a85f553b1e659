package mcphttp

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestStore(lim SessionLimits) (*sessionStore, *fakeClock) {
	lim, _ = lim.resolve()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	st := newSessionStore(lim)
	st.now = clk.now
	return st, clk
}

// A session ends at its absolute lifetime, even with an open stream and
// a steady flow of requests.
func TestSessionLifetime(t *testing.T) {
	st, clk := newTestStore(SessionLimits{Lifetime: time.Hour, IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice", Expires: clk.t.Add(48 * time.Hour)}
	s, ok := st.create(alice)
	require.True(t, ok)
	_, detach := s.attachStream() // an open stream never idles out, but still ends
	defer detach()
	for clk.t.Sub(s.created) < time.Hour-time.Minute {
		clk.t = clk.t.Add(50 * time.Second)
		require.NotNil(t, st.get(s.id, alice), "alive at %v", clk.t.Sub(s.created))
	}
	assert.Equal(t, s.created.Add(time.Hour), s.deadline(time.Hour))
	clk.t = s.created.Add(time.Hour)
	assert.Nil(t, st.get(s.id, alice), "ended at its lifetime")
}

// A session ends when the token last seen on it expires; a request with a
// fresher token of the same principal carries it on.
func TestSessionEndsWithItsToken(t *testing.T) {
	st, clk := newTestStore(SessionLimits{})
	exp := clk.t.Add(10 * time.Minute)
	alice := &principal.Principal{Subject: "alice", Expires: exp}
	s, _ := st.create(alice)
	assert.Equal(t, exp, s.deadline(DefaultSessionLifetime))
	clk.t = exp.Add(-time.Second)
	fresh := &principal.Principal{Subject: "alice", Expires: clk.t.Add(10 * time.Minute)}
	require.NotNil(t, st.get(s.id, fresh), "a refreshed token extends it")
	clk.t = exp.Add(time.Second)
	require.NotNil(t, st.get(s.id, alice))
	clk.t = fresh.Expires
	assert.Nil(t, st.get(s.id, fresh), "ended when the latest token expired")

	// A token without an expiry leaves only the lifetime and idle limits.
	s2, _ := st.create(&principal.Principal{Subject: "bob"})
	assert.Equal(t, s2.created.Add(DefaultSessionLifetime), s2.deadline(DefaultSessionLifetime))
}

func TestSessionIdle(t *testing.T) {
	st, clk := newTestStore(SessionLimits{IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice"}
	s, _ := st.create(alice)
	clk.t = clk.t.Add(59 * time.Second)
	require.NotNil(t, st.get(s.id, alice))
	clk.t = clk.t.Add(61 * time.Second)
	assert.Nil(t, st.get(s.id, alice))
	assert.Nil(t, st.get(s.id, nil), "never for nobody")
}

// Evicting a principal's oldest session keeps the per-owner index exact,
// and a full table is swept of ended sessions before it refuses.
func TestSessionEvictionAndSweep(t *testing.T) {
	st, clk := newTestStore(SessionLimits{MaxSessions: 4, MaxSessionsPerPrincipal: 2, IdleTimeout: time.Minute})
	alice, bob := &principal.Principal{Subject: "alice"}, &principal.Principal{Subject: "bob"}
	a1, _ := st.create(alice)
	a2, _ := st.create(alice)
	a3, _ := st.create(alice)
	assert.True(t, a1.ended, "alice's oldest ended")
	assert.Nil(t, st.get(a1.id, alice))
	assert.NotNil(t, st.get(a2.id, alice))
	assert.NotNil(t, st.get(a3.id, alice))
	assert.Equal(t, 2, st.len())
	b1, _ := st.create(bob)
	_, _ = st.create(bob)
	_, ok := st.create(&principal.Principal{Subject: "carol"})
	assert.False(t, ok, "full of live sessions")
	clk.t = clk.t.Add(2 * time.Minute) // everyone idles out
	c1, ok := st.create(&principal.Principal{Subject: "carol"})
	require.True(t, ok, "the sweep makes room")
	assert.Equal(t, 1, st.len())
	assert.True(t, b1.ended)
	assert.NotNil(t, st.get(c1.id, &principal.Principal{Subject: "carol"}))
}

func TestStreamCounter(t *testing.T) {
	c := newStreamCounter(3, 2)
	require.NoError(t, c.acquire("a"))
	require.NoError(t, c.acquire("a"))
	assert.ErrorIs(t, c.acquire("a"), errStreamsCaller)
	require.NoError(t, c.acquire("b"))
	assert.ErrorIs(t, c.acquire("c"), errStreamsFull)
	c.release("a")
	require.NoError(t, c.acquire("c"))
	total, own := c.open("a")
	assert.Equal(t, 3, total)
	assert.Equal(t, 1, own)
	c.release("a")
	_, own = c.open("a")
	assert.Zero(t, own)
	assert.Len(t, c.byOwner, 2, "no empty entries kept")
}

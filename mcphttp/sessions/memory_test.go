package sessions

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/principal"
)

func newTestStore(t *testing.T, lim Limits) (*MemoryStore, *fakeclock.Clock) {
	t.Helper()
	st, err := NewMemoryStore(lim)
	require.NoError(t, err)
	clk := fakeclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	st.now = clk.Now
	return st, clk
}

var ctx = context.Background()

// create mints a session of p and returns its id.
func create(t *testing.T, st *MemoryStore, p *principal.Principal) string {
	t.Helper()
	id := newID()
	_, err := st.Create(ctx, id, p)
	require.NoError(t, err)
	return id
}

func alive(st *MemoryStore, id string, p *principal.Principal) bool {
	_, err := st.Find(ctx, id, p)
	return err == nil
}

// A session ends at its absolute lifetime, even with a steady flow of
// requests (an open stream's refreshes are such requests).
func TestSessionLifetime(t *testing.T) {
	st, clk := newTestStore(t, Limits{Lifetime: time.Hour, IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice", Expires: clk.Now().Add(48 * time.Hour)}
	created := clk.Now()
	id := create(t, st, alice)
	for clk.Now().Sub(created) < time.Hour-time.Minute {
		clk.Advance(50 * time.Second)
		s, err := st.Find(ctx, id, alice)
		require.NoError(t, err, "alive at %v", clk.Now().Sub(created))
		assert.Equal(t, created.Add(time.Hour), s.Deadline)
		assert.Equal(t, clk.Now().Add(time.Minute), s.IdleDeadline, "the idle timer starts again")
	}
	clk.Set(created.Add(time.Hour))
	_, err := st.Find(ctx, id, alice)
	assert.ErrorIs(t, err, ErrNotFound, "ended at its lifetime")
}

// A session ends when the credential last seen on it expires; a request
// with a fresher credential of the same principal carries it on.
func TestSessionEndsWithItsToken(t *testing.T) {
	st, clk := newTestStore(t, Limits{})
	exp := clk.Now().Add(10 * time.Minute)
	alice := &principal.Principal{Subject: "alice", Expires: exp}
	id := create(t, st, alice)
	s, err := st.Find(ctx, id, alice)
	require.NoError(t, err)
	assert.Equal(t, exp, s.Deadline)
	clk.Set(exp.Add(-time.Second))
	fresh := &principal.Principal{Subject: "alice", Expires: clk.Now().Add(10 * time.Minute)}
	s, err = st.Find(ctx, id, fresh)
	require.NoError(t, err, "a refreshed token extends it")
	assert.Equal(t, fresh.Expires, s.Deadline)
	clk.Set(exp.Add(time.Second))
	require.True(t, alive(st, id, alice))
	clk.Set(fresh.Expires)
	assert.False(t, alive(st, id, fresh), "ended when the latest token expired")

	// A token without an expiry leaves only the lifetime and idle limits.
	bob := &principal.Principal{Subject: "bob"}
	created := clk.Now()
	id2 := create(t, st, bob)
	s, err = st.Find(ctx, id2, bob)
	require.NoError(t, err)
	assert.Equal(t, created.Add(DefaultLifetime), s.Deadline)
}

func TestSessionIdle(t *testing.T) {
	st, clk := newTestStore(t, Limits{IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	clk.Advance(59 * time.Second)
	require.True(t, alive(st, id, alice))
	clk.Advance(61 * time.Second)
	assert.False(t, alive(st, id, alice))
	assert.False(t, alive(st, id, nil), "never for nobody")
}

// A session is found only with the identity that created it: another
// subject, issuer, client or audience finds nothing; the scopes and the
// DPoP key are not part of the identity.
func TestSessionBinding(t *testing.T) {
	st, _ := newTestStore(t, Limits{})
	alice := principal.Principal{Subject: "alice", ClientID: "c1", Audience: "https://mcp.example.com/mcp", Scopes: []string{"docs:read"}}
	id := create(t, st, &alice)
	for name, tc := range map[string]struct {
		edit  func(p *principal.Principal)
		found bool
	}{
		"the same identity":           {func(*principal.Principal) {}, true},
		"other scopes":                {func(p *principal.Principal) { p.Scopes = nil }, true},
		"bound to a DPoP key":         {func(p *principal.Principal) { p.DPoPThumbprint = "x" }, true},
		"another subject":             {func(p *principal.Principal) { p.Subject = "bob" }, false},
		"another issuer's alice":      {func(p *principal.Principal) { p.Issuer = "https://other" }, false},
		"another client":              {func(p *principal.Principal) { p.ClientID = "c2" }, false},
		"another audience":            {func(p *principal.Principal) { p.Audience = "https://other/mcp" }, false},
		"no subject, the same client": {func(p *principal.Principal) { p.Subject = "" }, false},
	} {
		t.Run(name, func(t *testing.T) {
			p := alice
			tc.edit(&p)
			assert.Equal(t, tc.found, alive(st, id, &p))
			err := st.Subscribe(ctx, id, &p, "docs://x")
			if tc.found {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrNotFound)
				assert.ErrorIs(t, st.Unsubscribe(ctx, id, &p, "docs://x"), ErrNotFound)
				assert.ErrorIs(t, st.End(ctx, id, &p), ErrNotFound)
			}
		})
	}
	assert.True(t, alive(st, id, &alice), "no refused End ended it")
	assert.ErrorIs(t, st.End(ctx, "no-such-session", &alice), ErrNotFound)
	require.NoError(t, st.End(ctx, id, &alice))
	assert.False(t, alive(st, id, &alice))
	assert.ErrorIs(t, st.End(ctx, id, &alice), ErrNotFound, "only once")
}

// Evicting a principal's oldest session keeps the per-principal index
// exact and reports the ended session, and a full store is swept of ended
// sessions before it refuses.
func TestSessionEvictionAndSweep(t *testing.T) {
	st, clk := newTestStore(t, Limits{MaxSessions: 4, MaxSessionsPerPrincipal: 2, IdleTimeout: time.Minute})
	alice, bob := &principal.Principal{Subject: "alice"}, &principal.Principal{Subject: "bob"}
	a1 := create(t, st, alice)
	a2 := create(t, st, alice)
	a3 := newID()
	ended, err := st.Create(ctx, a3, alice)
	require.NoError(t, err)
	assert.Equal(t, []string{a1}, ended, "alice's oldest ended")
	assert.False(t, alive(st, a1, alice))
	assert.True(t, alive(st, a2, alice))
	assert.True(t, alive(st, a3, alice))
	assert.Equal(t, 2, st.Len())
	b1 := create(t, st, bob)
	_ = create(t, st, bob)
	carol := &principal.Principal{Subject: "carol"}
	_, err = st.Create(ctx, newID(), carol)
	assert.ErrorIs(t, err, ErrFull, "full of live sessions")
	clk.Advance(2 * time.Minute) // everyone idles out
	c1 := newID()
	ended, err = st.Create(ctx, c1, carol)
	require.NoError(t, err, "the sweep makes room")
	assert.Len(t, ended, 4, "the swept sessions are reported")
	assert.Contains(t, ended, b1)
	assert.Equal(t, 1, st.Len())
	assert.True(t, alive(st, c1, carol))
	assert.Len(t, st.byKey, 1, "no empty entries kept")
}

// Subscriptions: bounded per session, a URI held already is no new one,
// unsubscribing frees a place, and they end with the session.
func TestSubscriptions(t *testing.T) {
	st, clk := newTestStore(t, Limits{MaxSubscriptions: 3, IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	for i := range 3 {
		require.NoError(t, st.Subscribe(ctx, id, alice, fmt.Sprintf("docs://%d", i)))
	}
	assert.ErrorIs(t, st.Subscribe(ctx, id, alice, "docs://3"), ErrTooManySubscriptions)
	assert.NoError(t, st.Subscribe(ctx, id, alice, "docs://1"), "held already")
	for _, tc := range []struct {
		uri  string
		want bool
	}{{"docs://0", true}, {"docs://3", false}, {"docs://x", false}} {
		got, err := st.Subscribed(ctx, id, tc.uri)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.uri)
	}
	require.NoError(t, st.Unsubscribe(ctx, id, alice, "docs://0"))
	require.NoError(t, st.Unsubscribe(ctx, id, alice, "docs://never"), "not held: no error")
	require.NoError(t, st.Subscribe(ctx, id, alice, "docs://3"))
	got, _ := st.Subscribed(ctx, id, "docs://0")
	assert.False(t, got)

	// A subscribe is a use of the session: it keeps it from idling out.
	for range 3 {
		clk.Advance(50 * time.Second)
		require.NoError(t, st.Subscribe(ctx, id, alice, "docs://3"))
	}
	require.True(t, alive(st, id, alice))

	require.NoError(t, st.End(ctx, id, alice))
	got, _ = st.Subscribed(ctx, id, "docs://3")
	assert.False(t, got, "subscriptions end with the session")
	got, _ = st.Subscribed(ctx, "no-such-session", "docs://3")
	assert.False(t, got)
}

func TestNegativeLimits(t *testing.T) {
	for _, l := range []Limits{{IdleTimeout: -1}, {Lifetime: -1}, {MaxSessions: -1}, {MaxSessionsPerPrincipal: -1},
		{MaxSubscriptions: -1}, {MaxStreams: -1}, {MaxStreamsPerPrincipal: -1}} {
		_, err := NewMemoryStore(l)
		assert.Error(t, err, "%+v", l)
		_, err = New(nil, Options{Limits: l})
		assert.Error(t, err, "%+v", l)
	}
	_, err := New(nil, Options{KeepAlive: -1})
	assert.Error(t, err)
}

func TestStreamCounter(t *testing.T) {
	c := newCounter(3, 2)
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
	assert.Len(t, c.byKey, 2, "no empty entries kept")
}

// The attachments: a stream registered for a session ends only when a
// later one replaces it or the session ends; a registration that is
// removed (its session was not found) ends nothing else.
func TestAttachments(t *testing.T) {
	var as attachments
	stopped := func(a *attached) bool {
		select {
		case <-a.stop:
			return true
		default:
			return false
		}
	}
	first := as.add("s")
	as.replace("s", first)
	assert.False(t, stopped(first))
	foreign := as.add("s") // a GET whose session check fails
	as.remove("s", foreign)
	assert.False(t, stopped(first), "a refused GET ends no stream")
	second, third := as.add("s"), as.add("s") // two reconnects at once
	as.replace("s", third)
	as.replace("s", second)
	assert.True(t, stopped(first))
	assert.True(t, stopped(second), "the later GET wins")
	assert.False(t, stopped(third))
	other := as.add("t")
	as.end("s")
	assert.True(t, stopped(third))
	assert.False(t, stopped(other), "another session's stream goes on")
	for _, a := range []*attached{first, second, third} {
		as.remove("s", a)
	}
	as.remove("t", other)
	assert.Empty(t, as.byID)
}

func TestFilterMember(t *testing.T) {
	for n, want := range map[string]string{
		"notifications/tools/list_changed":     "toolsListChanged",
		"notifications/prompts/list_changed":   "promptsListChanged",
		"notifications/resources/list_changed": "", // the part's own
		"notifications/tools/updated":          "",
		"notifications//list_changed":          "",
		"notifications/a/b/list_changed":       "",
		"tools/list_changed":                   "",
	} {
		assert.Equal(t, want, filterMember(n), n)
	}
}

func TestMemoryStoreSubscriptions(t *testing.T) {
	st, err := NewMemoryStore(Limits{})
	require.NoError(t, err)
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice"}
	_, err = st.Create(ctx, "s1", alice)
	require.NoError(t, err)
	require.NoError(t, st.Subscribe(ctx, "s1", alice, "docs://b"))
	require.NoError(t, st.Subscribe(ctx, "s1", alice, "docs://a"))
	uris, err := st.Subscriptions(ctx, "s1")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"docs://a", "docs://b"}, uris)
	require.NoError(t, st.End(ctx, "s1", alice))
	uris, err = st.Subscriptions(ctx, "s1")
	require.NoError(t, err)
	assert.Empty(t, uris, "ended")
	uris, _ = st.Subscriptions(ctx, "unknown")
	assert.Empty(t, uris)
}

// A GET stream refreshes its session a quarter of the idle time, and at
// least every minute: a session the store lost (a replica promoted before
// it synced) or ended elsewhere ends the stream within a minute, not a
// quarter of the idle time (7.5 minutes by default). Before the change:
// 7.5 minutes.
func TestRefreshInterval(t *testing.T) {
	now := time.Now()
	for idle, want := range map[time.Duration]time.Duration{
		DefaultIdleTimeout: time.Minute,
		2 * time.Minute:    30 * time.Second,
		time.Millisecond:   10 * time.Millisecond,
	} {
		got := refreshInterval(Session{IdleDeadline: now.Add(idle)})
		assert.InDelta(t, float64(want), float64(got), float64(want)/10, "idle %v", idle)
	}
}

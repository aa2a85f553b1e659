package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// The tests of sessions.MemoryStore, ported: the Redis store keeps the
// same sessions by the same rules, fleet-wide.

func newSessionStore(t testing.TB, client redis.UniversalClient, clk *fakeclock.Clock, lim sessions.Limits) *redisstore.SessionStore {
	t.Helper()
	st, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{Limits: lim, Now: clk.Now})
	require.NoError(t, err)
	return st
}

// newID mints a session id as the part does.
func newID() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func create(t testing.TB, st sessions.Store, p *principal.Principal) string {
	t.Helper()
	id := newID()
	_, err := st.Create(context.Background(), id, p)
	require.NoError(t, err)
	return id
}

func alive(st sessions.Store, id string, p *principal.Principal) bool {
	_, err := st.Find(context.Background(), id, p)
	return err == nil
}

func TestNewSessionStoreRejects(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	_, err := redisstore.NewSessionStore(nil, redisstore.SessionOptions{})
	assert.Error(t, err)
	for _, l := range []sessions.Limits{{IdleTimeout: -1}, {Lifetime: -1}, {MaxSessions: -1}, {MaxSessionsPerPrincipal: -1}, {MaxSubscriptions: -1}} {
		_, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{Limits: l})
		assert.Error(t, err, "%+v", l)
	}
}

// A session ends at its absolute lifetime, even with a steady flow of
// requests.
func TestRedisSessionLifetime(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{Lifetime: time.Hour, IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice", Expires: clk.Now().Add(48 * time.Hour)}
	created := clk.Now()
	id := create(t, st, alice)
	ctx := context.Background()
	for clk.Now().Sub(created) < time.Hour-time.Minute {
		clk.Advance(50 * time.Second)
		s, err := st.Find(ctx, id, alice)
		require.NoError(t, err, "alive at %v", clk.Now().Sub(created))
		assert.Equal(t, created.Add(time.Hour), s.Deadline)
		assert.Equal(t, clk.Now().Add(time.Minute), s.IdleDeadline, "the idle timer starts again")
	}
	clk.Set(created.Add(time.Hour))
	_, err := st.Find(ctx, id, alice)
	assert.ErrorIs(t, err, sessions.ErrNotFound, "ended at its lifetime")
}

// A session ends when the credential last seen on it expires; a request
// with a fresher credential of the same principal carries it on.
func TestRedisSessionEndsWithItsToken(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{})
	ctx := context.Background()
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
	require.True(t, alive(st, id, alice), "an older token does not shorten it")
	clk.Set(fresh.Expires)
	assert.False(t, alive(st, id, fresh), "ended when the latest token expired")

	bob := &principal.Principal{Subject: "bob"}
	created := clk.Now()
	id2 := create(t, st, bob)
	s, err = st.Find(ctx, id2, bob)
	require.NoError(t, err)
	assert.Equal(t, created.Add(sessions.DefaultLifetime), s.Deadline, "no expiry: the lifetime")
}

func TestRedisSessionIdle(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{IdleTimeout: time.Minute})
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	clk.Advance(59 * time.Second)
	require.True(t, alive(st, id, alice))
	clk.Advance(61 * time.Second)
	assert.False(t, alive(st, id, alice))
	assert.False(t, alive(st, id, nil), "never for nobody")
}

// A session is found only with the identity that created it.
func TestRedisSessionBinding(t *testing.T) {
	_, client := startBackend(t)
	st := newSessionStore(t, client, newClock(), sessions.Limits{})
	ctx := context.Background()
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
				assert.ErrorIs(t, err, sessions.ErrNotFound)
				assert.ErrorIs(t, st.Unsubscribe(ctx, id, &p, "docs://x"), sessions.ErrNotFound)
				assert.ErrorIs(t, st.End(ctx, id, &p), sessions.ErrNotFound)
			}
		})
	}
	assert.True(t, alive(st, id, &alice), "no refused End ended it")
	assert.ErrorIs(t, st.End(ctx, "no-such-session", &alice), sessions.ErrNotFound)
	require.NoError(t, st.End(ctx, id, &alice))
	assert.False(t, alive(st, id, &alice))
	assert.ErrorIs(t, st.End(ctx, id, &alice), sessions.ErrNotFound, "only once")
}

// Ids a client may send that are no session's: not found, without
// reaching any other key (no prefix or separator gets through).
func TestRedisSessionIDs(t *testing.T) {
	_, client := startBackend(t)
	st := newSessionStore(t, client, newClock(), sessions.Limits{})
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	require.NoError(t, st.Subscribe(ctx, id, alice, "docs://x"))
	for _, bad := range []string{"", "a:b", id + ":", "s:" + id, "*", "../" + id, id + "\x00", strings.Repeat("a", 129), "ü"} {
		_, err := st.Find(ctx, bad, alice)
		assert.ErrorIs(t, err, sessions.ErrNotFound, "%q", bad)
		ok, err := st.Subscribed(ctx, bad, "docs://x")
		assert.NoError(t, err)
		assert.False(t, ok, "%q", bad)
		_, err = st.Create(ctx, bad, alice)
		assert.Error(t, err, "%q", bad)
	}
	_, err := st.Create(ctx, newID(), nil)
	assert.Error(t, err, "no session for nobody")
	_, err = st.Create(ctx, id, alice)
	assert.ErrorIs(t, err, sessions.ErrFull, "an id minted twice is never shared")
}

// Evicting a principal's oldest session reports it, and a full store is
// swept of ended sessions before it refuses.
func TestRedisSessionEvictionAndSweep(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{MaxSessions: 4, MaxSessionsPerPrincipal: 2, IdleTimeout: time.Minute})
	ctx := context.Background()
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
	n, err := st.Len(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	b1 := create(t, st, bob)
	_ = create(t, st, bob)
	carol := &principal.Principal{Subject: "carol"}
	_, err = st.Create(ctx, newID(), carol)
	assert.ErrorIs(t, err, sessions.ErrFull, "full of live sessions")
	clk.Advance(2 * time.Minute) // everyone idles out
	c1 := newID()
	ended, err = st.Create(ctx, c1, carol)
	require.NoError(t, err, "the sweep makes room")
	assert.Len(t, ended, 4, "the swept sessions are reported")
	assert.Contains(t, ended, b1)
	n, err = st.Len(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.True(t, alive(st, c1, carol))
	keys, err := allKeys(client, st.IndexPattern())
	require.NoError(t, err)
	assert.Len(t, keys, 1, "no principal's empty index kept: %v", keys)

	// A principal's sessions that ended on their own make room before a
	// live one is ended.
	c2 := create(t, st, carol)
	clk.Advance(30 * time.Second)
	require.True(t, alive(st, c2, carol)) // c2 used, c1 not
	clk.Advance(45 * time.Second)         // c1 idle 75 s: ended
	ended, err = st.Create(ctx, newID(), carol)
	require.NoError(t, err)
	assert.Equal(t, []string{c1}, ended)
	assert.True(t, alive(st, c2, carol))
}

// Subscriptions: bounded per session, a URI held already is no new one,
// unsubscribing frees a place, a subscribe keeps the session alive, and
// they end with the session.
func TestRedisSubscriptions(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{MaxSubscriptions: 3, IdleTimeout: time.Minute})
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice"}
	id := create(t, st, alice)
	for i := range 3 {
		require.NoError(t, st.Subscribe(ctx, id, alice, fmt.Sprintf("docs://%d", i)))
	}
	assert.ErrorIs(t, st.Subscribe(ctx, id, alice, "docs://3"), sessions.ErrTooManySubscriptions)
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
	for range 3 {
		clk.Advance(50 * time.Second)
		require.NoError(t, st.Subscribe(ctx, id, alice, "docs://3"))
	}
	require.True(t, alive(st, id, alice))
	uris, err := st.Subscriptions(ctx, id)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"docs://1", "docs://2", "docs://3"}, uris)
	ttl, err := client.PTTL(ctx, st.SessionKey("u", id, alice)).Result()
	require.NoError(t, err)
	assert.InDelta(t, 61, ttl.Seconds(), 2, "the subscriptions expire with the session")

	require.NoError(t, st.End(ctx, id, alice))
	got, _ = st.Subscribed(ctx, id, "docs://3")
	assert.False(t, got, "subscriptions end with the session")
	got, _ = st.Subscribed(ctx, "no-such-session", "docs://3")
	assert.False(t, got)
	for _, gone := range []string{id, "no-such-session", "bad id!"} {
		uris, err = st.Subscriptions(ctx, gone)
		require.NoError(t, err)
		assert.Empty(t, uris, gone)
	}
	n, err := client.Exists(ctx, st.SessionKey("u", id, alice), st.SessionKey("s", id, alice)).Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// Two instances (clients) creating sessions of one principal at once
// never leave it more than its cap, and each session is another's only
// through its own principal; keys hold no identity.
func TestRedisSessionsRaceAndKeys(t *testing.T) {
	srv, client := startBackend(t)
	clk := newClock()
	stores := []*redisstore.SessionStore{newSessionStore(t, client, clk, sessions.Limits{MaxSessionsPerPrincipal: 3}),
		newSessionStore(t, srv.Client(t), clk, sessions.Limits{MaxSessionsPerPrincipal: 3})}
	alice := &principal.Principal{Issuer: "https://issuer.example", Subject: "alice@example.com", ClientID: "client-1", Audience: "https://mcp.example.com/mcp"}
	ctx := context.Background()
	ids := make([]string, 32)
	var endedN atomic.Int32
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			ids[i] = newID()
			ended, err := stores[i%2].Create(ctx, ids[i], alice)
			assert.NoError(t, err)
			endedN.Add(int32(len(ended)))
		})
	}
	wg.Wait()
	live := 0
	for _, id := range ids {
		if alive(stores[0], id, alice) {
			live++
		}
	}
	assert.Equal(t, 3, live, "the cap, fleet-wide")
	assert.Equal(t, int32(29), endedN.Load(), "every other session was reported ended, once")
	keys, err := allKeys(client, "*")
	require.NoError(t, err)
	for _, k := range keys {
		for _, raw := range []string{"alice", "example.com", "client-1", "issuer"} {
			assert.NotContains(t, k, raw)
		}
	}
}

// refusedByRedis is an error answered by Redis (it leaves the outage
// gates open, so that what follows reads the store, not a shut gate).
type refusedByRedis string

func (e refusedByRedis) Error() string { return string(e) }
func (refusedByRedis) RedisError()     {}

// failPointerSET fails the SET of one session id's pointer, as when its
// slot's node cannot take writes.
type failPointerSET struct{ id string }

func (h failPointerSET) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h failPointerSET) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) > 1 && cmd.Name() == "set" && strings.HasSuffix(fmt.Sprint(a[1]), "{"+h.id+"}") {
			return refusedByRedis("READONLY You can't write against a read only replica.")
		}
		return next(ctx, cmd)
	}
}
func (h failPointerSET) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Create that cannot write its id's pointer creates nothing: no
// session counted, and the principal's older session (at its limit of
// one) not ended for it.
func TestSessionCreateFailsWhole(t *testing.T) {
	_, client := startBackend(t)
	clk := newClock()
	st := newSessionStore(t, client, clk, sessions.Limits{MaxSessionsPerPrincipal: 1})
	alice := &principal.Principal{Subject: "alice"}
	old := create(t, st, alice)
	id := newID()
	client.AddHook(failPointerSET{id})
	if _, err := st.Create(context.Background(), id, alice); err == nil {
		t.Skip("one family: no pointer to write")
	}
	assert.True(t, alive(st, old, alice), "the older session was not ended for a Create that failed")
	n, err := st.Len(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

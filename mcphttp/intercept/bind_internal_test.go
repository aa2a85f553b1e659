package intercept

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
)

// recordOnly is a handler with only the binding record (and a legacy
// handler that answers every DELETE), for the record's own rules.
func recordOnly(t *testing.T, lim sessions.Limits) *handler {
	t.Helper()
	b, err := newBindings(lim)
	require.NoError(t, err)
	return &handler{bound: b, legacy: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })}
}

// A binding ends with the session: idle for IdleTimeout, or when the
// latest credential seen on it expires (one seen with a later credential
// lives on). (The sleeps only make time pass beyond a
// bound; no assertion depends on how long they take.)
func TestBindingsExpire(t *testing.T) {
	ctx := context.Background()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	alice := principal.Principal{Subject: "alice", ClientID: "c"}

	idle := recordOnly(t, sessions.Limits{IdleTimeout: 5 * time.Millisecond})
	_, err := idle.bind(r, "s1", &alice, "")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	ok, err := idle.owns(ctx, "s1", &alice)
	require.NoError(t, err)
	assert.False(t, ok, "idle beyond IdleTimeout")
	_, err = idle.bind(r, "a1", nil, "")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	ok, _ = idle.owns(ctx, "a1", nil)
	assert.False(t, ok, "an anonymous session too")

	h := recordOnly(t, sessions.Limits{})
	short := alice
	short.Expires = time.Now().Add(5 * time.Millisecond)
	_, err = h.bind(r, "s2", &short, "")
	require.NoError(t, err)
	longer := alice
	longer.Expires = time.Now().Add(time.Hour)
	_, err = h.bind(r, "s3", &longer, "")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	ok, _ = h.owns(ctx, "s2", &longer)
	assert.False(t, ok, "the credential it was seen with expired")
	ok, _ = h.owns(ctx, "s3", &longer)
	assert.True(t, ok)
}

// The record is bounded: at MaxSessions it refuses another signed-in
// session (errNoRoom, after dropping expired ones); anonymous sessions
// are a store of their own whose oldest end first, so that a crowd of
// them never takes a signed-in caller's room.
func TestBindingsBounded(t *testing.T) {
	ctx := context.Background()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	h := recordOnly(t, sessions.Limits{MaxSessions: 3})
	for i, sub := range []string{"a", "b", "c"} {
		p := principal.Principal{Subject: sub, ClientID: "c"}
		_, err := h.bind(r, "s"+string(rune('0'+i)), &p, "")
		require.NoError(t, err)
	}
	d := principal.Principal{Subject: "d", ClientID: "c"}
	_, err := h.bind(r, "s3", &d, "")
	assert.ErrorIs(t, err, errNoRoom)
	for i := range 10 {
		_, err := h.bind(r, "anon"+string(rune('0'+i)), nil, "")
		require.NoError(t, err, "anonymous sessions make room for themselves")
	}
	ok, _ := h.owns(ctx, "anon0", nil)
	assert.False(t, ok, "the oldest anonymous session ended")
	ok, _ = h.owns(ctx, "anon9", nil)
	assert.True(t, ok)
	a := principal.Principal{Subject: "a", ClientID: "c"}
	ok, _ = h.owns(ctx, "s0", &a)
	assert.True(t, ok, "signed-in sessions untouched by the anonymous crowd")
}

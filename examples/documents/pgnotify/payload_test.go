package pgnotify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

func TestPayloadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		event notify.Event
		wire  string
	}{
		{listChanged("bob"), `{"subject":"bob","kind":"list_changed"}`},
		{updated("alice", "docs://documents/x"), `{"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"}`},
		{listChanged("auth0|5f7c<&>\"é"), `{"subject":"auth0|5f7c<&>\"é","kind":"list_changed"}`},
		{listChanged("a\x00b\nc"), `{"subject":"a\u0000b\nc","kind":"list_changed"}`},
		{notify.Event{Subject: "bob", Kind: notify.ListChanged, ID: "1764680000000-0"}, `{"subject":"bob","kind":"list_changed","id":"1764680000000-0"}`},
		{notify.Event{Subject: "bob", Kind: notify.ResourceUpdated, URI: "docs://documents/x", ID: "x-1"}, `{"subject":"bob","kind":"resource_updated","uri":"docs://documents/x","id":"x-1"}`},
		{notify.Event{Subject: "carol", Kind: notify.ElicitationComplete, URI: "el-1"}, `{"subject":"carol","kind":"elicitation_complete","uri":"el-1"}`},
	} {
		got, err := encodePayload(tc.event)
		require.NoError(t, err)
		assert.Equal(t, tc.wire, string(got))
		back, ok := decodePayload(string(got))
		require.True(t, ok)
		assert.Equal(t, tc.event, back)
	}
}

// TestPayloadIDs: an event id that no log gives (which could split an SSE
// field) is neither sent nor taken; the event goes without it, as from an
// instance of an earlier version.
func TestPayloadIDs(t *testing.T) {
	got, err := encodePayload(notify.Event{Subject: "bob", Kind: notify.ListChanged, ID: "a\nb"})
	require.NoError(t, err)
	assert.NotContains(t, string(got), `"id"`)
	for _, wire := range []string{
		`{"subject":"bob","kind":"list_changed","id":"a\nid: 1"}`,
		`{"subject":"bob","kind":"list_changed","id":""}`,
		`{"subject":"bob","kind":"list_changed","id":"with space"}`,
		`{"subject":"bob","kind":"list_changed"}`,
	} {
		e, ok := decodePayload(wire)
		require.True(t, ok, wire)
		assert.Equal(t, listChanged("bob"), e, wire)
	}
	_, ok := decodePayload(`{"subject":"bob","kind":"list_changed","id":5}`)
	assert.False(t, ok, "an id that is not a string is not an event")
}

func TestEncodeRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		event notify.Event
		err   error
	}{
		"no subject":           {listChanged(""), ErrInvalidEvent},
		"no kind":              {notify.Event{Subject: "bob"}, ErrInvalidEvent},
		"unknown kind":         {notify.Event{Subject: "bob", Kind: 9}, ErrInvalidEvent},
		"update without URI":   {updated("bob", ""), ErrInvalidEvent},
		"list change with URI": {notify.Event{Subject: "bob", Kind: notify.ListChanged, URI: "x"}, ErrInvalidEvent},
		// JSON would turn the byte into U+FFFD: another subject.
		"invalid UTF-8 subject": {listChanged("bob\xff"), ErrInvalidEvent},
		"invalid UTF-8 URI":     {updated("bob", "docs://\xff"), ErrInvalidEvent},
		"too large":             {listChanged(strings.Repeat("x", MaxPayloadBytes)), ErrPayloadTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := encodePayload(tc.event)
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// Publish refuses bad events before touching the database: on a closed
// pool the error is still the event's, not the pool's.
func TestPublishChecksFirst(t *testing.T) {
	pool := lazyPool(t)
	pool.Close()
	b, err := New(pool, Options{})
	require.NoError(t, err)
	ctx := context.Background()
	assert.ErrorIs(t, b.Publish(ctx, listChanged("")), ErrInvalidEvent)
	assert.ErrorIs(t, b.Publish(ctx, listChanged(strings.Repeat("x", 8000))), ErrPayloadTooLarge)

	// A valid event on a closed pool fails with the pool's error.
	err = b.Publish(ctx, listChanged("bob"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrInvalidEvent)
	assert.NotErrorIs(t, err, ErrPayloadTooLarge)
}

// Publish on a pool that was closed fails (against the real server: the
// pool worked before).
func TestPublishClosedPool(t *testing.T) {
	pool := newPool(t)
	b, err := New(pool, Options{Channel: testChannel(t)})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, b.Publish(ctx, listChanged("bob")))
	pool.Close()
	assert.Error(t, b.Publish(ctx, listChanged("bob")))
}

func TestNew(t *testing.T) {
	pool := lazyPool(t)
	b, err := New(pool, Options{})
	require.NoError(t, err)
	assert.Equal(t, DefaultChannel, b.Channel())
	assert.Equal(t, `LISTEN "mcpkit_notify"`, b.listen)
	assert.Equal(t, DefaultMinBackoff, b.min)
	assert.Equal(t, DefaultMaxBackoff, b.max)

	b, err = New(pool, Options{MinBackoff: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, b.max, "the default cap is never below the first wait")

	for _, ch := range []string{"a", "_", "mcpkit_notify", "app_2", strings.Repeat("a", 63)} {
		_, err := New(pool, Options{Channel: ch})
		assert.NoError(t, err, ch)
		assert.True(t, ValidChannel(ch), ch)
	}
	for _, ch := range []string{
		"1abc", "Mcpkit", "mcpkit-notify", "mcpkit notify", `a"b`, "a;b", "é", strings.Repeat("a", 64),
		"mcpkit_notify\x00", "LISTEN",
	} {
		_, err := New(pool, Options{Channel: ch})
		assert.Error(t, err, "%q", ch)
		assert.False(t, ValidChannel(ch), "%q", ch)
	}
	for name, o := range map[string]Options{
		"negative min":      {MinBackoff: -1},
		"negative max":      {MaxBackoff: -1},
		"max below min":     {MinBackoff: time.Second, MaxBackoff: time.Millisecond},
		"max below default": {MaxBackoff: time.Millisecond},
	} {
		_, err := New(pool, o)
		assert.Error(t, err, name)
	}
	_, err = New(nil, Options{})
	assert.Error(t, err)
}

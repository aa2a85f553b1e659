package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

func listChanged(s string) notify.Event { return notify.Event{Subject: s, Kind: notify.ListChanged} }
func updated(s, uri string) notify.Event {
	return notify.Event{Subject: s, Kind: notify.ResourceUpdated, URI: uri}
}

func TestPayloadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		event notify.Event
		wire  string
	}{
		{listChanged("bob"), `{"subject":"bob","kind":"list_changed"}`},
		{updated("alice", "docs://documents/x"), `{"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"}`},
		{listChanged(`auth0|5f7c<&>"é`), `{"subject":"auth0|5f7c<&>\"é","kind":"list_changed"}`},
		{listChanged("a\x00b\nc"), `{"subject":"a\u0000b\nc","kind":"list_changed"}`},
		{notify.Event{Subject: "bob", Kind: notify.ListChanged, ID: "1764680000000-0"}, `{"subject":"bob","kind":"list_changed","id":"1764680000000-0"}`},
		{notify.Event{Subject: "bob", Kind: notify.ResourceUpdated, URI: "docs://documents/x", ID: "x-1"}, `{"subject":"bob","kind":"resource_updated","uri":"docs://documents/x","id":"x-1"}`},
		{notify.Event{Subject: "carol", Kind: notify.ElicitationComplete, URI: "el-1"}, `{"subject":"carol","kind":"elicitation_complete","uri":"el-1"}`},
		{listChanged("https://issuer.example\x00alice"), `{"subject":"https://issuer.example\u0000alice","kind":"list_changed"}`},
	} {
		got, err := appendPayload(nil, tc.event)
		require.NoError(t, err)
		assert.Equal(t, tc.wire, string(got))
		back, ok := decodePayload(got)
		require.True(t, ok, tc.wire)
		assert.Equal(t, tc.event, back)
	}
	// Another encoder's escapes (encoding/json's with HTML escaping)
	// decode alike.
	e, ok := decodePayload([]byte(`{"subject":"auth0|5f7c\u003c\u0026\u003e\"\u00e9","kind":"list_changed"}`))
	require.True(t, ok)
	assert.Equal(t, listChanged(`auth0|5f7c<&>"é`), e)
}

// TestPayloadIDs: an event id that no log gives (which could split an SSE
// field) is neither sent nor taken; the event goes without it, as from an
// instance of an earlier version.
func TestPayloadIDs(t *testing.T) {
	got, err := appendPayload(nil, notify.Event{Subject: "bob", Kind: notify.ListChanged, ID: "a\nb"})
	require.NoError(t, err)
	assert.NotContains(t, string(got), `"id"`)
	for _, wire := range []string{
		`{"subject":"bob","kind":"list_changed","id":"a\nid: 1"}`,
		`{"subject":"bob","kind":"list_changed","id":""}`,
		`{"subject":"bob","kind":"list_changed","id":"with space"}`,
		`{"subject":"bob","kind":"list_changed"}`,
	} {
		e, ok := decodePayload([]byte(wire))
		require.True(t, ok, wire)
		assert.Equal(t, listChanged("bob"), e, wire)
	}
	_, ok := decodePayload([]byte(`{"subject":"bob","kind":"list_changed","id":5}`))
	assert.False(t, ok, "an id that is not a string is not an event")
}

func TestAppendPayloadRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		event notify.Event
		err   error
	}{
		"no subject":           {listChanged(""), ErrInvalidEvent},
		"no kind":              {notify.Event{Subject: "bob"}, ErrInvalidEvent},
		"unknown kind":         {notify.Event{Subject: "bob", Kind: 9}, ErrInvalidEvent},
		"update without URI":   {updated("bob", ""), ErrInvalidEvent},
		"list change with URI": {notify.Event{Subject: "bob", Kind: notify.ListChanged, URI: "x"}, ErrInvalidEvent},
		// An encoder would turn the byte into U+FFFD: another subject.
		"invalid UTF-8 subject": {listChanged("bob\xff"), ErrInvalidEvent},
		"invalid UTF-8 URI":     {updated("bob", "docs://\xff"), ErrInvalidEvent},
		"too large":             {listChanged(strings.Repeat("x", MaxPayloadBytes)), ErrPayloadTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := appendPayload([]byte("keep"), tc.event)
			assert.ErrorIs(t, err, tc.err)
			assert.Equal(t, "keep", string(out), "dst is left as it was")
		})
	}
}

// Messages anyone with access to Redis could publish: none that is not
// exactly one valid event is delivered.
func TestDecodePayloadRejects(t *testing.T) {
	for _, p := range []string{
		``, `SECRET`, `null`, `[]`, `"x"`, `{`, `{}`,
		`{"subject":"bob"}`,
		`{"kind":"list_changed"}`,
		`{"subject":"","kind":"list_changed"}`,
		`{"subject":"bob","kind":"other"}`,
		`{"subject":"bob","kind":"resource_updated"}`,
		`{"subject":"bob","kind":"resource_updated","uri":""}`,
		`{"subject":"bob","kind":"list_changed","uri":"x"}`,
		`{"subject":"bob","kind":"list_changed","uri":null}`,
		`{"subject":null,"kind":"list_changed"}`,
		`{"subject":7,"kind":"list_changed"}`,
		`{"subject":"bob","kind":1}`,
		`{"subject":"bob","kind":"list_changed"} trailing`,
		`{"subject":"bob","kind":"list_changed"}{}`,
		// Repeated or case-variant names: a lax decoder would pick one.
		`{"subject":"bob","subject":"eve","kind":"list_changed"}`,
		`{"subject":"bob","Subject":"eve","kind":"list_changed"}`,
		`{"SUBJECT":"eve","kind":"list_changed"}`,
		`{"subject":"\ud800","kind":"list_changed"}`,
		"{\"subject\":\"b\xffob\",\"kind\":\"list_changed\"}",
		`{"subject":"` + strings.Repeat("x", MaxPayloadBytes) + `","kind":"list_changed"}`,
	} {
		_, ok := decodePayload([]byte(p))
		assert.False(t, ok, "%.80s", p)
	}
	e, ok := decodePayload([]byte(` {"future":[1,{"a":null}],"kind":"resource_updated","uri":"docs://x","subject":"bob"} `))
	require.True(t, ok, "unknown members are ignored, order does not matter")
	assert.Equal(t, updated("bob", "docs://x"), e)
}

// FuzzBrokerPayload: decoding any message never panics, and whatever it
// accepts is a deliverable event that encodes back to a message decoding
// to the same event.
func FuzzBrokerPayload(f *testing.F) {
	for _, s := range []string{
		`{"subject":"bob","kind":"list_changed"}`,
		`{"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"}`,
		`{"subject":"bob","kind":"list_changed","extra":[1,2,{"a":null}]}`,
		`{"subject":"b\u00ffob","kind":"list_changed"}`,
		`{"subject":"bob","subject":"eve","kind":"list_changed"}`,
		`{"subject":"\ud800","kind":"list_changed"}`,
		`null`, `[]`, `""`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		e, ok := decodePayload(payload)
		if !ok {
			return
		}
		require.NotEmpty(t, e.Subject)
		again, err := appendPayload(nil, e)
		require.NoError(t, err, "an accepted event encodes")
		back, ok := decodePayload(again)
		require.True(t, ok)
		assert.Equal(t, e, back)
	})
}

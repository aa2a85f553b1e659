package pgnotify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzPGNotifyPayload: decoding any payload never panics, and whatever it
// accepts is a deliverable event that encodes back to a payload decoding
// to the same event.
func FuzzPGNotifyPayload(f *testing.F) {
	for _, s := range []string{
		`{"subject":"bob","kind":"list_changed"}`,
		`{"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"}`,
		`{"subject":"bob","kind":"list_changed","uri":""}`,
		`{"subject":"bob","kind":"list_changed","extra":[1,2,{"a":null}]}`,
		`{"subject":"b\u00ffob","kind":"list_changed"}`,
		`{"subject":"bob","subject":"eve","kind":"list_changed"}`,
		`{"subject":"\ud800","kind":"list_changed"}`,
		`{"subject":null,"kind":"list_changed"}`,
		`null`, `[]`, `""`, ``, `{`, `{"subject":"bob","kind":"list_changed"} x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		e, ok := decodePayload(payload)
		if !ok {
			return
		}
		require.NotEmpty(t, e.Subject)
		again, err := encodePayload(e)
		require.NoError(t, err, "an accepted event encodes")
		back, ok := decodePayload(string(again))
		require.True(t, ok)
		assert.Equal(t, e, back)
	})
}

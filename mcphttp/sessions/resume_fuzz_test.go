package sessions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

// FuzzParseEventID: a Last-Event-ID value is accepted only as an id of
// the caller's tag, exactly as the stream formats it, holding a log id of
// the kit's form (printable ASCII: nothing that could split an SSE
// field); another tag's is never accepted.
func FuzzParseEventID(f *testing.F) {
	alice, bob := eventTag("alice"), eventTag("bob")
	for _, seed := range []string{
		formatEventID(alice, "AAAAAAAAAAA-1"), formatEventID(bob, "1700000000000-0"),
		alice + ".", alice, "", ".", alice + "..", alice + ".a\nb", alice + ". ", alice + "." + strings.Repeat("9", 70),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, ok := parseEventID(v, alice)
		if !ok {
			return
		}
		require.True(t, notify.ValidID(id))
		assert.Equal(t, v, formatEventID(alice, id), "one form only")
		_, okBob := parseEventID(v, bob)
		assert.False(t, okBob, "an id of alice's is not bob's")
	})
}

func TestEventTag(t *testing.T) {
	tag := eventTag("alice")
	assert.Len(t, tag, tagLen)
	assert.Equal(t, tag, eventTag("alice"))
	assert.NotEqual(t, tag, eventTag("bob"))
	id, ok := parseEventID(formatEventID(tag, "x-1"), tag)
	assert.True(t, ok)
	assert.Equal(t, "x-1", id)
	_, ok = parseEventID(formatEventID(eventTag("bob"), "x-1"), tag)
	assert.False(t, ok, "another principal's tag")
}

package inventory

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The word-at-a-time key and name rules accept and refuse what the rules
// say, including the bytes next to the boundaries.
func TestKeyAndNameCharsets(t *testing.T) {
	for _, c := range []struct {
		s         string
		key, name bool
	}{
		{"k00000001", true, true},
		{"abcdefgh", true, true},                  // exactly one word
		{"abcdefghi", true, true},                 // a word and one byte
		{"abc defghij", false, true},              // space: a name, not a key
		{"abcdefg\x7f", false, false},             // DEL in the last byte of the word
		{"abcdefgh\x7f", false, false},            // DEL after the word
		{"\x1fabcdefgh", false, false},            // control byte first
		{"abcdefghijklmno~", true, true},          // 0x7e is in range
		{"abcdefgh!", true, true},                 // 0x21 is in range
		{"Quarterly report é", false, true},       // non-ASCII: a name (checked rune by rune)
		{"Quarterly report \u0085", false, false}, // C1 control
		{"Quarterly report \xff", false, false},   // invalid UTF-8
		{strings.Repeat("a", 256), true, true},    // the longest key
		{strings.Repeat("a", 255) + "\x80", false, false},
	} {
		assert.Equal(t, c.key, checkKey(c.s) == "", "key %q", c.s)
		assert.Equal(t, c.name, display.Printable(c.s), "name %q", c.s)
	}
}

// A template is plain exactly when its literals are ASCII; an entry of a
// template that is not plain is encoded with escapes (U+2028 is allowed in
// a literal, and JSON text must escape it for JavaScript).
func TestPlainTemplates(t *testing.T) {
	for tmpl, plain := range map[string]bool{
		"docs://documents/{id}":    true,
		"file:///{+path}":          true,
		"x://%C3%A9/{id}":          true,
		"docs://dokumente/é/{id}":  false,
		"x://a\u2028/{id}":         false,
		"repo://{o}/{r}/blob/{+p}": true,
	} {
		ut, err := uritemplate.Parse(tmpl)
		require.NoError(t, err, tmpl)
		assert.Equal(t, plain, ut.Plain(), tmpl)
	}
}

// A duplicate differing from the first URI only after the common prefix
// is found; URIs equal after the prefix are duplicates, with and without
// a prefix to skip.
func TestDuplicateURISkip(t *testing.T) {
	es := []Entry{{Key: "a", URI: "docs://documents/a", Name: "a"}, {Key: "b", URI: "docs://documents/b", Name: "b"}, {Key: "c", URI: "docs://documents/a", Name: "c"}}
	for _, tmpl := range []string{"docs://documents/{id}", "{+uri}"} {
		ut, err := uritemplate.Parse(tmpl)
		require.NoError(t, err)
		var c pageCheck
		require.Nil(t, c.start("s", ut, ListRequest{Limit: 3}, Page{Entries: es}))
		assert.Nil(t, c.entry(0))
		assert.Nil(t, c.entry(1))
		ce := c.entry(2)
		require.NotNil(t, ce, tmpl)
		assert.Equal(t, RuleURIDuplicate, ce.Rule)
		assert.Equal(t, 2, ce.Entry)
	}
	ut, err := uritemplate.Parse("docs://documents/{id}")
	require.NoError(t, err)
	assert.Equal(t, len("docs://documents/"), ut.Prefix())
	ut, err = uritemplate.Parse("{scheme}://x")
	require.NoError(t, err)
	assert.Equal(t, 0, ut.Prefix())
	assert.Equal(t, 0, (*uritemplate.Template)(nil).Prefix())
}

package inventory

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/uritemplate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asciiRunNaive is asciiRun byte by byte: the reference.
func asciiRunNaive(s string, lo, hi byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] < lo || s[i] > hi {
			return i
		}
	}
	return len(s)
}

// Every byte value at every position of a word, among bytes in range,
// for the ranges the validation uses: outside and asciiRun agree with the
// byte-by-byte reference.
func TestOutsideEveryByte(t *testing.T) {
	for _, r := range []struct{ lo, hi byte }{{0x20, 0x7e}, {0x21, 0x7e}, {1, 0x7f}} {
		for _, fill := range []byte{r.lo, r.hi} { // the neighbours at either edge of the range
			for b := 0; b < 256; b++ {
				for pos := range 8 {
					buf := []byte(strings.Repeat(string(rune(fill)), 8))
					buf[pos] = byte(b)
					s := string(buf)
					want := byte(b) < r.lo || byte(b) > r.hi
					require.Equal(t, want, outside(word(s, 0), r.lo, r.hi), "byte %#x at %d among %#x, range %#x..%#x", b, pos, fill, r.lo, r.hi)
					require.Equal(t, asciiRunNaive(s, r.lo, r.hi), asciiRun(s, r.lo, r.hi))
				}
			}
		}
	}
}

// Random strings of random lengths, mostly in range with an occasional
// byte outside (and bytes with the high bit set, whose carries and borrows
// must not flag a neighbour falsely).
func TestASCIIRunRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := rng.IntN(40)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0x21 + rng.IntN(0x5e))
			if rng.IntN(16) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		s := string(b)
		for _, r := range []struct{ lo, hi byte }{{0x20, 0x7e}, {0x21, 0x7e}} {
			require.Equal(t, asciiRunNaive(s, r.lo, r.hi), asciiRun(s, r.lo, r.hi), "%q", s)
		}
	}
}

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
		assert.Equal(t, c.name, printable(c.s), "name %q", c.s)
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

// jsonPlain: printable ASCII without a quote or a backslash, at every
// position of a word and in the bytes after the last whole word.
func TestJSONPlain(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 24} {
		base := strings.Repeat("a", n)
		assert.True(t, jsonPlain(base), n)
		for pos := range n {
			for _, c := range []byte{'"', '\\', 0x1f, 0x7f, 0x80, 0xe2, 0x00} {
				b := []byte(base)
				b[pos] = c
				assert.False(t, jsonPlain(string(b)), "%q", b)
			}
			for _, c := range []byte{' ', '~', '!', '#', '[', ']', '/'} {
				b := []byte(base)
				b[pos] = c
				assert.True(t, jsonPlain(string(b)), "%q", b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f))
			if rng.IntN(24) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		want := true
		for _, c := range b {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				want = false
			}
		}
		require.Equal(t, want, jsonPlain(string(b)), "%q", b)
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

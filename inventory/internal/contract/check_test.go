package contract

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

func TestDuplicateURIAgreesWithAMap(t *testing.T) {
	for _, n := range []int{0, 1, 2, 50, 100, 101, 300} {
		for _, dupAt := range []int{-1, 1, n / 2, n - 1} {
			es := make([]string, n)
			for i := range es {
				es[i] = "docs://documents/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('0'+i/26))
			}
			want := -1
			if dupAt > 0 && dupAt < n {
				es[dupAt] = es[dupAt/2]
				want = firstDuplicate(es)
			}
			got := -1
			var c Page
			c.Start(nil, "", n, n, false)
			for i := range es {
				if c.Seen(i, es[i], func(j int) string { return es[j] }) {
					got = i
					break
				}
			}
			assert.Equal(t, want, got, "n %d, duplicate at %d", n, dupAt)
		}
	}
}

func TestUTF16Length(t *testing.T) {
	for s, want := range map[string]int{
		"": 0, "abc": 3, "é": 1, "文": 1, "😀": 2, "a😀b文": 5, "\xff": 1,
	} {
		assert.Equal(t, want, UTF16Len(s), "%q", s)
		assert.Equal(t, want, len(utf16.Encode([]rune(s))), "%q: as JavaScript counts", s)
	}
	assert.False(t, Longer(strings.Repeat("文", 512), 512))
	assert.True(t, Longer(strings.Repeat("文", 513), 512))
}

// The duplicate check in sorted order (issue 31): URIs that come in
// increasing order are compared with the one before only; the first one
// out of order hands over to the set, filled with those before it. Pages
// sorted for a while and then not, with duplicates anywhere, find the same
// first duplicate as a map.
func TestDuplicateURIInSortedOrderAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	for range 5000 {
		n := rng.IntN(120)
		es := make([]string, n)
		sortedFor := rng.IntN(n + 1)
		for i := range es {
			v := rng.IntN(40)
			if i < sortedFor {
				v = 2 * i // increasing, with room for an equal one
				if rng.IntN(30) == 0 && i > 0 {
					v = 2 * (i - 1) // the one before
				}
			}
			es[i] = fmt.Sprintf("docs://documents/d%03d", v)
		}
		want := firstDuplicate(es)
		ut, err := uritemplate.Parse("docs://documents/{id}")
		require.NoError(t, err)
		for _, tmpl := range []*uritemplate.Template{nil, ut} {
			var c Page
			c.Start(tmpl, "", n, n, false)
			got := -1
			for i := range es {
				if c.Seen(i, es[i], func(j int) string { return es[j] }) {
					got = i
					break
				}
			}
			require.Equal(t, want, got, "%v", es)
		}
	}
}

// firstDuplicate is the index of the first entry whose URI an earlier
// entry has, or -1: the oracle of the page check's duplicate rule.
func firstDuplicate(es []string) int {
	seen := map[string]bool{}
	for i, u := range es {
		if seen[u] {
			return i
		}
		seen[u] = true
	}
	return -1
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
		assert.Equal(t, c.key, Key(c.s) == OK, "key %q", c.s)
		assert.Equal(t, c.name, display.Printable(c.s), "name %q", c.s)
	}
}

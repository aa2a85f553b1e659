package jsonstrict

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// appendStringByteByByte is the encoder that budget and jsonrpc each had
// before this package: the reference AppendString must match byte for
// byte.
func appendStringByteByByte(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func TestAppendString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`quote " and \ backslash`, `"quote \" and \\ backslash"`},
		{"tab\tnl\ncr\r", `"tab\tnl\ncr\r"`},
		{"\x00\x01\x08\x0c\x1f\x7f", `"\u0000\u0001\u0008\u000c\u001f` + "\x7f" + `"`},
		{"é ü 日本", `"é ü 日本"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\u2028b\u2029c\u2027d\u202ae", `"a\u2028b\u2029c` + "\u2027" + `d` + "\u202a" + `e"`}, // neighbours are copied
		{"“quoted” — ‘x’ …", `"“quoted” — ‘x’ …"`},                                               // other 0xE2 runes are copied
		{"<script>&</script>", `"<script>&</script>"`},                                           // no HTML escaping
		{"bad \xff utf8 \xc3", `"bad \ufffd utf8 \ufffd"`},
		{"\xe2\x80", `"\ufffd\ufffd"`},           // a truncated U+2028
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`}, // a surrogate in UTF-8
		{"\xe2\x80\xa8\xff", `"\u2028\ufffd"`},   // both paths at once
		{"emoji 😀", `"emoji 😀"`},
		{strings.Repeat("abcdefgh", 4) + "\"", `"` + strings.Repeat("abcdefgh", 4) + `\""`},
		{"1234567\n", `"1234567\n"`},         // the flagged byte is the last of a word
		{"\n1234567", `"\n1234567"`},         // the first
		{"\x1f\x20\x21\x22", `"\u001f !\""`}, // around the SWAR thresholds
		{"\x5b\x5c\x5d", `"[\\]"`},
	} {
		got := AppendString([]byte("x"), tc.in)
		assert.Equal(t, tc.want, string(got[1:]), "%q", tc.in)
		assert.Equal(t, string(appendStringByteByByte(nil, tc.in)), string(got[1:]), "%q: the old encoder's output", tc.in)
		require.True(t, json.Valid(got[1:]), "%q", tc.in)
		var back string
		require.NoError(t, json.Unmarshal(got[1:], &back))
		assert.Equal(t, string([]rune(tc.in)), back, "%q round trips, invalid bytes as U+FFFD", tc.in)
	}
}

// Every position of every byte that needs attention is found, whatever
// surrounds it (the SWAR borrows).
func TestAppendStringEveryPosition(t *testing.T) {
	specials := []string{"\x00", "\x1f", "\"", "\\", "\n", "\u2028", "\u2029", "\xff", "é", "日", "\x7f", " ", "\xe2\x80\xa7"}
	for _, sp := range specials {
		for _, fill := range []string{"a", "\x20", "\x80", "é"} {
			for pos := range 20 {
				s := strings.Repeat(fill, pos) + sp + strings.Repeat(fill, 19-pos)
				if fill == "\x80" {
					s = strings.Repeat("a", pos) + sp + "\x80" + strings.Repeat("b", 19-pos)
				}
				assert.Equal(t, string(appendStringByteByByte(nil, s)), string(AppendString(nil, s)), "%q", s)
			}
		}
	}
}

// Two bytes that need attention, anywhere in strings of every length up
// to three words: the final, overlapping word must ignore what was
// already handled and still find the rest.
func TestAppendStringPairs(t *testing.T) {
	specials := []string{"\"", "\n", "é", "\u2028", "\xff"}
	for n := 1; n <= 24; n++ {
		for p1 := range n {
			for p2 := p1; p2 < n; p2++ {
				for _, a := range specials {
					for _, b := range specials {
						s := []byte(strings.Repeat("a", n))
						s = append(append(append(append(append([]byte{}, s[:p1]...), a...), s[p1:p2]...), b...), s[p2:]...)
						want := string(appendStringByteByByte(nil, string(s)))
						if got := string(AppendString(nil, string(s))); got != want {
							t.Fatalf("%q: %s, want %s", s, got, want)
						}
					}
				}
			}
		}
	}
}

// The word tests flag what they must, in every byte position: attention
// at least the lowest such byte, exactAttention exactly those bytes.
func TestWordMasks(t *testing.T) {
	for v := range 256 {
		c := byte(v)
		want := c < 0x20 || c == '"' || c == '\\' || c >= 0x80
		for pos := range 8 {
			w := (0x61*lsb)&^(0xFF<<(8*pos)) | uint64(c)<<(8*pos) // "aaaa" around c
			bit := uint64(0x80) << (8 * pos)
			assert.Equal(t, want, exactAttention(w)&bit != 0, "byte %#x at %d", c, pos)
			assert.Zero(t, exactAttention(w)&^bit, "byte %#x at %d: no other byte flagged", c, pos)
			assert.Equal(t, want, attention(w) != 0, "byte %#x at %d", c, pos)
			if want {
				assert.Equal(t, bit, attention(w)&-attention(w), "byte %#x at %d: the lowest flag is exact", c, pos)
			}
		}
	}
}

func TestAppendStringAllocations(t *testing.T) {
	buf := make([]byte, 0, 256)
	s := strings.Repeat("日本語 text \"quoted\"\n", 4)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = AppendString(buf[:0], s) }))
}

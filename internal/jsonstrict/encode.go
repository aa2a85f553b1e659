package jsonstrict

import (
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string and returns the extended
// slice. Like encoding/json it replaces invalid UTF-8 with U+FFFD (one per
// byte that does not start a valid sequence) and escapes the quote, the
// backslash, control characters (\n, \r and \t short, the others as
// \u00XX, \b and \f included), U+2028 and U+2029; unlike encoding/json it
// leaves '<', '>' and '&' alone. Everything else is copied as is.
//
// Runs of ASCII bytes that need no escaping are found eight at a time,
// and runs of multi-byte runes are checked without decoding them; both
// are copied at once. It allocates only when dst must grow.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		// Eight bytes at a time while none is a control byte, a quote, a
		// backslash or not ASCII; skip to the first that is.
		for i+8 <= len(s) && strSafe[s[i]] {
			t := s[i : i+8]
			w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			if m := attention(w); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if strSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// A run of multi-byte runes. Two- and three-byte sequences (Latin,
		// Greek, Cyrillic, CJK, …) are checked here, others by utf8.
		for i < len(s) && s[i] >= utf8.RuneSelf {
			c := s[i]
			if 0xE0 <= c && c <= 0xEF && i+2 < len(s) && threeByte(c, s[i+1], s[i+2]) {
				if c == 0xE2 && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) { // U+2028, U+2029
					dst = append(dst, s[start:i]...)
					dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
					start = i + 3
				}
				i += 3
				continue
			} else if 0xC2 <= c && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
				i += 2
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 { // one U+FFFD for this byte
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				start = i + 1
			}
			i += n
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// attention returns a word with the high bit set in (at least) the lowest
// byte of w that is below 0x20, a quote, a backslash or 0x80 or above, and
// zero when there is none. Bits above the lowest flagged byte may be wrong
// (borrows propagate only upwards, from a flagged byte), so only the
// lowest one may be used.
func attention(w uint64) uint64 {
	ctl := w - 0x20*lsb // high bit set below 0x20 (and from 0xA0: caught by w itself)
	q := w ^ ('"' * lsb)
	q = (q - lsb) &^ q
	b := w ^ ('\\' * lsb)
	b = (b - lsb) &^ b
	return (ctl | q | b | w) & msb
}

// quoteOrBackslash is attention for the quote and the backslash only.
func quoteOrBackslash(w uint64) uint64 {
	q := w ^ ('"' * lsb)
	q = (q - lsb) &^ q
	b := w ^ ('\\' * lsb)
	b = (b - lsb) &^ b
	return (q | b) & msb
}

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
// ASCII is read eight bytes at a time (a word built from bytes, no unsafe),
// runs of two- and three-byte runes are checked without decoding them, and
// everything that needs no escaping is copied in runs. It allocates only
// when dst must grow.
//
// Complexity: the hot encoder of every response string, one pass with its fast paths (ASCII words, two- and three-byte runs) inline; a call per run would cost on every item.
//
//gocyclo:ignore
func AppendString(dst []byte, s string) []byte {
	if plain(s) {
		// Most strings (URIs, names, identifiers) need nothing: one
		// check, one copy.
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	start := 0
	i := 0
	for i < len(s) {
		// Eight bytes at a time: a word without a control byte, quote,
		// backslash or non-ASCII byte is skipped; in the others, each
		// flagged ASCII byte is escaped in place, and the first non-ASCII
		// byte leaves for the rune path below. The escapes are written
		// here, not by appendEscape: a call per escape costs 5-10% on
		// text dense with them.
	words:
		for i < len(s) && len(s) >= 8 {
			base, skip := i, uint64(0)
			if i+8 > len(s) {
				// The last bytes: the final word, which overlaps bytes
				// already handled; their flags are dropped.
				base = len(s) - 8
				skip = 1<<(8*(i-base)) - 1
			}
			w := word(s[base:])
			if attention(w) != 0 {
				for m := exactAttention(w) &^ skip; m != 0; m &= m - 1 {
					k := base + bits.TrailingZeros64(m)/8
					c := s[k]
					if c >= utf8.RuneSelf {
						i = k
						break words
					}
					dst = append(dst, s[start:k]...)
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
					start = k + 1
				}
			}
			i = base + 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf { // a string shorter than a word
			if !strSafe[c] {
				dst = appendEscape(append(dst, s[start:i]...), c)
				start = i + 1
			}
			i++
			continue
		}
		// A run of multi-byte runes. Two- and three-byte sequences (Latin,
		// Greek, Cyrillic, CJK, …) are checked here, others by utf8.
		for i < len(s) && s[i] >= utf8.RuneSelf {
			c := s[i]
			if 0xE0 <= c && c <= 0xEF && i+2 < len(s) && threeByte(c, s[i+1], s[i+2]) {
				if c == 0xE2 && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
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

// plain reports whether s is ASCII that needs no escape in a JSON string:
// no control byte, quote, backslash or byte of 0x80 and above, read eight
// bytes at a time (the tail as one word overlapping the last ones).
func plain(s string) bool {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if !strSafe[s[i]] {
				return false
			}
		}
		return true
	}
	var acc uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		acc |= attention(word(s[i:]))
	}
	if i < len(s) {
		acc |= attention(word(s[len(s)-8:]))
	}
	return acc == 0
}

// word returns the first eight bytes of s (at least eight long) as a
// little-endian word; the compiler makes it one load.
func word(s string) uint64 {
	t := s[:8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
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

// exactAttention flags, exactly, every byte of w below 0x20, a quote, a
// backslash or 0x80 and above (no false positives: no carry crosses a
// byte).
func exactAttention(w uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	ctl := ^((w & low7) + 0x60*lsb)
	q := w ^ ('"' * lsb)
	q = ^(((q & low7) + low7) | q)
	b := w ^ ('\\' * lsb)
	b = ^(((b & low7) + low7) | b)
	return (ctl | q | b | w) & msb
}

// appendEscape appends the escape of an ASCII byte that is not strSafe: a
// control byte, the quote or the backslash.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// Package ascii holds word-at-a-time tests of ASCII text: most keys, URIs
// and names the kit validates are short ASCII, and testing eight bytes at
// once keeps the per-entry rules cheap.
package ascii

// Word-at-a-time tests for the validation of list entries: most keys,
// URIs and names are short ASCII, and testing eight bytes at once keeps
// the per-entry rules cheap. A word is built from bytes (the compiler makes
// it one load); no unsafe. Each test answers only whether some byte of the
// word is in a range, which the classic borrow and carry tricks decide
// exactly (they may flag the wrong byte above the first one in range,
// never a word without one).

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// word returns the eight bytes of s from i as a little-endian word; s must
// hold them.
func word(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// outside reports whether some byte of w is below lo or above hi, for
// 0 < lo <= 0x80 and hi <= 0x7F: a byte below lo borrows into its own
// high bit in w - lo (and has its high bit clear in w); a byte above hi
// carries into its high bit in w + 0x7F-hi, or has it set already.
func outside(w uint64, lo, hi byte) bool {
	below := (w - uint64(lo)*lsb) &^ w
	above := w + uint64(0x7F-hi)*lsb | w
	return (below|above)&msb != 0
}

// Run returns the length of the longest prefix of s whose bytes are
// all in lo..hi (0 < lo <= 0x80, hi <= 0x7F): whole words first, then
// byte by byte from the first word with a byte outside.
func Run(s string, lo, hi byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if outside(word(s, i), lo, hi) {
			break
		}
	}
	if i+8 > len(s) && i >= 8 && i < len(s) && !outside(word(s, len(s)-8), lo, hi) {
		return len(s) // every word passed; the last bytes, as one word overlapping them
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < lo || c > hi {
			return i
		}
	}
	return i
}

// KeyChars reports whether every byte of k is in 0x21..0x7E, the key
// charset.
func KeyChars(k string) bool {
	i := 0
	for ; i+8 <= len(k); i += 8 {
		if outside(word(k, i), 0x21, 0x7e) {
			return false
		}
	}
	if i == len(k) {
		return true
	}
	if len(k) >= 8 { // the last bytes, as one word overlapping bytes seen
		return !outside(word(k, len(k)-8), 0x21, 0x7e)
	}
	for ; i < len(k); i++ {
		if c := k[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// JSONPlain reports whether s is printable ASCII (0x20..0x7E) without '"'
// or '\\': a valid name (control characters are the only ASCII a name
// may not hold), whose JSON encoding is s between quotes.
func JSONPlain(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if notPlain(word(s, i)) {
			return false
		}
	}
	if i == len(s) {
		return true
	}
	if len(s) >= 8 {
		return !notPlain(word(s, len(s)-8))
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// notPlain reports whether some byte of w is outside 0x20..0x7E, or is
// '"' or '\\' (for ASCII bytes, a byte equal to c is zero in w^c, and
// borrows in it - lsb; the other bytes are caught by outside).
func notPlain(w uint64) bool {
	q := w ^ '"'*lsb
	b := w ^ '\\'*lsb
	return outside(w, 0x20, 0x7e) || ((q-lsb)&^q|(b-lsb)&^b)&msb != 0
}

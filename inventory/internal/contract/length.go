package contract

import "unicode/utf8"

// Lengths are counted as the seed of the list contract counts them: in
// UTF-16 code units, the length of a JavaScript string. A rune outside the
// Basic Multilingual Plane counts two, every other rune one; ASCII text has
// as many code units as bytes.

// Limits of the list contract: lengths in UTF-16 code units, a key in
// bytes.
const (
	MaxURILen   = 2048 // longest URI the kit lists, matches or reads
	MaxNameLen  = 512  // longest entry or resource name
	MaxMIMELen  = 128  // longest MIME type
	MaxKeyBytes = 256  // longest entry key (ASCII)
)

// UTF16Len returns the length of s in UTF-16 code units. Invalid UTF-8
// bytes count one each (such text is refused elsewhere).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// Longer reports whether s is longer than max UTF-16 code units. A string
// of at most max bytes never is (no rune takes more code units than
// bytes), which is the fast path for nearly every value.
func Longer(s string, max int) bool {
	return len(s) > max && UTF16Len(s) > max
}

// Clip clips s to at most max UTF-16 code units with a trailing "…",
// never splitting a rune.
func Clip(s string, max int) string {
	if !Longer(s, max) {
		return s
	}
	const ellipsis = "…" // one code unit
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max-1 {
			return s[:i] + ellipsis
		}
		n += w
	}
	return s
}

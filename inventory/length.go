package inventory

import (
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/display"
)

// Lengths are counted as the seed of the list contract counts them: in
// UTF-16 code units, the length of a JavaScript string. A rune outside the
// Basic Multilingual Plane counts two, every other rune one; ASCII text has
// as many code units as bytes.

// Limits of the list contract, in UTF-16 code units.
const (
	maxURILen  = 2048 // longest URI the kit lists, matches or reads
	maxNameLen = 512  // longest entry or resource name
	maxMIMELen = 128  // longest MIME type
)

// utf16Len returns the length of s in UTF-16 code units. Invalid UTF-8
// bytes count one each (such text is refused elsewhere).
func utf16Len(s string) int {
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

// longer reports whether s is longer than max UTF-16 code units. A string
// of at most max bytes never is (no rune takes more code units than
// bytes), which is the fast path for nearly every value.
func longer(s string, max int) bool {
	return len(s) > max && utf16Len(s) > max
}

// ClipName returns name clipped to the longest name a listed entry may
// have (512 UTF-16 code units, the seed's limit), ending in "…" when it
// was clipped, never splitting a rune: a List callback over titles the
// application does not control can pass every title through it, so that
// one long title never makes the caller's whole list fail. It also
// replaces each character of the name rule (control, format,
// bidirectional, default-ignorable: see the package documentation) and
// each byte that is not UTF-8 with U+FFFD, which a name may hold: the
// client sees that something was there, and the name passes for no
// other (List and Search do the same to what a callback returns). Names
// within the limit without such characters are returned unchanged.
func ClipName(name string) string {
	return clip(display.Defuse(name), maxNameLen)
}

// clip clips s to at most max UTF-16 code units with a trailing "…".
func clip(s string, max int) string {
	if !longer(s, max) {
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

// Package display checks text that clients show people: names, titles,
// descriptions. A control character breaks a line or a terminal; a
// bidirectional, invisible or tag character makes a name pass for another
// ("invoice_\u202Efdp.exe" shows as "invoice_exe.pdf"). Such text is
// refused, never escaped or stripped.
package display

import (
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
)

// Name reports whether s is printable (see Printable) and holds no
// spoofing character (see Spoofing): what a name or title may be.
func Name(s string) bool { return Printable(s) && displayable(s) }

// Text reports whether an optional displayed text (a title, a
// description: line breaks allowed) is valid UTF-8 without spoofing
// characters.
func Text(s string) bool { return utf8.ValidString(s) && displayable(s) }

// Printable reports whether s is valid UTF-8 without control characters
// (C0, DEL, C1).
func Printable(s string) bool {
	// Printable ASCII, eight bytes at a time; the rest rune by rune.
	for i := ascii.Run(s, 0x20, 0x7e); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f {
			return false
		}
		i += size
	}
	return true
}

// displayable reports whether s (valid UTF-8) holds no spoofing character
// (see Spoofing). Printable ASCII, eight bytes at a time, is skipped.
func displayable(s string) bool {
	for i := ascii.Run(s, 0x01, 0x7f); i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if Spoofing(r) {
			return false
		}
		i += size
	}
	return true
}

// Defuse returns s with each spoofing character replaced by U+FFFD: text
// that shows that something was there and passes for no other. s itself
// when it has none (no allocation).
func Defuse(s string) string {
	if displayable(s) {
		return s
	}
	b := make([]rune, 0, len(s))
	for _, r := range s {
		if Spoofing(r) {
			r = utf8.RuneError
		}
		b = append(b, r)
	}
	return string(b)
}

// Spoofing reports a character that changes how the text around it is
// shown without being seen itself, so that a name can pass for another
// ("invoice_\u202Efdp.exe" shows as "invoice_exe.pdf"): the bidirectional
// controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), the
// zero-width and invisible characters (U+200B–U+200D, U+2060–U+2064,
// U+FEFF) and the tag characters (U+E0000–U+E007F).
func Spoofing(r rune) bool {
	switch {
	case r < 0x061C:
		return false
	case r == 0x061C, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069, r == 0xFEFF:
		return true
	}
	return r >= 0xE0000 && r <= 0xE007F
}

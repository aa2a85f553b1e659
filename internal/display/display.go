// Package display checks text that clients show people: names, titles,
// descriptions. A control character breaks a line or a terminal; a
// bidirectional, invisible or format character makes a name pass for
// another ("invoice_\u202Efdp.exe" shows as "invoice_exe.pdf"). One rule
// ([Refused]) says which characters: the kit refuses them in what an
// application registers, and escapes them ([Defuse]: U+FFFD) in what it
// lists, so that a value stored before the rule, or by code that skips
// it, never makes a list fail.
package display

import (
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
)

// Name reports whether s is valid UTF-8 without a [Refused] character:
// what a name or title may be.
func Name(s string) bool {
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
		if r == utf8.RuneError && size == 1 || Refused(r) {
			return false
		}
		i += size
	}
	return true
}

// Text reports whether an optional displayed text (a description: line
// breaks allowed) is valid UTF-8 without a [Refused] character other than
// the line breaks and the tab (U+0009, U+000A, U+000D, U+2028, U+2029).
func Text(s string) bool {
	for i := ascii.Run(s, 0x20, 0x7e); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Refused(r) && r != 0x2028 && r != 0x2029 {
			return false
		}
		i += size
	}
	return true
}

// Printable reports whether s is valid UTF-8 without control characters
// (C0, DEL, C1): what a key or a query that is never shown as a name may
// be.
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

// Defuse returns s with each [Refused] character, and each byte that is
// not UTF-8, replaced by U+FFFD: text that shows that something was there
// and passes for no other, and that [Name] accepts. s itself when Name
// accepts it already (no allocation).
func Defuse(s string) string {
	if Name(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || Refused(r) {
			r = utf8.RuneError
		}
		b = utf8.AppendRune(b, r)
		i += max(size, 1)
	}
	return string(b)
}

// Refused reports a character that no name may hold, by Unicode
// properties (the Unicode version of Go's unicode package, 15.0):
//
//   - the control characters (Cc: C0, DEL, C1) and the line and paragraph
//     separators (Zl, Zp: U+2028, U+2029), which break lines;
//   - the format characters (Cf), the bidirectional controls among them
//     (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), which reorder
//     the text around them, and the zero-width ones (U+200B–U+200D, U+2060,
//     U+FEFF, U+00AD), which are not seen;
//   - the Default_Ignorable_Code_Points (Other_Default_Ignorable_Code_Point,
//     Cf and Variation_Selector, less White_Space, U+FFF9–U+FFFB,
//     U+13430–U+1343F and Prepended_Concatenation_Mark — which are Cf, so
//     refused all the same): what renderers show as nothing, such as the
//     Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), U+034F, U+17B4,
//     U+17B5, the variation selectors (U+180B–U+180F, U+FE00–U+FE0F,
//     U+E0100–U+E01EF) and the tags (U+E0000–U+E0FFF).
//
// The price: a name cannot hold an emoji sequence joined by U+200D (a
// family, a profession with a skin tone), a flag made of tags, a
// character with a variation selector (U+FE0F for emoji presentation), a
// soft hyphen, nor the U+200C that some Persian and Indic words need.
// Listed names that hold one show U+FFFD in its place.
func Refused(r rune) bool {
	if r < 0xA0 {
		return r < 0x20 || r >= 0x7f
	}
	if r < 0xAD {
		return false
	}
	lo, hi := 0, len(refused)
	for lo < hi { // the first range whose end is at least r
		m := int(uint(lo+hi) >> 1)
		if refused[m][1] < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(refused) && refused[lo][0] <= r
}

// refused are the ranges of Refused characters from U+00A0 on, in order;
// TestRefusedEveryCodePoint checks them against Go's unicode tables.
var refused = [...][2]rune{
	{0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x0600, 0x0605}, {0x061C, 0x061C}, {0x06DD, 0x06DD},
	{0x070F, 0x070F}, {0x0890, 0x0891}, {0x08E2, 0x08E2}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
	{0x180B, 0x180F}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164},
	{0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFFB}, {0x110BD, 0x110BD},
	{0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
}

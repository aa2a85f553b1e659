package skills

import (
	"strconv"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/display"
)

// appendFrontmatter appends fm (a validated, strict JSON object) with
// every character its strings may not show escaped: a character the
// kit's name rule refuses (display.Refused: controls, format,
// bidirectional and default-ignorable characters), other than the tab
// and the line breaks a description may hold, becomes U+FFFD, whether
// written raw or as a \u escape. So a description stored before the rule,
// or by code that skips it, is shown defused and never fails a listing
// (issue 35). fm itself when it has nothing to escape.
func appendFrontmatter(dst, fm []byte) []byte {
	if plainFrontmatter(fm) {
		return append(dst, fm...)
	}
	in := false
	for i := 0; i < len(fm); {
		c := fm[i]
		switch {
		case !in:
			in = c == '"'
			dst = append(dst, c)
			i++
		case c == '"':
			in = false
			dst = append(dst, c)
			i++
		case c == '\\':
			r, n := jsonEscape(fm[i:])
			if shown(r) {
				dst = append(dst, fm[i:i+n]...)
			} else {
				dst = append(dst, `\ufffd`...)
			}
			i += n
		case c == 0x7f: // DEL, the one control JSON lets a string hold raw
			dst = append(dst, `\ufffd`...)
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(fm[i:])
			if !shown(r) || r == utf8.RuneError && n <= 1 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			i += max(n, 1)
		}
	}
	return dst
}

// plainFrontmatter reports printable ASCII without \u escapes, \b or \f:
// nothing to escape (the common case, no copy).
func plainFrontmatter(fm []byte) bool {
	for i, c := range fm {
		if c < 0x20 || c > 0x7e || c == '\\' && i+1 < len(fm) && (fm[i+1] == 'u' || fm[i+1] == 'b' || fm[i+1] == 'f') {
			return false
		}
	}
	return true
}

// shown reports whether a string of the frontmatter may show r: not
// refused by the name rule, or a tab or line break.
func shown(r rune) bool {
	switch r {
	case '\t', '\n', '\r', 0x2028, 0x2029:
		return true
	}
	return !display.Refused(r)
}

// jsonEscape decodes the escape sequence at the start of b (valid JSON:
// "\\" then one of "\"\\/bfnrt" or "u" and four hex digits; a surrogate
// pair as two) and returns its character and length. A lone surrogate is
// U+FFFD.
func jsonEscape(b []byte) (rune, int) {
	if len(b) < 2 {
		return utf8.RuneError, len(b)
	}
	switch b[1] {
	case 'u':
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	default:
		return rune(b[1]), 2
	}
	hex := func(p []byte) (rune, bool) {
		if len(p) < 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(p[:4]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex(b[2:])
	if !ok {
		return utf8.RuneError, min(len(b), 6)
	}
	if r >= 0xD800 && r <= 0xDBFF && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if lo, ok := hex(b[8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 12
		}
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return utf8.RuneError, 6
	}
	return r, 6
}

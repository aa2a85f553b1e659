package jsonstrict

import (
	"math/bits"
	"unicode/utf8"
)

// The scanner is a single-pass, recursive-descent validator over a byte
// slice. It checks RFC 8259 syntax, UTF-8, \u escapes (no lone
// surrogates), nesting depth, member counts and duplicate member names,
// and it hands the top-level members or elements to a callback as it
// goes. It never copies or decodes a value it is not asked for.
//
// A syntax error, excessive nesting or too many members stops the scan at
// once (fatal). A duplicate name is recorded in dup and the scan goes on,
// so that a document that is not JSON is always a syntax error, whatever
// rule it broke first.

type scanner struct {
	data []byte
	i    int

	maxDepth   int
	maxMembers int // 0: no cap

	fatal   error // the scan stopped: syntax, depth or members
	dup     error // a duplicate name was found; the scan went on
	stopped bool  // the callback asked to stop

	// Hashes of the member names of the open objects, innermost last:
	// keys()[:nkeys]. They live in small (on the stack with the scanner)
	// until there are more than fit, then in big.
	nkeys int
	small [32]uint64
	big   []uint64

	name []byte // scratch for the unescaped names given to callbacks
}

// strSafe[c] is true for bytes that need no attention inside a string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// fail records a fatal error and returns false.
func (s *scanner) fail(err error) bool {
	s.fatal = err
	return false
}

// at returns the byte at s.i, or 0 at the end.
func (s *scanner) at() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one JSON value at s.i, inside a container at depth.
func (s *scanner) value(depth int) bool {
	if s.i >= len(s.data) {
		return s.fail(errEnd)
	}
	switch c := s.data[s.i]; c {
	case '{':
		return s.object(depth+1, nil)
	case '[':
		return s.array(depth+1, nil)
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || isDigit(c) {
			return s.number()
		}
	}
	return s.fail(errByte)
}

// literal consumes word, which must be next.
func (s *scanner) literal(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return s.fail(errLiteral)
	}
	s.i += len(word)
	return true
}

// number scans a JSON number.
//
// Complexity: the RFC 8259 number grammar as one scan (sign, integer, fraction, exponent), each branch one rule of it.
//
//gocyclo:ignore
func (s *scanner) number() bool {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return s.fail(errNumber)
	case d[i] == '0':
		i++
	case isDigit(d[i]):
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	default:
		return s.fail(errNumber)
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return s.fail(errNumber)
		}
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return s.fail(errNumber)
		}
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	s.i = i
	return true
}

// str scans a string from its opening quote to just past its closing
// quote, and reports whether it holds any escape. Runs of plain ASCII are
// skipped eight bytes at a time, and two- and three-byte runes are checked
// inline.
func (s *scanner) str() (esc, ok bool) {
	d := s.data
	i := s.i + 1
	for i < len(d) {
		c := d[i]
		if strSafe[c] {
			for i++; i+8 <= len(d); i += 8 {
				t := d[i : i+8]
				w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
					uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
				if m := attention(w); m != 0 {
					i += bits.TrailingZeros64(m) / 8
					break
				}
			}
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return esc, true
		case c == '\\':
			n := escapeLen(d, i)
			if n == 0 {
				return false, s.fail(errEscape)
			}
			esc = true
			i += n
		case c < 0x20:
			return false, s.fail(errControl)
		case 0xE0 <= c && c <= 0xEF && i+2 < len(d) && threeByte(c, d[i+1], d[i+2]):
			i += 3
		case 0xC2 <= c && c <= 0xDF && i+1 < len(d) && d[i+1]&0xC0 == 0x80:
			i += 2
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				return false, s.fail(errUTF8)
			}
			i += n
		}
	}
	return false, s.fail(errUnterminated)
}

// threeByte reports whether c, c1, c2 (c in 0xE0…0xEF) are a valid
// three-byte UTF-8 sequence: no overlong form, no surrogate.
func threeByte(c, c1, c2 byte) bool {
	lo, hi := byte(0x80), byte(0xBF)
	switch c {
	case 0xE0:
		lo = 0xA0
	case 0xED:
		hi = 0x9F
	}
	return lo <= c1 && c1 <= hi && c2&0xC0 == 0x80
}

// escapeLen returns the length of the valid escape sequence at d[i] (a
// backslash): 2, 6, or 12 for a surrogate pair; 0 when it is invalid,
// including a lone or reversed surrogate.
func escapeLen(d []byte, i int) int {
	if i+1 >= len(d) {
		return 0
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r, ok := hex4(d, i+2)
		switch {
		case !ok:
			return 0
		case r < 0xD800 || r >= 0xE000:
			return 6
		case r >= 0xDC00: // a low surrogate first
			return 0
		}
		if i+7 < len(d) && d[i+6] == '\\' && d[i+7] == 'u' {
			if r2, ok := hex4(d, i+8); ok && 0xDC00 <= r2 && r2 < 0xE000 {
				return 12
			}
		}
	}
	return 0
}

// hex4 decodes four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i < 0 || len(d)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// array scans an array whose '[' is at s.i; the array is at depth. fn,
// when not nil, is called with each element.
func (s *scanner) array(depth int, fn func(Value) bool) bool {
	if depth > s.maxDepth {
		return s.fail(errDeep)
	}
	s.i++
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return true
	}
	for {
		start := s.i
		if !s.value(depth) {
			return false
		}
		if fn != nil && !fn(Value{s.data[start:s.i]}) {
			s.stopped = true
			return false
		}
		s.ws()
		if s.i >= len(s.data) {
			return s.fail(errUnterminatedArray)
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return true
		default:
			return s.fail(errArraySep)
		}
	}
}

// object scans an object whose '{' is at s.i; the object is at depth. fn,
// when not nil, is called with each member.
//
// Complexity: the object grammar as one loop (key, colon, value, comma or end), each branch one error of it.
//
//gocyclo:ignore
func (s *scanner) object(depth int, fn func([]byte, Value) bool) bool {
	if depth > s.maxDepth {
		return s.fail(errDeep)
	}
	obj := s.i
	s.i++
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return true
	}
	base := s.nkeys
	for n := 1; ; n++ {
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return s.fail(errName)
		}
		start := s.i + 1
		esc, ok := s.str()
		if !ok {
			return false
		}
		end := s.i - 1
		if n > s.maxMembers && s.maxMembers > 0 {
			return s.fail(errTooMany)
		}
		if s.addName(base, obj, start, end) && s.dup == nil {
			s.dup = errDup
		}
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return s.fail(errColon)
		}
		s.i++
		s.ws()
		vstart := s.i
		if !s.value(depth) {
			return false
		}
		if fn != nil {
			name := s.data[start:end]
			if esc {
				s.name = appendUnescaped(s.name[:0], name)
				name = s.name
			}
			if !fn(name, Value{s.data[vstart:s.i]}) {
				s.stopped = true
				return false
			}
		}
		s.ws()
		if s.i >= len(s.data) {
			return s.fail(errUnterminatedObject)
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			s.closeNames(base, obj)
			return true
		default:
			return s.fail(errObjectSep)
		}
	}
}

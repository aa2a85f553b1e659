package jsonrpc

import "unicode/utf8"

// The scanner is a single-pass, recursive-descent JSON validator over a byte
// slice. It checks RFC 8259 syntax, UTF-8, \u escapes (no lone surrogates),
// nesting depth and duplicate member names, and it captures the spans of the
// top-level members of a message as it goes (see top.go). It never copies
// or decodes a value it does not need.
//
// Failures come in two grades. A syntax error or excessive nesting stops the
// scan at once (fail). Every other rule (duplicate names, envelope rules) is
// recorded in bad and the scan goes on, so that a body that is not JSON is
// always a parse error, whatever rule it broke first.

// failure is a fatal scan outcome.
type failure uint8

const (
	failNone  failure = iota
	failParse         // not JSON: -32700
	failDepth         // nesting deeper than MaxDepth: -32600
)

// object modes: how members are handled.
const (
	modeAny   uint8 = iota // any object: just validate
	modeTop                // the message envelope
	modeError              // the "error" member of a response
)

type scanner struct {
	data  []byte
	i     int
	maxID int // the longest id text accepted

	fail   failure
	reason string // reason for fail
	bad    string // first broken rule, when the JSON itself is fine

	// Hashes of the member names of the open objects, innermost last:
	// keys()[:nkeys]. They live in small (on the stack with the scanner)
	// until there are more than fit, then in big.
	nkeys int
	small [32]uint64
	big   []uint64

	top top // what the envelope scan captured
}

// strSafe[c] is true for bytes that need no attention inside a string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (s *scanner) parseErr(reason string) bool {
	s.fail = failParse
	s.reason = reason
	return false
}

// invalid records a broken rule unless one is already recorded.
func (s *scanner) invalid(reason string) {
	if s.bad == "" {
		s.bad = reason
	}
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
		return s.parseErr("unexpected end")
	}
	switch c := s.data[s.i]; c {
	case '{':
		return s.object(depth+1, modeAny)
	case '[':
		return s.array(depth + 1)
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true") || s.parseErr("bad literal")
	case 'f':
		return s.literal("false") || s.parseErr("bad literal")
	case 'n':
		return s.literal("null") || s.parseErr("bad literal")
	default:
		if c == '-' || isDigit(c) {
			_, ok := s.number()
			return ok
		}
	}
	return s.parseErr("unexpected byte")
}

// literal consumes word if it is next.
func (s *scanner) literal(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number scans a JSON number and reports whether it is an integer (no
// fraction, no exponent).
func (s *scanner) number() (isInt, ok bool) {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return false, s.parseErr("bad number")
	case d[i] == '0':
		i++
	case isDigit(d[i]):
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	default:
		return false, s.parseErr("bad number")
	}
	isInt = true
	if i < len(d) && d[i] == '.' {
		isInt = false
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return false, s.parseErr("bad number")
		}
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		isInt = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return false, s.parseErr("bad number")
		}
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	s.i = i
	return isInt, true
}

// str scans a string from its opening quote to just past its closing quote,
// and reports whether it holds any escape.
func (s *scanner) str() (esc, ok bool) {
	d := s.data
	i := s.i + 1
	for {
		for i < len(d) && strSafe[d[i]] {
			i++
		}
		if i >= len(d) {
			return false, s.parseErr("unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return esc, true
		case c == '\\':
			n := escapeLen(d, i)
			if n == 0 {
				return false, s.parseErr("bad escape")
			}
			esc = true
			i += n
		case c < 0x20:
			return false, s.parseErr("control character in string")
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				return false, s.parseErr("invalid UTF-8")
			}
			i += n
		}
	}
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
	if len(d)-i < 4 {
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

// array scans an array whose '[' is at s.i; the array is at depth.
func (s *scanner) array(depth int) bool {
	if depth > MaxDepth {
		s.fail, s.reason = failDepth, "nesting too deep"
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.ws()
		if s.i >= len(s.data) {
			return s.parseErr("unterminated array")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return true
		default:
			return s.parseErr("expected , or ]")
		}
	}
}

// object scans an object whose '{' is at s.i; the object is at depth.
func (s *scanner) object(depth int, mode uint8) bool {
	if depth > MaxDepth {
		s.fail, s.reason = failDepth, "nesting too deep"
		return false
	}
	obj := s.i
	s.i++
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return true
	}
	base := s.nkeys
	for {
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return s.parseErr("expected member name")
		}
		start := s.i + 1
		esc, ok := s.str()
		if !ok {
			return false
		}
		name := s.data[start : s.i-1]
		if s.addName(base, obj, start, s.i-1) {
			s.invalid("duplicate member name")
			if mode == modeTop && foldEqual(name, []byte("id")) {
				s.top.idAmbiguous = true
			}
		}
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return s.parseErr("expected :")
		}
		s.i++
		s.ws()
		switch mode {
		case modeTop:
			ok = s.topMember(name, esc, depth)
		case modeError:
			ok = s.errorMember(name, esc, depth)
		default:
			ok = s.value(depth)
		}
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.data) {
			return s.parseErr("unterminated object")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			s.closeNames(base, obj, mode == modeTop)
			return true
		default:
			return s.parseErr("expected , or }")
		}
	}
}

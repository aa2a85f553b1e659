package authn

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// A strict, allocation-light reader for the small JSON objects of a token:
// the JOSE header, the claims, an introspection response. Unlike
// encoding/json it rejects duplicate member names (after unescaping: a
// parser differential such as two "aud" members is an attack, not a
// convenience), invalid UTF-8, lone surrogate escapes and trailing data, and
// it bounds nesting depth and member count.

const (
	maxJSONDepth   = 32
	maxJSONMembers = 512
)

var errJSON = errors.New("authn: malformed json")

// jsonKind is the type of a JSON value.
type jsonKind uint8

const (
	jsonString jsonKind = iota + 1
	jsonNumber
	jsonBool
	jsonNull
	jsonObject
	jsonArray
)

// jsonValue is one member value: its kind and its exact bytes.
type jsonValue struct {
	kind jsonKind
	raw  []byte // for a string, including the quotes
}

// walkObject calls fn for every member of the JSON object in data, in order.
// name is the unescaped member name; it and v.raw alias data or a scratch
// buffer and must not be retained. It fails on anything but exactly one
// well-formed object (surrounded by optional whitespace) and on duplicate
// member names.
func walkObject(data []byte, fn func(name []byte, v jsonValue) error) error {
	if !utf8.Valid(data) {
		return errJSON
	}
	s := scanner{data: data}
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return errJSON
	}
	if err := s.object(0, fn); err != nil {
		return err
	}
	return s.end()
}

// nameSet detects duplicate member names: a linear scan for the few members
// a token has, a map beyond that.
type nameSet struct {
	list [][]byte
	m    map[string]struct{}
}

func (ns *nameSet) add(name []byte) bool {
	if ns.m != nil {
		if _, dup := ns.m[string(name)]; dup {
			return false
		}
		ns.m[string(name)] = struct{}{}
		return true
	}
	for _, n := range ns.list {
		if bytes.Equal(n, name) {
			return false
		}
	}
	ns.list = append(ns.list, name)
	if len(ns.list) > 24 {
		ns.m = make(map[string]struct{}, 2*len(ns.list))
		for _, n := range ns.list {
			ns.m[string(n)] = struct{}{}
		}
		ns.list = nil
	}
	return true
}

type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return errJSON
	}
	return nil
}

// value scans one value at depth d.
func (s *scanner) value(d int) (jsonValue, error) {
	if d > maxJSONDepth || s.pos >= len(s.data) {
		return jsonValue{}, errJSON
	}
	start := s.pos
	var kind jsonKind
	switch c := s.data[s.pos]; {
	case c == '"':
		if _, err := s.str(); err != nil {
			return jsonValue{}, err
		}
		kind = jsonString
	case c == '-' || (c >= '0' && c <= '9'):
		if err := s.num(); err != nil {
			return jsonValue{}, err
		}
		kind = jsonNumber
	case c == 't':
		if !s.lit("true") {
			return jsonValue{}, errJSON
		}
		kind = jsonBool
	case c == 'f':
		if !s.lit("false") {
			return jsonValue{}, errJSON
		}
		kind = jsonBool
	case c == 'n':
		if !s.lit("null") {
			return jsonValue{}, errJSON
		}
		kind = jsonNull
	case c == '[':
		if err := s.array(d); err != nil {
			return jsonValue{}, err
		}
		kind = jsonArray
	case c == '{':
		if err := s.object(d, nil); err != nil {
			return jsonValue{}, err
		}
		kind = jsonObject
	default:
		return jsonValue{}, errJSON
	}
	return jsonValue{kind: kind, raw: s.data[start:s.pos]}, nil
}

func (s *scanner) lit(word string) bool {
	if len(s.data)-s.pos >= len(word) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	return false
}

func (s *scanner) array(d int) error {
	s.pos++ // '['
	s.ws()
	if s.eat(']') {
		return nil
	}
	for {
		s.ws()
		if _, err := s.value(d + 1); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			return nil
		}
		return errJSON
	}
}

// object scans an object at depth d (the opening brace is next), calling
// fn, when not nil, for each member. Names must not repeat, at any depth.
func (s *scanner) object(d int, fn func(name []byte, v jsonValue) error) error {
	s.pos++ // '{'
	var seen nameSet
	s.ws()
	if s.eat('}') {
		return nil
	}
	for n := 0; ; n++ {
		if n >= maxJSONMembers {
			return errJSON
		}
		s.ws()
		start := s.pos
		esc, err := s.str()
		if err != nil {
			return err
		}
		name := s.data[start+1 : s.pos-1]
		if esc {
			if name, err = unescape(nil, name); err != nil {
				return err
			}
		}
		if !seen.add(name) {
			return errJSON // duplicate member name
		}
		s.ws()
		if !s.eat(':') {
			return errJSON
		}
		s.ws()
		v, err := s.value(d + 1)
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(name, v); err != nil {
				return err
			}
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return nil
		}
		return errJSON
	}
}

// str scans a string starting at the opening quote and reports whether it
// contains escapes. Escapes are validated here (including surrogate
// pairing), so unescape cannot fail on a string str accepted.
func (s *scanner) str() (escaped bool, err error) {
	if !s.eat('"') {
		return false, errJSON
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return escaped, nil
		case c < 0x20:
			return false, errJSON
		case c == '\\':
			escaped = true
			n, err := escapeLen(s.data[s.pos:])
			if err != nil {
				return false, err
			}
			s.pos += n
		default:
			s.pos++
		}
	}
	return false, errJSON
}

// escapeLen validates the escape sequence at the start of b and returns its
// length. A \u escape of a high surrogate must be followed by one of a low
// surrogate; a lone low surrogate is rejected.
func escapeLen(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errJSON
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, errJSON
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
				return 0, errJSON
			}
			r2, ok := hex4(b[8:])
			if !ok || r2 < 0xdc00 || r2 > 0xdfff {
				return 0, errJSON
			}
			return 12, nil
		case r >= 0xdc00 && r <= 0xdfff:
			return 0, errJSON
		}
		return 6, nil
	}
	return 0, errJSON
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape appends the decoded content of a string body (without quotes)
// that str accepted.
func unescape(dst, body []byte) ([]byte, error) {
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		n, err := escapeLen(body[i:])
		if err != nil {
			return nil, err
		}
		switch body[i+1] {
		case '"', '\\', '/':
			dst = append(dst, body[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(body[i+2:])
			if n == 12 {
				r2, _ := hex4(body[i+8:])
				r = utf16.DecodeRune(r, r2)
			}
			dst = utf8.AppendRune(dst, r)
		}
		i += n
	}
	return dst, nil
}

// num scans a number with the JSON grammar.
func (s *scanner) num() error {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return errJSON
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			return errJSON
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			return errJSON
		}
	}
	s.pos = i
	return nil
}

// text returns the decoded string of a string value.
func (v jsonValue) text() (string, bool) {
	if v.kind != jsonString {
		return "", false
	}
	body := v.raw[1 : len(v.raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	b, err := unescape(make([]byte, 0, len(body)), body)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// equalText reports whether v is a string whose decoded text equals want,
// without allocating when v has no escapes.
func (v jsonValue) equalText(want string) bool {
	if v.kind != jsonString {
		return false
	}
	body := v.raw[1 : len(v.raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body) == want
	}
	s, ok := v.text()
	return ok && s == want
}

// maxNumericDate is 9999-12-31T23:59:59Z: later "dates" are nonsense.
const maxNumericDate = 253402300799

// numericDate decodes an RFC 7519 NumericDate. Only non-negative JSON
// integers up to year 9999 are accepted: no strings, fractions, exponents,
// or signs.
func (v jsonValue) numericDate() (int64, bool) {
	if v.kind != jsonNumber || len(v.raw) > 12 {
		return 0, false
	}
	var n int64
	for _, c := range v.raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(v.raw) > 1 && v.raw[0] == '0' { // the grammar forbids it; belt and braces
		return 0, false
	}
	return n, n <= maxNumericDate
}

// strings decodes an array whose elements are all strings.
func (v jsonValue) strings() ([]string, bool) {
	if v.kind != jsonArray {
		return nil, false
	}
	var out []string
	s := scanner{data: v.raw, pos: 1}
	s.ws()
	if s.eat(']') {
		return []string{}, true
	}
	for {
		s.ws()
		e, err := s.value(1)
		if err != nil {
			return nil, false
		}
		t, ok := e.text()
		if !ok {
			return nil, false
		}
		out = append(out, t)
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			return out, true
		}
		return nil, false
	}
}

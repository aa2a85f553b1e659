package jsonstrict

import (
	"bytes"
	"strconv"
)

// Kind is the type of a JSON value. The zero Kind, None, is the kind of
// the zero Value: no value at all (an absent member).
type Kind uint8

const (
	None   Kind = iota // the zero Value
	String             // "…"
	Number             // -1.5e3
	Bool               // true or false
	Null               // null
	Object             // {…}
	Array              // […]
)

// String returns the kind's name: "none", "string", "number", "bool",
// "null", "object" or "array".
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "bool"
	case Null:
		return "null"
	case Object:
		return "object"
	case Array:
		return "array"
	}
	return "none"
}

// Value is one value of a validated document: its exact bytes, without
// the white space around them. Only this package makes Values, from bytes
// it has validated, so the methods below never fail on a Value's syntax;
// they report ok false only when the value is not of the kind asked for.
//
// A Value aliases the document it came from (no copy): it stays valid as
// long as those bytes are not modified. The zero Value has Kind None.
// Values are small (one slice) and meant to be passed by value.
type Value struct {
	raw []byte
}

// Kind returns the type of the value, None for the zero Value.
func (v Value) Kind() Kind {
	if len(v.raw) == 0 {
		return None
	}
	switch v.raw[0] {
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	}
	return Number
}

// Raw returns the value's exact JSON text (for a string, with its quotes
// and escapes as received). It aliases the document; nil for the zero
// Value.
func (v Value) Raw() []byte { return v.raw }

// body returns a string value's text between the quotes, still escaped.
func (v Value) body() ([]byte, bool) {
	if len(v.raw) < 2 || v.raw[0] != '"' {
		return nil, false
	}
	return v.raw[1 : len(v.raw)-1], true
}

// Str returns the text of a string value, unescaped; ok is false when the
// value is not a string. The text is a new string (nothing aliases the
// document), valid UTF-8 without lone surrogates.
func (v Value) Str() (s string, ok bool) {
	b, ok := v.body()
	if !ok {
		return "", false
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b), true
	}
	return string(appendUnescaped(make([]byte, 0, len(b)), b)), true
}

// AppendStr appends the unescaped text of a string value to dst and
// returns the extended slice; ok is false (and dst is returned unchanged)
// when the value is not a string. It allocates only when dst must grow,
// so a caller can read a string into a stack buffer.
func (v Value) AppendStr(dst []byte) ([]byte, bool) {
	b, ok := v.body()
	if !ok {
		return dst, false
	}
	return appendUnescaped(dst, b), true
}

// EqualStr reports whether the value is a string whose unescaped text is
// exactly s (byte for byte: case-sensitive, no Unicode normalization). It
// does not allocate.
func (v Value) EqualStr(s string) bool {
	b, ok := v.body()
	if !ok {
		return false
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b) == s
	}
	for i := 0; i < len(b); {
		var r [4]byte
		var n int
		n, i = unescapeNext(r[:], b, i)
		if len(s) < n || string(r[:n]) != s[:n] {
			return false
		}
		s = s[n:]
	}
	return s == ""
}

// Int returns the value of an integer number: a number without fraction
// or exponent that fits in an int64. ok is false for anything else (1.0,
// 1e3, 9223372036854775808, "1", true).
func (v Value) Int() (n int64, ok bool) {
	if v.Kind() != Number || bytes.ContainsAny(v.raw, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.raw), 10, 64)
	return n, err == nil
}

// Bool returns the value of true or false; ok is false for anything else
// (1, "true", null).
func (v Value) Bool() (b, ok bool) {
	switch string(v.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Members calls fn for each member of an object value, in order, with the
// member's exact unescaped name and value, as the package-level [Members]
// does, but without validating again: v was validated when it was made,
// so this walk only finds where each member ends: a third to a half of
// the cost of a validating walk (BenchmarkMembers). name is valid only
// during the call. When fn
// returns false the walk stops. The result is ErrKind when v is not an
// object, else nil.
//
// If the bytes under v were modified since it was made, the walk never
// panics or reads outside them, but what it reports is meaningless.
func (v Value) Members(fn func(name []byte, v Value) bool) error {
	if v.Kind() != Object {
		return errNotObject
	}
	d := v.raw
	var scratch []byte
	i := skipWS(d, 1)
	for i < len(d) && d[i] == '"' {
		end := skipString(d, i)
		if end-1 <= i {
			return nil
		}
		name := d[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			scratch = appendUnescaped(scratch[:0], name)
			name = scratch
		}
		i = skipWS(d, min(skipWS(d, end)+1, len(d))) // past ':'
		vend := skipValue(d, i)
		if !fn(name, Value{d[i:vend]}) {
			return nil
		}
		i = skipWS(d, vend)
		if i >= len(d) || d[i] != ',' {
			return nil
		}
		i = skipWS(d, i+1)
	}
	return nil
}

// Elements calls fn for each element of an array value, in order, as the
// package-level [Elements] does, without validating again (see
// [Value.Members]). When fn returns false the walk stops. The result is
// ErrKind when v is not an array, else nil.
func (v Value) Elements(fn func(v Value) bool) error {
	if v.Kind() != Array {
		return errNotArray
	}
	d := v.raw
	i := skipWS(d, 1)
	for i < len(d) && d[i] != ']' {
		vend := skipValue(d, i)
		if vend == i || !fn(Value{d[i:vend]}) {
			return nil
		}
		i = skipWS(d, vend)
		if i >= len(d) || d[i] != ',' {
			return nil
		}
		i = skipWS(d, i+1)
	}
	return nil
}

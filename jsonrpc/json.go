package jsonrpc

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// The kit's one JSON encoder and strict reader, for a service's own wire
// formats (a broker's messages, a page of its own filled under the byte
// limit): the same escaping and the same exact-name reading as the
// endpoint's.

// AppendString appends s as a JSON string (escaping what JSON and
// JavaScript need escaped) to dst and returns the extended slice.
func AppendString(dst []byte, s string) []byte { return jsonstrict.AppendString(dst, s) }

// Members calls fn for each member of a JSON object, in order, until fn
// returns false; value is the member's JSON text. Member names are read
// exactly; a repeated or case-variant name, invalid UTF-8 or anything but
// an object is an error (an *Error with CodeInvalidParams).
func Members(obj []byte, fn func(name string, value []byte) bool) error {
	if err := jsonstrict.Members(obj, func(n []byte, v jsonstrict.Value) bool {
		return fn(string(n), v.Raw())
	}); err != nil {
		return NewError(CodeInvalidParams, "Invalid params")
	}
	return nil
}

// String returns the string a JSON value holds, and whether it is one.
func String(value []byte) (string, bool) {
	v, err := jsonstrict.Parse(value)
	if err != nil {
		return "", false
	}
	return v.Str()
}

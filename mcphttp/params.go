package mcphttp

import (
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// Reading params. The strict decoder has read every message once (no
// duplicate or case-variant member names, valid UTF-8, bounded depth):
// after it, params are read with the same strict engine's walker, by exact
// member name, without reflection, allocating only the strings it returns. One reader
// for everything: a member the walker does not find is absent, whatever
// another decoder would make of a case variant.

// StringParam returns the member name of a params object when it is a
// string: present false when params are empty or null, or the member is
// absent or null; err (Invalid params) when params are not an object or
// the member is not a string.
func StringParam(params []byte, name string) (value string, present bool, err error) {
	v, ok, err := member(params, name)
	if err != nil || !ok || v.Kind() == jsonstrict.Null {
		return "", false, err
	}
	s, isStr := v.Str()
	if !isStr {
		return "", false, errParamsFit()
	}
	return s, true, nil
}

// ObjectParam returns the JSON text of the member name of a params object
// when it is an object, and whether it is.
func ObjectParam(params []byte, name string) ([]byte, bool) {
	v, ok, err := member(params, name)
	if err != nil || !ok || v.Kind() != jsonstrict.Object {
		return nil, false
	}
	return v.Raw(), true
}

// Members calls fn for each member of a JSON object (params, or an object
// ObjectParam returned), in order, until fn returns false; value is the
// member's JSON text. It returns Invalid params when obj is not an object.
func Members(obj []byte, fn func(name string, value []byte) bool) error {
	if err := jsonstrict.Members(obj, func(n []byte, v jsonstrict.Value) bool {
		return fn(string(n), v.Raw())
	}); err != nil {
		return errParamsFit()
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

// member finds the member name of params: ok false when params are empty
// or null, or have no such member.
func member(params []byte, name string) (v jsonstrict.Value, ok bool, err error) {
	if len(params) == 0 {
		return v, false, nil
	}
	walkErr := jsonstrict.Members(params, func(n []byte, mv jsonstrict.Value) bool {
		if string(n) == name {
			v, ok = mv, true
			return false
		}
		return true
	})
	if walkErr != nil {
		if isNull(params) {
			return v, false, nil // null params decode into nothing
		}
		return v, false, errParamsFit()
	}
	return v, ok, nil
}

// isNull reports whether a JSON text is null (with surrounding spaces).
func isNull(b []byte) bool {
	v, err := jsonstrict.Parse(b)
	return err == nil && v.Kind() == jsonstrict.Null
}

// errParamsFit is the answer to params that do not fit a method.
func errParamsFit() error { return InvalidParams("params do not fit the method") }

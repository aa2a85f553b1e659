package mcpwire

import (
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
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
	v, ok, err := Member(params, name)
	if err != nil || !ok || v.Kind() == jsonstrict.Null {
		return "", false, err
	}
	s, isStr := v.Str()
	if !isStr {
		return "", false, ErrParamsFit()
	}
	return s, true, nil
}

// ObjectParam returns the JSON text of the member name of a params object
// when it is an object, and whether it is.
func ObjectParam(params []byte, name string) ([]byte, bool) {
	v, ok, err := Member(params, name)
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
		return ErrParamsFit()
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

// Member finds the member name of params: ok false when params are empty
// or null, or have no such member.
func Member(params []byte, name string) (v jsonstrict.Value, ok bool, err error) {
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
		return v, false, ErrParamsFit()
	}
	return v, ok, nil
}

// StringValue is StringParam of a member already found: v of Kind None
// when it is absent; err the error of the params' walk.
func StringValue(v jsonstrict.Value, err error) (value string, present bool, _ error) {
	if err != nil || v.Kind() == jsonstrict.None || v.Kind() == jsonstrict.Null {
		return "", false, err
	}
	s, isStr := v.Str()
	if !isStr {
		return "", false, ErrParamsFit()
	}
	return s, true, nil
}

// IsNull reports whether a JSON text is null (with surrounding spaces).
func IsNull(b []byte) bool { return isNull(b) }

// isNull reports whether a JSON text is null (with surrounding spaces).
func isNull(b []byte) bool {
	v, err := jsonstrict.Parse(b)
	return err == nil && v.Kind() == jsonstrict.Null
}

// ErrParamsFit is the answer to params that do not fit a method.
func ErrParamsFit() error { return InvalidParams("params do not fit the method") }

// CursorParam returns the cursor of a paginated request's params: "" for
// the first page. The endpoint never issues an empty cursor, so an empty
// one that is present is invalid (an *inventory.CursorError), not "start
// over".
func CursorParam(params []byte) (string, error) { return Cursor(StringParam(params, "cursor")) }

// Cursor is CursorParam of what StringParam returned for "cursor".
func Cursor(cursor string, present bool, err error) (string, error) {
	switch {
	case err != nil:
		return "", err
	case present && cursor == "":
		return "", &inventory.CursorError{Reason: inventory.ReasonInvalid}
	}
	return cursor, nil
}

// URIParam returns the required params.uri of a request.
func URIParam(params []byte) (string, error) { return URI(StringParam(params, "uri")) }

// URI is URIParam of what StringParam returned for "uri".
func URI(uri string, _ bool, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if uri == "" {
		return "", InvalidParams("params.uri is required")
	}
	return uri, nil
}

// ParamsError is a -32602 error with a fixed message of the kit's own
// (never client input): mcphttp answers it with the message
// "Invalid params: " + Message.
type ParamsError struct{ Message string }

func (e *ParamsError) Error() string { return "mcphttp: Invalid params: " + e.Message }

// InvalidParams returns a *ParamsError.
func InvalidParams(message string) error { return &ParamsError{Message: message} }

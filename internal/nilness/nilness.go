// Package nilness tells an interface holding a typed nil (a nil
// *authn.Authenticator given as an mcphttp.Authenticator, say) from a
// usable value: what the constructors of mcphttp and its parts refuse,
// with an error naming the option, instead of panicking on the first
// request.
package nilness

import (
	"fmt"
	"reflect"
)

// Is reports whether v is nil, or an interface value holding a nil
// pointer, map, slice, function or channel.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// Refuse returns an error "prefix: what is a nil T" when v is a non-nil
// interface holding a typed nil (see Is), and nil otherwise: a nil v is
// left to the caller, which usually takes it for the default.
func Refuse(prefix, what string, v any) error {
	if v != nil && Is(v) {
		return fmt.Errorf("%s: %s is a nil %T", prefix, what, v)
	}
	return nil
}

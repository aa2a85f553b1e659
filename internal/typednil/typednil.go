// Package typednil tells a nil interface from one holding a nil pointer,
// function, map, slice, channel or interface: the "typed nil" that passes
// a v != nil check and panics at its first method call.
package typednil

import "reflect"

// Is reports whether v is nil or holds a nil pointer, function, map,
// slice, channel or interface value.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

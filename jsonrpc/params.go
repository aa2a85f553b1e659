package jsonrpc

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"unicode"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// UnmarshalParams decodes params into v, strictly and case-sensitively,
// then with encoding/json. Absent params (nil or empty) leave v unchanged.
//
// Before anything is decoded, params must be one JSON value that the kit's
// strict engine accepts (valid UTF-8, no lone surrogates, no duplicate or
// case-variant member names at any depth, nesting at most 64), and no
// member anywhere may differ only in case from the name of the struct
// field it would fill: encoding/json matches names case-insensitively, so
// {"URI":"…"} would fill a field tagged "uri", and {"Cursor":"…"} one
// tagged "cursor", where a peer reading names exactly sees no uri or
// cursor at all. Such params are rejected, at any nesting depth (through
// pointers, slices, arrays, maps, embedded structs, and interfaces that
// hold a pointer). Otherwise encoding/json's semantics hold: exact names
// fill fields, unknown members are ignored, null leaves a field alone.
// Types with their own UnmarshalJSON (json.RawMessage, for one) decode
// their own bytes; only their names are beyond this check.
//
// If the params do not fit v, the error is an *[Error] with
// [CodeInvalidParams] and the fixed message "Invalid params" (nothing of
// the input is echoed), and v may be partly filled, as with
// json.Unmarshal (never by a case variant, which is found before
// decoding). A v that cannot be decoded into at all (nil, not a pointer)
// is the server's bug: [CodeInternalError]. Safe for concurrent use.
func UnmarshalParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{Code: CodeInternalError, Message: "Internal error", reason: "bad UnmarshalParams target"}
	}
	pv, err := jsonstrict.Parse(params)
	if err != nil {
		return errParams("params are not strict JSON")
	}
	if !exactNames(pv, rv.Type(), rv) {
		return errParams("a member name differs in case from a field's")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var iu *json.InvalidUnmarshalError
		if errors.As(err, &iu) {
			return &Error{Code: CodeInternalError, Message: "Internal error", reason: "bad UnmarshalParams target"}
		}
		return errParams("params do not fit")
	}
	return nil
}

func errParams(reason string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid params", reason: reason}
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// exactNames reports whether no member in v would fill a field of t (the
// type encoding/json decodes v into) under a name that differs from the
// field's. rv is the value being decoded into when known (encoding/json
// decodes into existing pointers, slice elements and pointers held by
// interfaces), else invalid: then only t is followed.
func exactNames(v jsonstrict.Value, t reflect.Type, rv reflect.Value) bool {
	if k := v.Kind(); k != jsonstrict.Object && k != jsonstrict.Array {
		return true // no names inside; null fills nothing
	}
	var ti *typeInfo
	for {
		if t.Kind() == reflect.Pointer { // *T's methods are T's and *T's: checked at T
			t = t.Elem()
			if rv.IsValid() && !rv.IsNil() {
				rv = rv.Elem()
			} else {
				rv = reflect.Value{}
			}
			continue
		}
		if ti = infoOf(t); ti.self {
			return true // decodes its own bytes (a TextUnmarshaler given an object fails)
		}
		switch t.Kind() {
		case reflect.Interface:
			// encoding/json decodes into a non-nil pointer held by a
			// non-nil interface; anything else becomes map[string]any,
			// []any or a scalar, which have no fields.
			if rv.IsValid() && !rv.IsNil() && rv.Elem().Kind() == reflect.Pointer && !rv.Elem().IsNil() {
				rv = rv.Elem()
				t = rv.Type()
				continue
			}
			return true
		}
		break
	}
	ok := true
	switch t.Kind() {
	case reflect.Struct:
		if v.Kind() != jsonstrict.Object {
			return true // encoding/json reports the mismatch
		}
		fs := ti.fields
		var buf [64]byte
		_ = v.Members(func(name []byte, mv jsonstrict.Value) bool {
			if paths, found := fs.exact[string(name)]; found {
				for _, p := range paths {
					ft, fv := fieldAt(t, rv, p)
					if ok = exactNames(mv, ft, fv); !ok {
						return false
					}
				}
				return true
			}
			if fs.folded[string(jsonstrict.AppendFold(buf[:0], name))] {
				ok = false // a case variant of a field's name
			}
			return ok
		})
	case reflect.Map:
		if v.Kind() != jsonstrict.Object {
			return true
		}
		et := t.Elem()
		_ = v.Members(func(_ []byte, mv jsonstrict.Value) bool {
			ok = exactNames(mv, et, reflect.Value{}) // each value is decoded into a new element
			return ok
		})
	case reflect.Slice, reflect.Array:
		if v.Kind() != jsonstrict.Array {
			return true
		}
		et := t.Elem()
		i := 0
		_ = v.Elements(func(ev jsonstrict.Value) bool {
			var elem reflect.Value
			if rv.IsValid() && i < rv.Len() {
				elem = rv.Index(i) // encoding/json decodes into existing elements
			}
			i++
			ok = exactNames(ev, et, elem)
			return ok
		})
	}
	return ok
}

// fieldAt returns the type of the field at path (an index path through
// embedded structs) in t, and its value in rv when rv is valid and no
// embedded pointer on the way is nil.
func fieldAt(t reflect.Type, rv reflect.Value, path []int) (reflect.Type, reflect.Value) {
	var f reflect.StructField
	for n, i := range path {
		if n > 0 {
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
				if rv.IsValid() && !rv.IsNil() {
					rv = rv.Elem()
				} else {
					rv = reflect.Value{}
				}
			}
		}
		f = t.Field(i)
		if rv.IsValid() {
			rv = rv.Field(i)
		}
		t = f.Type
	}
	return f.Type, rv
}

// typeInfo is what the check needs to know of a type, computed once.
type typeInfo struct {
	self   bool          // it (or its pointer) implements json.Unmarshaler or encoding.TextUnmarshaler
	fields *structFields // for a struct
}

// structFields are the names encoding/json could match to fields of one
// struct type: exactly (each with the index paths of the fields of that
// name, all of them, conflicts included), and folded.
type structFields struct {
	exact  map[string][][]int
	folded map[string]bool
}

var typeCache sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeCache.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{self: t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)}
	if t.Kind() == reflect.Struct {
		ti.fields = &structFields{exact: map[string][][]int{}, folded: map[string]bool{}}
		collectFields(ti.fields, t, nil, map[reflect.Type]bool{})
	}
	actual, _ := typeCache.LoadOrStore(t, ti)
	return actual.(*typeInfo)
}

// collectFields adds the fields of struct type t, at index path prefix,
// the way encoding/json finds them: exported fields by their tag name or
// Go name, fields of embedded structs (or pointers to them) without a tag
// name promoted, "-" skipped. It keeps every candidate, even those
// encoding/json would drop as ambiguous: a name too many only makes the
// check stricter.
func collectFields(fs *structFields, t reflect.Type, prefix []int, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		path := append(append([]int(nil), prefix...), i)
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if sf.Anonymous {
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name := tag
		if i := indexComma(tag); i >= 0 {
			name = tag[:i]
		}
		if !validTagName(name) {
			name = ""
		}
		if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			collectFields(fs, ft, path, seen)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fs.exact[name] = append(fs.exact[name], path)
		fs.folded[string(jsonstrict.AppendFold(nil, []byte(name)))] = true
	}
}

func indexComma(s string) int {
	for i := range len(s) {
		if s[i] == ',' {
			return i
		}
	}
	return -1
}

// validTagName reports whether encoding/json uses name from a tag: letters,
// digits and the punctuation it allows; otherwise it uses the Go name.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case c < 0x80 && isTagPunct[c]:
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

var isTagPunct = func() (t [0x80]bool) {
	for _, c := range "!#$%&()*+-./:;<=>?@[]^_{|}~ " {
		t[c] = true
	}
	return t
}()

package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fuzzSeeds(f *testing.F) {
	for _, tc := range strictCases {
		if len(tc.in) <= 4096 {
			f.Add([]byte(tc.in))
		}
	}
}

// FuzzParse compares the engine with encoding/json. On every document the
// engine accepts, encoding/json accepts it too and reads the same values
// (strings, numbers, structure, member order); every rejection is
// explained: not JSON to encoding/json, invalid UTF-8, a surrogate escape,
// too deep, or a duplicate name under encoding/json's own folding.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		valid := json.Valid(data)
		if err != nil {
			assert.Equal(t, Value{}, v)
			switch {
			case errors.Is(err, ErrSyntax):
				assert.False(t, valid && utf8.Valid(data) && !hasSurrogateEscape(data), "valid JSON called a syntax error")
			case errors.Is(err, ErrDepth):
				if valid {
					assert.Greater(t, naiveDepth(data), DefaultMaxDepth)
				}
			case errors.Is(err, ErrDuplicate):
				require.True(t, valid, "a duplicate is reported only in JSON")
				assert.True(t, naiveDuplicate(data), "a duplicate that is not one")
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		require.True(t, valid, "accepted invalid JSON")
		require.True(t, utf8.Valid(data))
		assert.LessOrEqual(t, naiveDepth(data), DefaultMaxDepth)
		assert.False(t, naiveDuplicate(data), "a duplicate was missed")
		assert.Equal(t, string(bytes.Trim(data, " \t\r\n")), string(v.Raw()))

		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		require.NoError(t, dec.Decode(&want))
		got := toAny(t, v)
		assert.True(t, reflect.DeepEqual(want, got), "encoding/json read %#v, the engine %#v", want, got)
		if v.Kind() == Object {
			assert.Equal(t, topNames(t, data), memberOrder(t, v), "member order")
		}
	})
}

// toAny decodes v the way encoding/json decodes into an any with
// UseNumber, using only the engine's API.
func toAny(t *testing.T, v Value) any {
	switch v.Kind() {
	case String:
		s, ok := v.Str()
		require.True(t, ok)
		return s
	case Number:
		return json.Number(v.Raw())
	case Bool:
		b, ok := v.Bool()
		require.True(t, ok)
		return b
	case Null:
		return nil
	case Object:
		m := map[string]any{}
		require.NoError(t, Members(v.Raw(), func(name []byte, e Value) bool {
			m[string(name)] = toAny(t, e)
			return true
		}))
		return m
	case Array:
		a := []any{}
		require.NoError(t, Elements(v.Raw(), func(e Value) bool {
			a = append(a, toAny(t, e))
			return true
		}))
		return a
	}
	t.Fatalf("kind %v", v.Kind())
	return nil
}

func memberOrder(t *testing.T, v Value) []string {
	var names []string
	require.NoError(t, Members(v.Raw(), func(name []byte, _ Value) bool {
		names = append(names, string(name))
		return true
	}))
	return names
}

// topNames returns the member names of the top-level object in order,
// read with encoding/json's tokenizer.
func topNames(t *testing.T, data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var names []string
	depth, wantKey := 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
			wantKey = depth == 1 // the top object opened, or a member's value closed
			continue
		}
		if depth == 1 {
			if wantKey {
				name, ok := tok.(string)
				require.True(t, ok)
				names = append(names, name)
			}
			wantKey = !wantKey
		}
	}
}

// naiveDepth returns the deepest nesting of the valid JSON data, by
// encoding/json's tokenizer.
func naiveDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
				deepest = max(deepest, depth)
			} else {
				depth--
			}
		}
	}
}

// naiveDuplicate reports whether any object in the valid JSON data repeats
// a member name, folded as encoding/json folds names (its own rule, not
// this package's), with encoding/json's tokenizer and a map per object:
// the simple way the hashes and sorting of names.go must agree with.
func naiveDuplicate(data []byte) bool {
	type frame struct {
		object, wantKey bool
		names           map[string]bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	dup := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				stack = append(stack, &frame{object: tok == '{', wantKey: true, names: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].wantKey = true
				}
			}
			continue
		case string:
			if top != nil && top.object && top.wantKey {
				if foldsLikeEncodingJSON(top.names, tok) {
					dup = true
				}
				top.wantKey = false
				continue
			}
		}
		if top != nil && top.object {
			top.wantKey = true
		}
	}
	return dup
}

// foldsLikeEncodingJSON records name in seen and reports whether a name
// encoding/json would match to the same struct field was seen before.
// encoding/json documents its rule as bytes.EqualFold, which is used here,
// independently of this package's hashes and AppendFold.
func foldsLikeEncodingJSON(seen map[string]bool, name string) bool {
	dup := false
	for prev := range seen {
		if strings.EqualFold(prev, name) {
			dup = true
			break
		}
	}
	seen[name] = true
	return dup
}

// FuzzDuplicates takes any object the engine accepts, adds a member whose
// name is a variant of an existing one (the same, escaped, case-swapped),
// and checks that the engine rejects the result as a duplicate, while
// encoding/json accepts it (and would let one member win).
func FuzzDuplicates(f *testing.F) {
	for i, tc := range strictCases {
		if len(tc.in) <= 4096 {
			f.Add([]byte(tc.in), uint8(i))
		}
	}
	f.Add([]byte(`{"uri":"a"}`), uint8(1))
	f.Add([]byte(`{"a":{"kind":1}}`), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, how uint8) {
		v, err := Parse(data)
		if err != nil || v.Kind() != Object {
			return
		}
		// The first member of the first object found.
		raw := v.Raw()
		var name []byte
		var inner Value
		require.NoError(t, Members(raw, func(n []byte, mv Value) bool {
			name = append([]byte(nil), n...)
			inner = mv
			return false
		}))
		if name == nil {
			return // {}
		}
		variant := nameVariant(name, how)
		obj := raw
		if how&4 != 0 && inner.Kind() == Object && len(inner.Raw()) > 2 { // go one level down
			obj = inner.Raw()
			name = nil
			require.NoError(t, Members(obj, func(n []byte, _ Value) bool { name = append([]byte(nil), n...); return false }))
			variant = nameVariant(name, how)
		}
		at := bytes.Index(data, obj) + 1 // just after the '{'
		doc := append(append(append([]byte(nil), data[:at]...), `"`+variant+`":0,`...), data[at:]...)
		_, err = Parse(doc)
		require.ErrorIs(t, err, ErrDuplicate, "%s", doc)
		assert.True(t, json.Valid(doc))
	})
}

// nameVariant returns, as a JSON string body, a name equal to name under
// the folding rule: case-swapped ASCII letters, one character escaped, or
// both, as how says.
func nameVariant(name []byte, how uint8) string {
	var b []byte
	escaped := false
	for _, r := range string(name) {
		if how&1 != 0 {
			switch {
			case 'a' <= r && r <= 'z':
				r -= 'a' - 'A'
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			}
		}
		if (how&2 != 0 && !escaped) || r < 0x20 || r == '"' || r == '\\' {
			escaped = escaped || how&2 != 0
			b = appendUEscape(b, r)
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

func appendUEscape(b []byte, r rune) []byte {
	if r >= 0x10000 {
		r -= 0x10000
		b = appendUEscape(b, 0xD800+(r>>10))
		return appendUEscape(b, 0xDC00+(r&0x3FF))
	}
	return append(b, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// FuzzAppendString checks that any Go string encodes to exactly what the
// byte-by-byte encoder wrote, which is a JSON string the engine accepts
// and that decodes, here and in encoding/json, to the same text (invalid
// UTF-8 becoming U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, in := range encodeInputs {
		f.Add(in.s)
	}
	for _, s := range []string{"", "a", "\x00", "\"\\", "\xff", "\u2028", "日本", "\xe2\x80", "\xed\xa0\x80", "12345678\n", "é\x00😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x"), s)[1:]
		require.Equal(t, string(appendStringByteByByte(nil, s)), string(got))
		v, err := Parse(got)
		require.NoError(t, err, "%s", got)
		text, ok := v.Str()
		require.True(t, ok)
		want := string([]rune(s))
		assert.Equal(t, want, text)
		var back string
		require.NoError(t, json.Unmarshal(got, &back))
		assert.Equal(t, want, back)
	})
}

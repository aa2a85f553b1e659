package jsonstrict

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strictCase is one row of the strictness table: a document and the class
// of error Parse must return (nil: accepted).
type strictCase struct {
	name string
	in   string
	want error
}

var strictCases = []strictCase{
	// Accepted.
	{"empty object", `{}`, nil},
	{"white space around", " \t\r\n{ } \n", nil},
	{"all kinds", `{"a":-0.5e+10,"b":"x","c":true,"d":false,"e":null,"f":[],"g":{},"h":[1,"2",[3],{"i":4}]}`, nil},
	{"scalars at the top", `"x"`, nil},
	{"number at the top", `-0`, nil},
	{"array at the top", `[1,{"a":[]}]`, nil},
	{"escapes", `{"a":"\"\\\/\b\f\n\r\t\u0000\uFFFF"}`, nil},
	{"surrogate pair", `{"\u00e9":"\ud83d\ude00"}`, nil},
	{"literal U+FFFD is valid UTF-8", `{"r":"` + "\uFFFD" + `"}`, nil},
	{"same name in sibling objects", `{"a":{"a":1},"b":{"a":1}}`, nil},
	{"names that only look alike", `{"uri":1,"uri ":2,"ur":3,"urj":4,"ürí":5,"İ":6,"i":7}`, nil},
	{"large object without duplicates", bigObject(200, ""), nil},
	{"nesting at the default limit", nest(DefaultMaxDepth), nil},

	// Not JSON.
	{"empty", ``, ErrSyntax},
	{"only white space", " \n", ErrSyntax},
	{"unterminated object", `{"a":1`, ErrSyntax},
	{"unterminated string", `{"a":"x`, ErrSyntax},
	{"missing value", `{"a":}`, ErrSyntax},
	{"missing colon", `{"a"}`, ErrSyntax},
	{"trailing comma", `{"a":1,}`, ErrSyntax},
	{"trailing comma in array", `[1,]`, ErrSyntax},
	{"leading comma", `[,1]`, ErrSyntax},
	{"empty member", `{,}`, ErrSyntax},
	{"two values", `{"a":1}{}`, ErrSyntax},
	{"trailing garbage", `{"a":1} x`, ErrSyntax},
	{"trailing NUL", `{"a":1}` + "\x00", ErrSyntax},
	{"single quotes", `{'a':1}`, ErrSyntax},
	{"bare name", `{a:1}`, ErrSyntax},
	{"comment", `{"a":1/*x*/}`, ErrSyntax},
	{"byte order mark", "\ufeff{}", ErrSyntax},
	{"leading zero", `{"a":01}`, ErrSyntax},
	{"bare fraction", `{"a":1.}`, ErrSyntax},
	{"fraction without integer", `{"a":.5}`, ErrSyntax},
	{"bare exponent", `{"a":1e}`, ErrSyntax},
	{"minus alone", `{"a":-}`, ErrSyntax},
	{"plus sign", `{"a":+1}`, ErrSyntax},
	{"NaN", `{"a":NaN}`, ErrSyntax},
	{"Infinity", `{"a":Infinity}`, ErrSyntax},
	{"bad literal", `{"a":tru}`, ErrSyntax},
	{"truncated null", `{"a":nul}`, ErrSyntax},
	{"raw control character", "{\"a\":\"\x01\"}", ErrSyntax},
	{"raw newline in a name", "{\"a\nb\":1}", ErrSyntax},
	{"bad escape", `{"a":"\x"}`, ErrSyntax},
	{"short unicode escape", `{"a":"\u12"}`, ErrSyntax},
	{"escape at the end", `{"a":"\`, ErrSyntax},
	// A28: invalid UTF-8 and lone surrogates are rejected, never repaired.
	{"A28 invalid byte", "{\"a\":\"\xff\"}", ErrSyntax},
	{"A28 invalid byte in a name", "{\"\xc3\":1}", ErrSyntax},
	{"A28 overlong encoding", "{\"a\":\"\xc0\xaf\"}", ErrSyntax},
	{"A28 surrogate encoded in UTF-8", "{\"a\":\"\xed\xa0\x80\"}", ErrSyntax},
	{"A28 truncated sequence", "{\"a\":\"\xe2\x82\"}", ErrSyntax},
	{"A28 UTF-8 outside strings", "{\"a\":1}\xc3\xa9", ErrSyntax},
	{"A28 lone high surrogate", `{"a":"\ud800"}`, ErrSyntax},
	{"A28 lone low surrogate", `{"a":"\udc00x"}`, ErrSyntax},
	{"A28 high surrogate then letter", `{"a":"\ud800\u0041"}`, ErrSyntax},
	{"A28 reversed pair", `{"a":"\ude00\ud83d"}`, ErrSyntax},
	{"A28 lone surrogate in a name", `{"\udfff":1}`, ErrSyntax},
	{"syntax error after a duplicate is a syntax error", `{"a":1,"a":2,`, ErrSyntax},
	{"syntax error after a deep duplicate", `{"x":{"k":1,"K":2},"y":[}`, ErrSyntax},

	// A27: nesting.
	{"A27 nesting past the default limit", nest(DefaultMaxDepth + 1), ErrDepth},
	{"A27 10k-deep objects", nest(10000), ErrDepth},
	{"A27 10k-deep arrays", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), ErrDepth},
	{"A27 10k-deep unterminated (found before the end)", `{"a":` + strings.Repeat("[", 10000), ErrDepth},

	// A27: duplicate names, at any depth, after unescaping and folding.
	{"A27 exact duplicate", `{"a":1,"a":2}`, ErrDuplicate},
	{"A27 escaped duplicate", `{"a":1,"\u0061":2}`, ErrDuplicate},
	{"A27 case duplicate", `{"uri":"a","URI":"b"}`, ErrDuplicate},
	{"A27 escaped case duplicate", `{"uri":"a","\u0055RI":"b"}`, ErrDuplicate},
	{"A27 Kelvin sign folds like encoding/json", `{"kind":"a","\u212aind":"b"}`, ErrDuplicate},
	{"A27 long s folds like encoding/json", `{"scope":"a","ſcope":"b"}`, ErrDuplicate},
	{"A27 JOSE header alg twice", `{"alg":"RS256","ALG":"none"}`, ErrDuplicate},
	{"A27 claims sub twice", `{"sub":"alice","Sub":"admin"}`, ErrDuplicate},
	{"A27 duplicate deep inside", `{"_meta":{"a":[{"x":1,"y":{"k":1,"K":2}}]}}`, ErrDuplicate},
	{"A27 duplicate inside an array at the top", `[{"a":1,"a":1}]`, ErrDuplicate},
	{"A27 duplicate in a large object", bigObject(200, "k17"), ErrDuplicate},
	{"A27 case duplicate in a large object", bigObject(200, "K150"), ErrDuplicate},
	{"A27 duplicate empty names", `{"":1,"":2}`, ErrDuplicate},
}

// nest returns containers nested n deep: {"a":{"a":…{}…}}.
func nest(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

// bigObject returns an object with n members k0…k(n-1) and, if extra is
// set, one more member named extra at the end.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	if extra != "" {
		b.WriteString(`,"` + extra + `":0`)
	}
	b.WriteByte('}')
	return b.String()
}

var classes = []error{ErrSyntax, ErrDepth, ErrMembers, ErrDuplicate, ErrKind}

// checkClass asserts that err is exactly want (nil, or one class).
func checkClass(t *testing.T, want, err error, msgAndArgs ...any) {
	t.Helper()
	if want == nil {
		assert.NoError(t, err, msgAndArgs...)
		return
	}
	require.Error(t, err, msgAndArgs...)
	for _, c := range classes {
		assert.Equal(t, c == want, errors.Is(err, c), msgAndArgs...)
	}
	assert.True(t, err.Error() == want.Error() || strings.HasPrefix(err.Error(), want.Error()+": "), "fixed text: %q", err.Error())
}

func TestStrictness(t *testing.T) {
	for _, tc := range strictCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			checkClass(t, tc.want, err)
			if tc.want == nil {
				assert.Equal(t, strings.Trim(tc.in, " \t\r\n"), string(v.Raw()), "the value without white space")
				assert.True(t, json.Valid([]byte(tc.in)), "stricter than encoding/json, never looser")
			} else {
				assert.Equal(t, Value{}, v)
			}
			if tc.want == ErrSyntax {
				assert.False(t, json.Valid([]byte(tc.in)) && utf8.ValidString(tc.in) && !hasSurrogateEscape([]byte(tc.in)),
					"ErrSyntax for a document that encoding/json finds valid, in UTF-8, without surrogate escapes")
			}
			// Members and Elements give the same verdict on their kind.
			switch trimmed := strings.TrimLeft(tc.in, " \t\r\n"); {
			case strings.HasPrefix(trimmed, "{"):
				checkClass(t, tc.want, Members([]byte(tc.in), func([]byte, Value) bool { return true }))
				checkClass(t, orKind(tc.want), Elements([]byte(tc.in), func(Value) bool { return true }))
			case strings.HasPrefix(trimmed, "["):
				checkClass(t, tc.want, Elements([]byte(tc.in), func(Value) bool { return true }))
				checkClass(t, orKind(tc.want), Members([]byte(tc.in), func([]byte, Value) bool { return true }))
			}
		})
	}
}

// hasSurrogateEscape reports whether data may hold a \uD800–\uDFFF escape.
func hasSurrogateEscape(data []byte) bool {
	for i := 0; i+3 < len(data); i++ {
		if data[i] == '\\' && data[i+1] == 'u' && (data[i+2]|0x20) == 'd' {
			if c := data[i+3] | 0x20; c == '8' || c == '9' || ('a' <= c && c <= 'f') {
				return true
			}
		}
	}
	return false
}

// orKind is the error of asking for the other kind of container: the
// document's own failure, or ErrKind.
func orKind(err error) error {
	if err == nil || err == ErrDuplicate {
		return ErrKind
	}
	return err
}

func TestOptions(t *testing.T) {
	t.Run("MaxDepth", func(t *testing.T) {
		o := Options{MaxDepth: 3}
		_, err := o.Parse([]byte(`{"a":[{}]}`))
		assert.NoError(t, err, "depth 3")
		_, err = o.Parse([]byte(`{"a":[{"b":[]}]}`))
		checkClass(t, ErrDepth, err, "depth 4")
		_, err = o.Parse([]byte(`[[[[`))
		checkClass(t, ErrDepth, err, "found before the syntax error at the end")
		_, err = o.Parse([]byte(`1`))
		assert.NoError(t, err, "a scalar has depth 0")
		for _, d := range []int{0, -1} {
			_, err = Options{MaxDepth: d}.Parse([]byte(nest(DefaultMaxDepth)))
			assert.NoError(t, err, "MaxDepth %d means the default", d)
			_, err = Options{MaxDepth: d}.Parse([]byte(nest(DefaultMaxDepth + 1)))
			checkClass(t, ErrDepth, err, "MaxDepth %d means the default", d)
		}
	})
	t.Run("MaxMembers", func(t *testing.T) {
		o := Options{MaxMembers: 3}
		_, err := o.Parse([]byte(`{"a":1,"b":2,"c":{"x":1,"y":2,"z":3}}`))
		assert.NoError(t, err, "three at each level")
		_, err = o.Parse([]byte(`{"a":1,"b":2,"c":3,"d":4}`))
		checkClass(t, ErrMembers, err)
		_, err = o.Parse([]byte(`[{"a":1,"b":2,"c":3,"d":4}]`))
		checkClass(t, ErrMembers, err, "at any depth")
		_, err = o.Parse([]byte(`{"a":1,"a":2,"b":3,"c":4,`))
		checkClass(t, ErrMembers, err, "stops the scan, before the syntax error")
		calls := 0
		err = o.Members([]byte(bigObject(1000, "")), func([]byte, Value) bool { calls++; return true })
		checkClass(t, ErrMembers, err)
		assert.Equal(t, 3, calls, "found at the first member too many")
		_, err = Options{}.Parse([]byte(bigObject(5000, "")))
		assert.NoError(t, err, "no cap by default")
	})
}

func TestMembers(t *testing.T) {
	type member struct{ name, raw string }
	collect := func(t *testing.T, in string) ([]member, error) {
		var got []member
		err := Members([]byte(in), func(name []byte, v Value) bool {
			got = append(got, member{string(name), string(v.Raw())})
			return true
		})
		return got, err
	}
	got, err := collect(t, ` {"a\u0062c" : 1 ,"x":"\u00e9","URI":[1, {"a":2}],"uri ":{},"n":null} `)
	require.NoError(t, err)
	assert.Equal(t, []member{{"abc", "1"}, {"x", `"\u00e9"`}, {"URI", `[1, {"a":2}]`}, {"uri ", "{}"}, {"n", "null"}}, got,
		"exact unescaped names, in order, raw values without white space")

	got, err = collect(t, `{"a":1,"b":{"c":1,"C":2},"d":3}`)
	checkClass(t, ErrDuplicate, err)
	assert.Len(t, got, 3, "called for every member, the duplicate reported at the end")

	got, err = collect(t, `{"a":1,"b":2,"b":3}`)
	checkClass(t, ErrDuplicate, err)
	assert.Len(t, got, 3)

	got, err = collect(t, `{"a":1,"b":[`)
	checkClass(t, ErrSyntax, err)
	assert.Equal(t, []member{{"a", "1"}}, got, "called as the scan goes: discard on error")

	got, err = collect(t, `[{"a":1}]`)
	checkClass(t, ErrKind, err)
	assert.Empty(t, got)
	_, err = collect(t, `"{}"`)
	checkClass(t, ErrKind, err)
	_, err = collect(t, `[{"a":1},`)
	checkClass(t, ErrSyntax, err, "not JSON wins over the wrong kind")

	t.Run("stop", func(t *testing.T) {
		var names []string
		err := Members([]byte(`{"a":1,"b":2,"c":[`), func(name []byte, _ Value) bool {
			names = append(names, string(name))
			return string(name) != "b"
		})
		assert.NoError(t, err, "stopping returns nil and reads no further")
		assert.Equal(t, []string{"a", "b"}, names)
	})
	t.Run("names are scratch", func(t *testing.T) {
		var first []byte
		require.NoError(t, Members([]byte(`{"\u0061":1,"\u0062":2}`), func(name []byte, _ Value) bool {
			if first == nil {
				first = name
			}
			return true
		}))
		assert.Equal(t, "b", string(first), "an escaped name is unescaped into a buffer reused by the next one")
	})
	t.Run("no allocation", func(t *testing.T) {
		obj := []byte(`{"uri":"documents://users/1234/notes/2024-05-01.md","_meta":{"progressToken":7},"cursor":"AQx4"}`)
		var uri Value
		allocs := testing.AllocsPerRun(100, func() {
			_ = Members(obj, func(name []byte, v Value) bool {
				if string(name) == "uri" {
					uri = v
				}
				return true
			})
		})
		assert.Zero(t, allocs)
		assert.True(t, uri.EqualStr("documents://users/1234/notes/2024-05-01.md"))
	})
}

func TestElements(t *testing.T) {
	var got []string
	err := Elements([]byte(` [1, "a" ,{"b":[]},[],null] `), func(v Value) bool {
		got = append(got, string(v.Raw()))
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"1", `"a"`, `{"b":[]}`, "[]", "null"}, got)

	n := 0
	err = Elements([]byte(`[{"a":1,"A":1},2]`), func(Value) bool { n++; return true })
	checkClass(t, ErrDuplicate, err)
	assert.Equal(t, 2, n)

	n = 0
	err = Elements([]byte(`[1,2,3,`), func(Value) bool { n++; return n < 2 })
	assert.NoError(t, err, "stopped")
	assert.Equal(t, 2, n)

	checkClass(t, ErrKind, Elements([]byte(`{"a":[]}`), func(Value) bool { return true }))
	checkClass(t, ErrDepth, Options{MaxDepth: 1}.Elements([]byte(`[[1]]`), func(Value) bool { return true }))
	assert.NoError(t, Elements([]byte(`[]`), func(Value) bool { t.Fatal("no elements"); return true }))
}

// A27: deep nesting is refused early, in bounded time and memory.
func TestDeepNestingIsCheap(t *testing.T) {
	for _, doc := range []string{strings.Repeat("[", 1<<20), `{"a":` + strings.Repeat(`{"a":`, 1<<18)} {
		in := []byte(doc)
		allocs := testing.AllocsPerRun(10, func() {
			_, err := Parse(in)
			if !errors.Is(err, ErrDepth) {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, 1.0, "at most the stack of name hashes (64 open objects), nothing per level")
	}
}

// Many distinct names cost hashes, never a wrong verdict; a hostile
// document of colliding hashes is covered by TestDuplicateSlowPaths.
func TestManyNames(t *testing.T) {
	_, err := Parse([]byte(bigObject(100000, "")))
	assert.NoError(t, err)
	_, err = Parse([]byte(bigObject(100000, "K99999")))
	checkClass(t, ErrDuplicate, err)
	_, err = Parse([]byte(`[` + bigObject(17, "") + `,` + bigObject(17, "k16") + `]`))
	checkClass(t, ErrDuplicate, err, "the seventeenth name of an object, just past the one-by-one check")
}

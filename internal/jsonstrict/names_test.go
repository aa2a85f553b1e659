package jsonstrict

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFoldCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`uri`, `URI`, true},
		{`uri`, `ur\u0069`, true},
		{`uri`, `\u0055\u0052\u0049`, true},
		{`m\u0065thod`, `method`, true},
		{`kind`, `\u212aind`, true}, // KELVIN SIGN folds to k, as in encoding/json
		{`kind`, "\u212aind", true},
		{`scope`, `ſcope`, true}, // LATIN SMALL LETTER LONG S folds to s
		{`ÉTÉ`, `été`, true},
		{`a\/b`, `a/b`, true},
		{`\ud83d\ude00`, `😀`, true},
		{`uri`, `uri `, false},
		{`uri`, `ur`, false},
		{`i`, `İ`, false}, // U+0130 has no simple fold to i
		{`a`, `b`, false},
		{``, ``, true},
	} {
		got := foldCompare([]byte(tc.a), []byte(tc.b)) == 0
		assert.Equal(t, tc.same, got, "%s vs %s", tc.a, tc.b)
		if tc.same {
			assert.Equal(t, foldHash([]byte(tc.a)), foldHash([]byte(tc.b)), "%s vs %s: hash", tc.a, tc.b)
		}
		// AppendFold works on unescaped names and agrees.
		ua, ub := appendUnescaped(nil, []byte(tc.a)), appendUnescaped(nil, []byte(tc.b))
		assert.Equal(t, tc.same, string(AppendFold(nil, ua)) == string(AppendFold(nil, ub)), "%s vs %s: AppendFold", tc.a, tc.b)
	}
}

// The folding rule is encoding/json's: every name it would match to a
// field is a duplicate of that field's name here, and folds alike.
func TestFoldMatchesEncodingJSON(t *testing.T) {
	for _, name := range []string{`uri`, `URI`, `Uri`, `ur\u0069`, `\u0055RI`} {
		var v struct {
			URI int `json:"uri"`
		}
		require.NoError(t, json.Unmarshal([]byte(`{"`+name+`":1}`), &v))
		assert.Equal(t, 1, v.URI, name)
		assert.Zero(t, foldCompare([]byte(name), []byte("uri")), name)
		assert.Equal(t, "URI", string(AppendFold(nil, appendUnescaped(nil, []byte(name)))), name)
	}
	for _, name := range []string{`\u212aind`, "\u212aIND"} {
		var v struct {
			Kind int `json:"kind"`
		}
		require.NoError(t, json.Unmarshal([]byte(`{"`+name+`":1}`), &v))
		assert.Equal(t, 1, v.Kind, name)
		assert.Zero(t, foldCompare([]byte(name), []byte("kind")), name)
		assert.Equal(t, "KIND", string(AppendFold(nil, appendUnescaped(nil, []byte(name)))), name)
	}
	var v struct {
		Scope int `json:"scope"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"ſcope":1}`), &v))
	assert.Equal(t, 1, v.Scope)
	assert.Zero(t, foldCompare([]byte("ſcope"), []byte("scope")))
	// Names encoding/json does not match are not folded together.
	var w struct {
		I int `json:"i"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"İ":1}`), &w))
	assert.Zero(t, w.I)
	assert.NotEqual(t, string(AppendFold(nil, []byte("İ"))), string(AppendFold(nil, []byte("i"))))
	assert.Equal(t, "\uFFFD", string(AppendFold(nil, []byte{0xff})), "invalid UTF-8 folds like encoding/json")
}

func TestMemberNames(t *testing.T) {
	obj := ` {"a":1, "b\"}" : {"x":[1,{"y":"}]"}]} ,"c":"\\","d":[],"e":-1.5e3,"f":true}`
	var got []string
	for sp := range memberNames([]byte(obj), 1) {
		got = append(got, obj[sp.start:sp.end])
	}
	assert.Equal(t, []string{"a", `b\"}`, "c", "d", "e", "f"}, got)
	assert.Empty(t, slices.Collect(memberNames([]byte(`{ }`), 0)))
}

// The slow paths (equal hashes) must not call different names duplicates.
func TestDuplicateSlowPaths(t *testing.T) {
	obj := `{"uri":1,"ur\u0069x":2,"URIX ":3,"a":{"uri":4}}`
	s := scanner{data: []byte(obj)}
	last := strings.LastIndex(obj, `"a"`) + 1
	assert.False(t, s.repeats(0, last, last+1))
	s.sortedDuplicates(0)
	assert.NoError(t, s.dup)

	obj = `{"Id":1,"x":2,"iD":3}`
	s = scanner{data: []byte(obj)}
	last = strings.LastIndex(obj, `"iD"`) + 1
	assert.True(t, s.repeats(0, last, last+2))
	s.sortedDuplicates(0)
	assert.ErrorIs(t, s.dup, ErrDuplicate)
}

func TestFoldEscapes(t *testing.T) {
	for _, pair := range [][2]string{
		{`a\bb`, "a\bB"}, {`a\fb`, "a\fB"}, {`a\nb`, "a\nB"}, {`a\rb`, "a\rB"}, {`a\tb`, "a\tB"},
		{`a\\b`, `A\\B`}, {`\"`, `\u0022`}, {`\u00e9`, `\u00C9`},
	} {
		assert.Zero(t, foldCompare([]byte(pair[0]), []byte(pair[1])), "%s vs %s", pair[0], pair[1])
	}
	assert.Equal(t, "a\b\f\n\r\t\\\"/é😀", string(appendUnescaped(nil, []byte(`a\b\f\n\r\t\\\"\/\u00e9\ud83d\ude00`))))
}

// nextRune never reads past the end of bytes that are not a validated
// body (a Value over modified bytes must not panic).
func TestNextRuneOnGarbage(t *testing.T) {
	for _, raw := range []string{`\`, `\u`, `\u12`, `\ud800`, `\ud800\u`, `\ud800\u0041`, `\udc00`, "\xff", `\x`} {
		assert.NotPanics(t, func() {
			_ = appendUnescaped(nil, []byte(raw))
			_ = foldHash([]byte(raw))
			_ = foldCompare([]byte(raw), []byte(raw))
		}, raw)
	}
}

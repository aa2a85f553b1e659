package authn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWalkObject(t *testing.T) {
	valid := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+10,"b":"x","c":true,"d":false,"e":null,"f":[],"g":{},"h":[1,"2",[3],{"i":4}]}`,
		`{"\u00e9":"\ud83d\ude00"}`, `{"a":"\"\\\/\b\f\n\r\t"}`, "{\n\"a\"\t:\r1}", `{"a":{"a":1},"b":{"a":1}}`,
	}
	invalid := []string{
		``, ` `, `[]`, `"a"`, `1`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1}{}`, `{"a":1} x`, `{'a':1}`,
		`{a:1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud800\u0041"}`, "{\"a\":\"\x01\"}",
		"{\"a\":\"\xff\"}", `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"a":1,"a":2}}`, `{"a":[1,]}`, `{"a":[,1]}`,
		`{"a":NaN}`, `{"a":Infinity}`, "\ufeff{}", `{"a":1}` + "\x00",
		`{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
	}
	for _, s := range valid {
		assert.NoError(t, walkObject([]byte(s), func([]byte, jsonValue) error { return nil }), "%q", s)
		assert.True(t, json.Valid([]byte(s)), "%q", s)
	}
	for _, s := range invalid {
		assert.Error(t, walkObject([]byte(s), func([]byte, jsonValue) error { return nil }), "%q", s)
	}
	var names []string
	_ = walkObject([]byte(`{"a\u0062c":1,"x":"\u00e9"}`), func(n []byte, v jsonValue) error {
		names = append(names, string(n))
		if string(n) == "x" {
			s, ok := v.text()
			assert.True(t, ok)
			assert.Equal(t, "é", s)
		}
		return nil
	})
	assert.Equal(t, []string{"abc", "x"}, names)
	big := "{"
	for i := range maxJSONMembers + 1 {
		big += `"k` + itoa(i) + `":1,`
	}
	big = strings.TrimSuffix(big, ",") + "}"
	assert.Error(t, walkObject([]byte(big), func([]byte, jsonValue) error { return nil }), "member cap")
}

func TestNumericDate(t *testing.T) {
	for raw, want := range map[string]int64{"0": 0, "1": 1, "1800000000": 1800000000, "253402300799": 253402300799} {
		v := jsonValue{kind: jsonNumber, raw: []byte(raw)}
		got, ok := v.numericDate()
		assert.True(t, ok, raw)
		assert.Equal(t, want, got)
	}
	for _, raw := range []string{"-1", "1.5", "1e9", "253402300800", "9999999999999", "-0", "1E3"} {
		_, ok := jsonValue{kind: jsonNumber, raw: []byte(raw)}.numericDate()
		assert.False(t, ok, raw)
	}
	_, ok := jsonValue{kind: jsonString, raw: []byte(`"1"`)}.numericDate()
	assert.False(t, ok)
}

// FuzzStrictJSON: walkObject never panics, and it accepts only what
// encoding/json also finds valid (it is stricter, never looser).
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"\u00e9"}]}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":1e5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := walkObject(data, func(name []byte, v jsonValue) error {
			_, _ = v.text()
			_, _ = v.strings()
			_, _ = v.numericDate()
			return nil
		})
		if err == nil && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
	})
}

package jsonstrict

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, raw string) Value {
	t.Helper()
	v, err := Parse([]byte(raw))
	require.NoError(t, err, raw)
	return v
}

func TestKinds(t *testing.T) {
	for raw, want := range map[string]Kind{
		`"a"`: String, `""`: String, `0`: Number, `-1.5e3`: Number, `true`: Bool, `false`: Bool,
		`null`: Null, `{}`: Object, `{"a":1}`: Object, `[]`: Array, `[1]`: Array,
	} {
		assert.Equal(t, want, parse(t, raw).Kind(), raw)
	}
	assert.Equal(t, None, Value{}.Kind())
	assert.Nil(t, Value{}.Raw())
	for k, name := range map[Kind]string{None: "none", String: "string", Number: "number", Bool: "bool", Null: "null", Object: "object", Array: "array", 99: "none"} {
		assert.Equal(t, name, k.String())
	}
}

func TestStr(t *testing.T) {
	for raw, want := range map[string]string{
		`""`:                   "",
		`"plain"`:              "plain",
		`"\u00e9t\u00e9"`:      "été",
		`"a\"\\\/\b\f\n\r\tz"`: "a\"\\/\b\f\n\r\tz",
		`"\ud83d\ude00 😀"`:     "😀 😀",
		`"\u0000"`:             "\x00",
		`"URI"`:                "URI",
	} {
		v := parse(t, raw)
		s, ok := v.Str()
		assert.True(t, ok, raw)
		assert.Equal(t, want, s, raw)
		b, ok := v.AppendStr([]byte("x"))
		assert.True(t, ok, raw)
		assert.Equal(t, "x"+want, string(b), raw)
		assert.True(t, v.EqualStr(want), raw)
		assert.False(t, v.EqualStr(want+"x"), raw)
		if want != "" {
			assert.False(t, v.EqualStr(want[:len(want)-1]), raw)
		}
	}
	// Exact comparison: case-sensitive, no normalization.
	assert.False(t, parse(t, `"uri"`).EqualStr("URI"))
	assert.False(t, parse(t, `"\u0055RI"`).EqualStr("uri"))
	assert.True(t, parse(t, `"\u0055RI"`).EqualStr("URI"))
	assert.False(t, parse(t, `"\u00e9"`).EqualStr("e\u0301"), "no Unicode normalization")
	for _, raw := range []string{`1`, `null`, `true`, `{}`, `["a"]`} {
		v := parse(t, raw)
		_, ok := v.Str()
		assert.False(t, ok, raw)
		b, ok := v.AppendStr([]byte("x"))
		assert.False(t, ok, raw)
		assert.Equal(t, "x", string(b))
		assert.False(t, v.EqualStr(raw), raw)
	}
	_, ok := Value{}.Str()
	assert.False(t, ok)

	v := parse(t, `"documents://users/1234/notes/2024-05-01.md"`)
	var buf [64]byte
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = v.AppendStr(buf[:0])
		_ = v.EqualStr("documents://users/1234/notes/2024-05-01.md")
	}))
}

func TestInt(t *testing.T) {
	for raw, want := range map[string]int64{`0`: 0, `-0`: 0, `7`: 7, `-42`: -42, `9223372036854775807`: 1<<63 - 1, `-9223372036854775808`: -1 << 63} {
		n, ok := parse(t, raw).Int()
		assert.True(t, ok, raw)
		assert.Equal(t, want, n, raw)
	}
	for _, raw := range []string{`1.0`, `1e3`, `1E3`, `-1.5`, `9223372036854775808`, `"1"`, `true`, `null`, `[1]`} {
		_, ok := parse(t, raw).Int()
		assert.False(t, ok, raw)
	}
	_, ok := Value{}.Int()
	assert.False(t, ok)
}

func TestBool(t *testing.T) {
	b, ok := parse(t, `true`).Bool()
	assert.True(t, ok)
	assert.True(t, b)
	b, ok = parse(t, `false`).Bool()
	assert.True(t, ok)
	assert.False(t, b)
	for _, raw := range []string{`1`, `"true"`, `null`, `[true]`} {
		_, ok := parse(t, raw).Bool()
		assert.False(t, ok, raw)
	}
}

package jsonstrict

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type walked struct{ name, raw string }

// walk lists what the validating walks report for raw, recursively.
func walkValidating(t *testing.T, raw []byte) []walked {
	var out []walked
	v, err := Parse(raw)
	require.NoError(t, err)
	switch v.Kind() {
	case Object:
		require.NoError(t, Members(raw, func(name []byte, e Value) bool {
			out = append(out, walked{string(name), string(e.Raw())})
			out = append(out, walkValidating(t, e.Raw())...)
			return true
		}))
	case Array:
		require.NoError(t, Elements(raw, func(e Value) bool {
			out = append(out, walked{"", string(e.Raw())})
			out = append(out, walkValidating(t, e.Raw())...)
			return true
		}))
	}
	return out
}

// walkValue lists what the Value walks report for v, recursively.
func walkValue(v Value) []walked {
	var out []walked
	switch v.Kind() {
	case Object:
		_ = v.Members(func(name []byte, e Value) bool {
			out = append(out, walked{string(name), string(e.Raw())})
			out = append(out, walkValue(e)...)
			return true
		})
	case Array:
		_ = v.Elements(func(e Value) bool {
			out = append(out, walked{"", string(e.Raw())})
			out = append(out, walkValue(e)...)
			return true
		})
	}
	return out
}

func TestValueWalksAgree(t *testing.T) {
	for _, tc := range strictCases {
		if tc.want != nil {
			continue
		}
		v, err := Parse([]byte(tc.in))
		require.NoError(t, err)
		assert.Equal(t, walkValidating(t, []byte(tc.in)), walkValue(v), tc.name)
	}
	v := parse(t, ` { "a\u0062" : [ 1 , "x\"]" , { } ] , "c" : -1.5e3 , "d":"\\"} `)
	assert.Equal(t, []walked{{"ab", `[ 1 , "x\"]" , { } ]`}, {"", "1"}, {"", `"x\"]"`}, {"", "{ }"}, {"c", "-1.5e3"}, {"d", `"\\"`}}, walkValue(v))
}

func TestValueWalks(t *testing.T) {
	v := parse(t, `{"a":1,"b":2,"c":3}`)
	var names []string
	require.NoError(t, v.Members(func(name []byte, _ Value) bool {
		names = append(names, string(name))
		return len(names) < 2
	}))
	assert.Equal(t, []string{"a", "b"}, names, "stops")
	n := 0
	require.NoError(t, parse(t, `[1,2,3]`).Elements(func(Value) bool { n++; return n < 2 }))
	assert.Equal(t, 2, n)

	assert.ErrorIs(t, parse(t, `[1]`).Members(func([]byte, Value) bool { return true }), ErrKind)
	assert.ErrorIs(t, parse(t, `{}`).Elements(func(Value) bool { return true }), ErrKind)
	assert.ErrorIs(t, Value{}.Members(func([]byte, Value) bool { return true }), ErrKind)
	assert.NoError(t, parse(t, `{}`).Members(func([]byte, Value) bool { t.Fatal("empty"); return true }))
	assert.NoError(t, parse(t, `[ ]`).Elements(func(Value) bool { t.Fatal("empty"); return true }))

	obj := parse(t, `{"uri":"documents://users/1234/notes/2024-05-01.md","_meta":{"progressToken":7},"cursor":"AQx4"}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = obj.Members(func([]byte, Value) bool { return true })
	}))
}

// FuzzValueWalkModified: a Value whose bytes were modified after it was
// made never makes a walk panic or read outside them.
func FuzzValueWalkModified(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"d"}],"e":"\u00e9"}`), []byte(`"`))
	f.Add([]byte(`[{"a":1},[2,[3]],"x"]`), []byte(`\\\\`))
	f.Add([]byte(`{"\u0061":{"b":{}}}`), []byte(`{{{{`))
	f.Fuzz(func(t *testing.T, doc, garbage []byte) {
		v, err := Parse(doc)
		if err != nil || len(garbage) == 0 {
			return
		}
		raw := v.Raw()
		for i := range raw {
			raw[i] = garbage[i%len(garbage)]
		}
		_ = walkValue(v)
	})
}

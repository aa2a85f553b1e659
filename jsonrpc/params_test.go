package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type readParams struct {
	URI  string `json:"uri"`
	Meta *struct {
		ProgressToken any `json:"progressToken"`
	} `json:"_meta"`
}

type listBase struct {
	Cursor string `json:"cursor"`
}

type item struct {
	URI  string `json:"uri"`
	Kind string `json:"kind"`
}

// paramsTarget has fields at every kind of depth encoding/json reaches.
type paramsTarget struct {
	listBase                            // embedded: cursor is promoted
	*Extra                              // embedded pointer, nil until filled
	Name      string                    // untagged: the Go name
	Items     []item                    `json:"items"`
	ByName    map[string]item           `json:"byName"`
	Ptr       *item                     `json:"ptr"`
	Arr       [2]item                   `json:"arr"`
	Any       any                       `json:"any"`
	Raw       json.RawMessage           `json:"raw"`
	Skipped   string                    `json:"-"`
	Dash      string                    `json:"-,"`
	Scope     string                    `json:"scope"`
	Nested    struct{ Deep []*item }    `json:"nested"`
	Free      map[string]any            `json:"free"`
	Named     map[string]json.Number    `json:"named"`
	BadTag    string                    `json:"bad\"tag"` // an invalid tag name: the Go name BadTag
	Interface interface{ Method() int } `json:"interface"`
}

type Extra struct {
	Level int `json:"level"`
}

func TestUnmarshalParams(t *testing.T) {
	t.Run("decodes", func(t *testing.T) {
		var p readParams
		require.NoError(t, UnmarshalParams(json.RawMessage(`{"uri":"a://b","_meta":{"progressToken":7},"other":1}`), &p))
		assert.Equal(t, "a://b", p.URI)
		require.NotNil(t, p.Meta)
		assert.Equal(t, float64(7), p.Meta.ProgressToken)
	})
	t.Run("absent params leave v unchanged", func(t *testing.T) {
		p := readParams{URI: "keep"}
		require.NoError(t, UnmarshalParams(nil, &p))
		require.NoError(t, UnmarshalParams(json.RawMessage{}, &p))
		assert.Equal(t, "keep", p.URI)
	})
	t.Run("wrong type is invalid params, nothing echoed", func(t *testing.T) {
		var p readParams
		err := UnmarshalParams(json.RawMessage(`{"uri":["SECRET-INPUT"]}`), &p)
		require.ErrorIs(t, err, &Error{Code: CodeInvalidParams})
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "Invalid params", e.Message)
		assert.Nil(t, e.Data)
		assert.NotContains(t, err.Error(), "SECRET")
	})
	t.Run("not JSON is invalid params", func(t *testing.T) {
		var p readParams
		assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"uri":`), &p), &Error{Code: CodeInvalidParams})
	})
	t.Run("a bad target is the server's bug", func(t *testing.T) {
		var p readParams
		assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{}`), p), &Error{Code: CodeInternalError})
		assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{}`), nil), &Error{Code: CodeInternalError})
		assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{}`), (*readParams)(nil)), &Error{Code: CodeInternalError})
	})
}

// Issue 10: a member whose name differs in case from a field's never fills
// it (encoding/json would), at any depth; the rest of encoding/json's
// behaviour stays. Each row is decoded into a fresh paramsTarget.
func TestUnmarshalParamsCaseSensitive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params string
		ok     bool
		check  func(t *testing.T, p *paramsTarget)
	}{
		// Exact names fill, as before.
		{"exact names", `{"cursor":"c","level":2,"Name":"n","scope":"s","items":[{"uri":"a","kind":"k"}]}`, true, func(t *testing.T, p *paramsTarget) {
			assert.Equal(t, "c", p.Cursor)
			require.NotNil(t, p.Extra)
			assert.Equal(t, 2, p.Level)
			assert.Equal(t, "n", p.Name)
			assert.Equal(t, []item{{"a", "k"}}, p.Items)
		}},
		{"unknown members are ignored", `{"cursor":"c","zzz":{"URI":1},"Scopes":1}`, true, func(t *testing.T, p *paramsTarget) { assert.Equal(t, "c", p.Cursor) }},
		{"null fills nothing", `{"cursor":null,"ptr":null,"items":null}`, true, nil},
		{"a map's keys are data, in any case", `{"byName":{"URI":{"uri":"a"},"b":{"uri":"b"}},"free":{"URI":1,"Cursor":2}}`, true, func(t *testing.T, p *paramsTarget) {
			assert.Equal(t, "a", p.ByName["URI"].URI)
			assert.Equal(t, map[string]any{"URI": float64(1), "Cursor": float64(2)}, p.Free)
		}},
		{"an empty interface takes names as they are", `{"any":{"URI":1}}`, true, func(t *testing.T, p *paramsTarget) { assert.Equal(t, map[string]any{"URI": float64(1)}, p.Any) }},
		{"raw JSON is kept as it is", `{"raw":{"URI":1}}`, true, func(t *testing.T, p *paramsTarget) { assert.JSONEq(t, `{"URI":1}`, string(p.Raw)) }},
		{`json:"-" has no name`, `{"Skipped":"x"}`, true, func(t *testing.T, p *paramsTarget) { assert.Empty(t, p.Skipped) }},
		{`json:"-" has no name, in any case`, `{"skipped":"x"}`, true, func(t *testing.T, p *paramsTarget) { assert.Empty(t, p.Skipped) }},
		{"A27 two keys of a map that differ in case are duplicates", `{"free":{"URI":1,"uri":2}}`, false, nil},
		{`json:"-," is named "-"`, `{"-":"x"}`, true, func(t *testing.T, p *paramsTarget) { assert.Equal(t, "x", p.Dash) }},
		{"an invalid tag name means the Go name", `{"BadTag":"x"}`, true, func(t *testing.T, p *paramsTarget) { assert.Equal(t, "x", p.BadTag) }},

		// Attacks: case variants, at every depth and through every kind.
		{"A27 URI for uri", `{"items":[{"URI":"a"}]}`, false, nil},
		{"A27 Cursor for cursor (embedded)", `{"Cursor":"c"}`, false, nil},
		{"A27 CURSOR beside nothing else", `{"CURSOR":"c"}`, false, nil},
		{"A27 Level for level (embedded pointer)", `{"Level":1}`, false, nil},
		{"A27 name for the untagged Name", `{"name":"n"}`, false, nil},
		{"A27 Kelvin sign for k", `{"items":[{"\u212aind":"x"}]}`, false, nil},
		{"A27 long s for s", `{"ſcope":"x"}`, false, nil},
		{"A27 escaped upper case", `{"\u0053cope":"x"}`, false, nil},
		{"A27 in the second element only", `{"items":[{"uri":"a"},{"Uri":"b"}]}`, false, nil},
		{"A27 in a map's value", `{"byName":{"a":{"URI":"x"}}}`, false, nil},
		{"A27 behind a pointer", `{"ptr":{"Kind":"x"}}`, false, nil},
		{"A27 in an array", `{"arr":[{"uri":"a"},{"uRI":"b"}]}`, false, nil},
		{"A27 deep", `{"nested":{"Deep":[null,{"URI":"x"}]}}`, false, nil},
		{"A27 nested's own field", `{"nested":{"deep":[]}}`, false, nil},
		{"A27 invalid tag falls back to the Go name", `{"badtag":"x"}`, false, nil},
		// Duplicates stay rejected, also when UnmarshalParams is called on
		// its own (without Decode first).
		{"A27 duplicate", `{"cursor":"a","cursor":"b"}`, false, nil},
		{"A27 case duplicate", `{"cursor":"a","Cursor":"b"}`, false, nil},
		{"A27 duplicate deep in free-form data", `{"free":{"a":{"x":1,"X":2}}}`, false, nil},
		{"A28 invalid UTF-8", "{\"cursor\":\"\xff\"}", false, nil},
		{"A28 lone surrogate", `{"cursor":"\ud800"}`, false, nil},
		{"trailing data", `{"cursor":"a"} {}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p paramsTarget
			err := UnmarshalParams(json.RawMessage(tc.params), &p)
			if !tc.ok {
				require.ErrorIs(t, err, &Error{Code: CodeInvalidParams})
				assert.Equal(t, paramsTarget{}, p, "nothing filled")
				if strings.HasPrefix(tc.name, "A27") && !strings.Contains(tc.name, "duplicate") {
					// The differential this closes: encoding/json alone fills a field.
					var v1 paramsTarget
					_ = json.Unmarshal([]byte(tc.params), &v1)
					assert.NotEqual(t, paramsTarget{}, v1, "encoding/json fills a field from a case variant")
				}
				return
			}
			require.NoError(t, err)
			// encoding/json alone reads exactly the same.
			var want paramsTarget
			require.NoError(t, json.Unmarshal([]byte(tc.params), &want))
			assert.Equal(t, want, p)
			if tc.check != nil {
				tc.check(t, &p)
			}
		})
	}
}

// encoding/json decodes into the pointer an interface holds, and into the
// existing elements of a slice: their fields are checked too.
func TestUnmarshalParamsFollowsValues(t *testing.T) {
	var inner item
	p := paramsTarget{Any: &inner}
	require.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"any":{"URI":"x"}}`), &p), &Error{Code: CodeInvalidParams})
	assert.Empty(t, inner.URI)
	require.NoError(t, UnmarshalParams(json.RawMessage(`{"any":{"uri":"x"}}`), &p))
	assert.Equal(t, "x", inner.URI)

	var held item
	target := any(&held)
	require.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"Kind":"x"}`), &target), &Error{Code: CodeInvalidParams})

	s := struct {
		List []any `json:"list"`
	}{List: []any{&item{}}}
	require.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"list":[{"URI":"x"}]}`), &s), &Error{Code: CodeInvalidParams})
}

// A recursive type, embedded cycles and a type decoded by its own method.
type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children"`
	*Loop
}

type Loop struct {
	*node
	Tag string `json:"tag"`
}

type custom struct{ got string }

func (c *custom) UnmarshalJSON(b []byte) error { c.got = string(b); return nil }

func TestUnmarshalParamsTypes(t *testing.T) {
	var n node
	require.NoError(t, UnmarshalParams(json.RawMessage(`{"name":"a","children":[{"name":"b","children":[{"name":"c","tag":"t"}]}]}`), &n))
	assert.Equal(t, "c", n.Children[0].Children[0].Name)
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"children":[{"children":[{"Name":"c"}]}]}`), &n), &Error{Code: CodeInvalidParams})
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"TAG":"t"}`), &n), &Error{Code: CodeInvalidParams})

	var c struct {
		C custom `json:"c"`
	}
	require.NoError(t, UnmarshalParams(json.RawMessage(`{"c":{"URI":1}}`), &c))
	assert.Equal(t, `{"URI":1}`, c.C.got, "a type with its own UnmarshalJSON decodes its own bytes")

	var m map[string]item
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`{"a":{"Uri":"x"}}`), &m), &Error{Code: CodeInvalidParams})
	var sl []item
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(`[{"Uri":"x"}]`), &sl), &Error{Code: CodeInvalidParams})
	assert.NoError(t, UnmarshalParams(json.RawMessage(`[{"uri":"x"}]`), &sl))
}

func TestUnmarshalParamsDeep(t *testing.T) {
	deep := strings.Repeat(`{"children":[`, 30) + `{"Name":"x"}` + strings.Repeat(`]}`, 30)
	var n node
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(deep), &n), &Error{Code: CodeInvalidParams})
	tooDeep := strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100)
	var a any
	assert.ErrorIs(t, UnmarshalParams(json.RawMessage(tooDeep), &a), &Error{Code: CodeInvalidParams}, "deeper than 64")
}

// FuzzUnmarshalParams decodes anything into paramsTarget. Errors are
// fixed Invalid params; what is accepted decodes exactly as encoding/json
// decodes it; a rejection of strict JSON that encoding/json decodes is
// explained by a case variant of one of the type's field names somewhere;
// and params without any such variant are never rejected for one.
func FuzzUnmarshalParams(f *testing.F) {
	for _, s := range []string{
		`{"cursor":"c","level":2,"Name":"n","items":[{"uri":"a","kind":"k"}],"byName":{"URI":{"uri":"b"}}}`,
		`{"items":[{"URI":"a"}]}`, `{"Cursor":"c"}`, `{"nested":{"Deep":[null,{"Uri":"x"}]}}`, `{"any":{"URI":1}}`,
		`{"raw":{"Kind":1},"free":{"Scope":1}}`, `{"\u212aind":1}`, `{"ptr":{"kind":"x","KIND":"y"}}`, `{"arr":[{},{"uRi":1},{}]}`,
	} {
		f.Add([]byte(s))
	}
	names := map[string]bool{}
	for _, n := range []string{"cursor", "level", "Name", "items", "uri", "kind", "byName", "ptr", "arr", "any", "raw", "-",
		"scope", "nested", "Deep", "free", "named", "BadTag", "interface"} {
		names[n] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p paramsTarget
		err := UnmarshalParams(data, &p)
		var want paramsTarget
		v1err := json.Unmarshal(data, &want)
		if err == nil {
			if len(data) > 0 {
				require.NoError(t, v1err)
				assert.Equal(t, want, p, "accepted params decode as encoding/json decodes them")
			}
			return
		}
		require.ErrorIs(t, err, &Error{Code: CodeInvalidParams})
		assert.Equal(t, "jsonrpc: error -32602: Invalid params", err.Error())
		var e *Error
		require.ErrorAs(t, err, &e)
		if e.reason == "a member name differs in case from a field's" {
			assert.True(t, hasVariant(t, data, names), "rejected without a case variant of a field name")
		}
		if _, perr := jsonstrict.Parse(data); perr == nil && v1err == nil && !hasVariant(t, data, names) {
			t.Fatalf("strict JSON without a case variant, decoded by encoding/json, rejected: %v", err)
		}
	})
}

// hasVariant reports whether a member name anywhere in the strict JSON
// data differs from one of names but folds like it.
func hasVariant(t *testing.T, data []byte, names map[string]bool) bool {
	v, err := jsonstrict.Parse(data)
	if err != nil {
		return false
	}
	var walk func(v jsonstrict.Value) bool
	walk = func(v jsonstrict.Value) bool {
		found := false
		switch v.Kind() {
		case jsonstrict.Object:
			_ = v.Members(func(name []byte, mv jsonstrict.Value) bool {
				if !names[string(name)] {
					for n := range names {
						if strings.EqualFold(n, string(name)) {
							found = true
						}
					}
				}
				found = found || walk(mv)
				return !found
			})
		case jsonstrict.Array:
			_ = v.Elements(func(ev jsonstrict.Value) bool {
				found = walk(ev)
				return !found
			})
		}
		return found
	}
	return walk(v)
}

package mcpwire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// checkStringParam holds StringParam to its reference on params the
// strict decoder accepts (what the endpoint ever reads): the member of
// exactly that name, decoded by encoding/json — a string is present, null
// or absence is absent, any other value is Invalid params, and so are
// params that are neither an object nor null. Params the strict decoder
// refuses never reach it; on them it only must not panic.
func checkStringParam(t *testing.T, params []byte) {
	t.Helper()
	for _, name := range []string{"cursor", "uri"} {
		got, present, err := StringParam(params, name)
		if _, perr := jsonstrict.Parse(params); perr != nil && len(params) > 0 {
			continue // never read: the strict decoder refused the message (no panic is all)
		}
		var obj map[string]json.RawMessage
		switch trimmed := bytes.TrimSpace(params); {
		case len(params) == 0 || string(trimmed) == "null":
			if err != nil || present {
				t.Fatalf("%s in %q: %q %v %v, want absent", name, params, got, present, err)
			}
			continue
		case json.Unmarshal(params, &obj) != nil:
			if err == nil {
				t.Fatalf("%s in %q: params that are no object accepted", name, params)
			}
			continue
		}
		raw, ok := obj[name]
		var want string
		switch {
		case !ok || string(bytes.TrimSpace(raw)) == "null":
			if err != nil || present {
				t.Fatalf("%s in %q: %q %v %v, want absent", name, params, got, present, err)
			}
		case json.Unmarshal(raw, &want) == nil:
			if err != nil || !present || got != want {
				t.Fatalf("%s in %q: %q %v %v, want %q", name, params, got, present, err, want)
			}
		default:
			if err == nil {
				t.Fatalf("%s in %q: a %s accepted as a string", name, params, raw)
			}
		}
	}
}

func TestStringParam(t *testing.T) {
	for _, p := range stringParamSeeds {
		checkStringParam(t, []byte(p))
	}
	v, present, err := StringParam([]byte(`{"cursor":"a\u00e9\"b","_meta":{"x":[1,{"Cursor":2}]}}`), "cursor")
	require.NoError(t, err)
	assert.True(t, present)
	assert.Equal(t, "aé\"b", v, "unescaped; nested members are not the field's")
	// One reader, by exact name: a case variant is another member (after
	// the strict decode it can never stand beside the name itself).
	_, present, err = StringParam([]byte(`{"URI":"docs://a"}`), "uri")
	assert.NoError(t, err)
	assert.False(t, present)
	v, present, _ = StringParam([]byte(`{"\u0075ri":"docs://a"}`), "uri")
	assert.True(t, present, "an escaped name is the name itself")
	assert.Equal(t, "docs://a", v)
}

var stringParamSeeds = []string{
	`{}`, `null`, ` null `, `[]`, `"x"`, `1`, `{"cursor":"abc"}`, `{"cursor":null}`, `{"cursor":""}`,
	`{"cursor":1}`, `{"cursor":{"a":1}}`, `{"cursor":["a"]}`, `{"Cursor":"abc"}`, `{"CURSOR":"abc"}`,
	`{"curſor":"abc"}`,                     // LATIN SMALL LETTER LONG S folds to S
	`{"\u0063ursor":"abc"}`,                // an escaped name is the name itself
	`{"cursor":"a","cursor":"b"}`,          // duplicate: the strict decoder refuses it
	`{"cursor":"a","Cursor":"b"}`,          // case-variant duplicate: likewise
	`{"cursor":"\ud800"}`,                  // lone surrogate
	"{\"cursor\":\"\xff\"}",                // invalid UTF-8
	`{"cursor":"abc"`, `{"cursor":"abc"}x`, // truncated, trailing
	`{"uri":"docs://a","URI":"docs://b"}`, `{"Uri":"x"}`, `{"uri":"docs://a","other":{"URI":1}}`,
	`{"cursor":"a","uri":"b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
}

// FuzzStringParam: on any params, StringParam agrees with its reference.
func FuzzStringParam(f *testing.F) {
	for _, p := range stringParamSeeds {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		checkStringParam(t, params)
	})
}

// BenchmarkParams: reading params.uri with the one reader (the strict
// walker, over bytes the decoder validated) against encoding/json's
// exact-name decode into a map and gjson-free alternatives the endpoint
// used before: the walker allocates only the string it returns.
func BenchmarkParams(b *testing.B) {
	params := []byte(`{"uri":"docs://documents/d000123","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	b.Run("walker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, ok, err := StringParam(params, "uri"); err != nil || !ok || v == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("gjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v := gjson.GetBytes(params, "uri"); v.Str == "" {
				b.Fatal("decode")
			}
		}
	})
	b.Run("encoding-json-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]json.RawMessage
			var v string
			if json.Unmarshal(params, &m) != nil || json.Unmarshal(m["uri"], &v) != nil || v == "" {
				b.Fatal("decode")
			}
		}
	})
	b.Run("encoding-json-struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p struct {
				URI *string `json:"uri"`
			}
			if json.Unmarshal(params, &p) != nil || p.URI == nil {
				b.Fatal("decode")
			}
		}
	})
}

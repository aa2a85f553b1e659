package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// fuzzSeeds are the decoding table's bodies (but the huge ones) and a few
// batches.
func fuzzSeeds(f *testing.F) {
	for _, tc := range append(append([]decodeCase{}, validCases...), invalidCases...) {
		if len(tc.in) <= 2048 {
			f.Add([]byte(tc.in))
		}
	}
	one := env + `"id":1,"method":"ping"}`
	for _, s := range []string{
		`[` + one + `]`,
		`[` + one + `,` + env + `"id":"b","result":{}},3,{"Method":1}]`,
		`[]`, `[[]]`, `[1,`,
		`{"jsonrpc":"2.0","id":"\u00e9","method":"m","params":{"a":"\ud83d\ude00","b":{"c":[1,2.5e-3,true,null]}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"x","data":{"uri":"a"}}}`,
		env + `"id":1,"method":"m","params":` + bigObject(20, "") + `}`, // past linearNames
		env + `"id":1,"method":"m","params":` + bigObject(20, "K3") + `}`,
		env + `"id":1,"method":"m","params":{"a":` + bigObject(17, `K16`) + `}}`,
	} {
		f.Add([]byte(s))
	}
}

// checkDecodeError checks what any decoding error may be: fixed texts only.
func checkDecodeError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "unexpected error type %T", err)
	switch e.Code {
	case CodeParseError:
		assert.Equal(t, "Parse error", e.Message)
	case CodeInvalidRequest:
		assert.Equal(t, "Invalid Request", e.Message)
	default:
		t.Fatalf("unexpected code %d", e.Code)
	}
	assert.Nil(t, e.Data)
	assert.Contains(t, []string{"jsonrpc: error -32700: Parse error", "jsonrpc: error -32600: Invalid Request"}, err.Error())
	return e
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

func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, 0)
		valid := json.Valid(data)
		if err != nil {
			e := checkDecodeError(t, err)
			if e.Code == CodeParseError {
				assert.Equal(t, Message{}, m, "nothing is echoed for a parse error")
				assert.False(t, valid && utf8.Valid(data) && !hasSurrogateEscape(data), "valid JSON called a parse error")
			} else if !valid {
				assert.Equal(t, "nesting too deep", e.reason, "not JSON, yet not a parse error")
			}
			if e.reason == "duplicate member name" {
				assert.True(t, naiveDuplicate(t, data), "a duplicate that is not one")
			}
			if !m.ID.IsZero() { // an echoed id is a real id of the body
				assert.Equal(t, m.ID.Raw(), gjson.GetBytes(data, "id").Raw)
			}
			return
		}

		// Accepted: it is JSON, and encoding/json reads the same message.
		require.True(t, valid, "accepted invalid JSON")
		require.True(t, utf8.Valid(data))
		assert.False(t, naiveDuplicate(t, data), "a duplicate was missed")
		var envl map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &envl))
		for k := range envl {
			assert.Contains(t, []string{"jsonrpc", "id", "method", "params", "result", "error"}, k)
		}
		assert.Equal(t, `"2.0"`, unquoteRaw(t, envl["jsonrpc"]))
		if m.ID.IsZero() {
			if raw, ok := envl["id"]; ok {
				assert.Equal(t, "null", string(raw))
			}
		} else {
			assert.Equal(t, m.ID.Raw(), string(envl["id"]))
			var id ID
			require.NoError(t, json.Unmarshal(envl["id"], &id))
			assert.Equal(t, m.ID, id)
		}
		switch m.Kind {
		case KindRequest, KindNotification:
			var method string
			require.NoError(t, json.Unmarshal(envl["method"], &method))
			assert.Equal(t, method, m.Method)
			assert.NotEmpty(t, m.Method)
			assert.Equal(t, m.Kind == KindRequest, !m.ID.IsZero())
		case KindResponse:
			assert.Empty(t, m.Method)
			assert.True(t, (m.Result == nil) != (m.Error == nil))
			if m.Error != nil {
				var eo struct {
					Code    int64
					Message string
					Data    json.RawMessage
				}
				require.NoError(t, json.Unmarshal(envl["error"], &eo))
				assert.Equal(t, eo.Code, m.Error.Code)
				assert.Equal(t, eo.Message, m.Error.Message)
				assert.Equal(t, string(eo.Data), string(m.Error.Data))
			}
		default:
			t.Fatalf("accepted with kind %v", m.Kind)
		}
		// The spans are exactly encoding/json's, and are clean objects on
		// their own.
		for name, span := range map[string]json.RawMessage{"params": m.Params, "result": m.Result} {
			raw, ok := envl[name]
			assert.Equal(t, ok, span != nil, name)
			if span == nil {
				continue
			}
			assert.Equal(t, string(raw), string(span), name)
			assert.NoError(t, jsonstrict.Members(span, func([]byte, jsonstrict.Value) bool { return true }), name)
		}

		// DecodeBatch agrees.
		items, err := DecodeBatch(append(append([]byte("["), data...), ']'), 0)
		require.NoError(t, err)
		require.Len(t, items, 1)
		assert.NoError(t, items[0].Err)
		assert.Equal(t, m, items[0].Message)

		// The id is echoed byte for byte.
		out := AppendResult(nil, m.ID, json.RawMessage(`{}`))
		require.True(t, json.Valid(out))
		if !m.ID.IsZero() {
			assert.Equal(t, m.ID.Raw(), gjson.GetBytes(out, "id").Raw)
		}
	})
}

// naiveDuplicate reports whether any object in the valid JSON data repeats
// a member name (after unescaping and encoding/json's case folding, which
// it documents as bytes.EqualFold), with encoding/json's tokenizer and the
// names of each object: the simple way the engine's hashes and sorting
// must agree with.
func naiveDuplicate(t *testing.T, data []byte) bool {
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
				for prev := range top.names {
					if strings.EqualFold(prev, tok) {
						dup = true
					}
				}
				top.names[tok] = true
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

func unquoteRaw(t *testing.T, raw json.RawMessage) string {
	var s string
	require.NoError(t, json.Unmarshal(raw, &s))
	return string(jsonstrict.AppendString(nil, s))
}

func FuzzDecodeBatch(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := DecodeBatch(data, 0)
		if err != nil {
			checkDecodeError(t, err)
			assert.Nil(t, items)
			return
		}
		require.True(t, json.Valid(data))
		require.True(t, IsBatch(data))
		require.NotEmpty(t, items)
		require.LessOrEqual(t, len(items), MaxBatch)
		var elems []string
		gjson.ParseBytes(data).ForEach(func(_, v gjson.Result) bool {
			elems = append(elems, v.Raw)
			return true
		})
		require.Len(t, elems, len(items))
		for i, it := range items {
			m, err := Decode([]byte(elems[i]), 0)
			assert.Equal(t, m, it.Message, "element %d", i)
			if it.Err != nil {
				e := checkDecodeError(t, it.Err)
				assert.ErrorIs(t, err, e, "element %d", i)
				continue
			}
			require.NoError(t, err)
		}
	})
}

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// Ids are echoed byte for byte: Decode → AppendResult / AppendError.
func TestIDRoundTrip(t *testing.T) {
	for _, raw := range []string{
		`0`, `-0`, `7`, `-42`, `9223372036854775807`, `-9223372036854775808`,
		`123456789012345678901234567890`, // A27: beyond int64 and float64 precision
		`""`, `"abc"`, `"\u00e9\n"`, `"\u00E9"`, `"é"`, `"\ud83d\ude00"`, `"😀"`,
		`"\"quoted\" \\ \/ \b\f\r\t"`, `"a\u0000b"`, `"</script>"`, `"\u2028"`,
	} {
		t.Run(raw, func(t *testing.T) {
			m, err := Decode([]byte(env+`"id":`+raw+`,"method":"ping"}`), 0)
			require.NoError(t, err)
			assert.Equal(t, raw, m.ID.Raw())

			out := AppendResult(nil, m.ID, json.RawMessage(`{}`))
			assert.Equal(t, `{"jsonrpc":"2.0","id":`+raw+`,"result":{}}`, string(out))
			assert.True(t, json.Valid(out))
			assert.Equal(t, raw, gjson.GetBytes(out, "id").Raw)

			out = AppendError(nil, m.ID, NewError(CodeMethodNotFound, "Method not found"))
			assert.Equal(t, raw, gjson.GetBytes(out, "id").Raw)

			head, tail := ResultEnvelope(m.ID)
			assert.Equal(t, `{"jsonrpc":"2.0","id":`+raw+`,"result":`, string(head))
			assert.Equal(t, `}`, string(tail))

			// encoding/json keeps the text too (an Encoder, because
			// json.Marshal HTML-escapes < > & even in Marshaler output).
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(struct{ ID ID }{m.ID}))
			assert.Equal(t, `{"ID":`+raw+"}\n", buf.String())

			var back ID
			require.NoError(t, json.Unmarshal([]byte(raw), &back))
			assert.Equal(t, m.ID, back)
		})
	}
}

func TestAppendResult(t *testing.T) {
	got := AppendResult([]byte("prefix:"), StringID("a"), json.RawMessage(`{"resources":[]}`))
	assert.Equal(t, `prefix:{"jsonrpc":"2.0","id":"a","result":{"resources":[]}}`, string(got))

	got = AppendResult(nil, Int64ID(1), nil)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(got), "empty result")

	got = AppendResult(nil, ID{}, json.RawMessage(`{}`))
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"result":{}}`, string(got))
}

func TestResultEnvelope(t *testing.T) {
	head, tail := ResultEnvelope(Int64ID(9))
	assert.Equal(t, `{"jsonrpc":"2.0","id":9,"result":`, string(head))
	assert.Equal(t, `}`, string(tail))
	assert.Equal(t, len(head), cap(head), "appending to head must not overwrite tail")
	full := append(append(head, `{"x":1}`...), tail...)
	assert.True(t, json.Valid(full))
	assert.Equal(t, `}`, string(tail), "tail unchanged")

	head, _ = ResultEnvelope(ID{})
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"result":`, string(head))

	for _, id := range []ID{Int64ID(9), StringID("a\"b"), {}} {
		h, _ := ResultEnvelope(id)
		assert.Equal(t, string(h), string(AppendResultHead([]byte("x"), id)[1:]), "AppendResultHead writes the same head")
	}
	buf, id := make([]byte, 0, 64), Int64ID(123)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = AppendResultHead(buf[:0], id) }))
}

func TestAppendError(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   ID
		err  *Error
		want string
	}{
		{"zero id is null", ID{}, NewError(CodeParseError, "Parse error"),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"string id", StringID("r1"), NewError(CodeInvalidParams, "Invalid params"),
			`{"jsonrpc":"2.0","id":"r1","error":{"code":-32602,"message":"Invalid params"}}`},
		{"data", Int64ID(3), NewError(CodeResourceNotFound, "Resource not found").WithData(map[string]string{"uri": "a://b"}),
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"a://b"}}}`},
		{"message escaped", Int64ID(3), NewError(1, "a \"b\"\n\x01\u2028\xff"),
			`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"a \"b\"\n\u0001\u2028\ufffd"}}`},
		{"empty message gets the standard one", Int64ID(3), &Error{Code: CodeUnsupportedProtocolVersion},
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version"}}`},
		{"invalid data is dropped", Int64ID(3), &Error{Code: 5, Message: "m", Data: json.RawMessage(`{"a":`)},
			`{"jsonrpc":"2.0","id":3,"error":{"code":5,"message":"m"}}`},
		{"nil error is an internal error", Int64ID(3), nil,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendError(nil, tc.id, tc.err)
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestErrorMarshalJSON(t *testing.T) {
	b, err := json.Marshal(NewError(CodeInvalidRequest, "Invalid Request"))
	require.NoError(t, err)
	assert.Equal(t, `{"code":-32600,"message":"Invalid Request"}`, string(b))

	b, err = json.Marshal(struct {
		E *Error `json:"error"`
	}{NewError(1, "x").WithData([]int{1})})
	require.NoError(t, err)
	assert.Equal(t, `{"error":{"code":1,"message":"x","data":[1]}}`, string(b))

	var nilErr *Error
	b, err = nilErr.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
}

func TestErrorIs(t *testing.T) {
	err := error(NewError(CodeInvalidParams, "Invalid params"))
	wrapped := errors.Join(errors.New("context"), err)
	assert.ErrorIs(t, wrapped, &Error{Code: CodeInvalidParams})
	assert.NotErrorIs(t, wrapped, &Error{Code: CodeInvalidRequest})
	assert.False(t, NewError(1, "").Is(errors.New("x")))
	assert.False(t, NewError(1, "").Is((*Error)(nil)))
}

func TestErrorText(t *testing.T) {
	assert.Equal(t, "jsonrpc: error -32601: Method not found", NewError(CodeMethodNotFound, "Method not found").Error())
	assert.Equal(t, `jsonrpc: error 1: "a\nb"`, NewError(1, "a\nb").Error(), "control characters are quoted")
	assert.Equal(t, "jsonrpc: <nil>", (*Error)(nil).Error())
	assert.Equal(t, "jsonrpc: message larger than 1024 bytes", (&TooLargeError{Limit: 1024}).Error())
}

func TestWithData(t *testing.T) {
	base := NewError(CodeUnsupportedProtocolVersion, "Unsupported protocol version")
	e := base.WithData(map[string]any{"supported": []string{"2026-07-28"}, "requested": "1999"})
	assert.JSONEq(t, `{"supported":["2026-07-28"],"requested":"1999"}`, string(e.Data))
	assert.Nil(t, base.Data, "the original is not changed")
	assert.Equal(t, base.Code, e.Code)

	bad := base.WithData(make(chan int))
	assert.Nil(t, bad.Data, "unencodable data is dropped")
	assert.Equal(t, base.Message, bad.Message)
}

func TestIDs(t *testing.T) {
	assert.True(t, ID{}.IsZero())
	assert.Equal(t, "", ID{}.Raw())
	b, err := ID{}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))

	assert.Equal(t, `"a\"b\u0001é"`, StringID("a\"b\x01é").Raw())
	assert.Equal(t, `"\ufffd"`, StringID("\xff").Raw())
	assert.Equal(t, `""`, StringID("").Raw())
	assert.False(t, StringID("").IsZero())
	assert.Equal(t, "-9223372036854775808", Int64ID(-1<<63).Raw())
	assert.NotEqual(t, StringID("1"), Int64ID(1), "string and integer ids differ")

	for _, bad := range []string{`1.0`, `1e3`, `true`, `{}`, `[]`, `"\ud800"`, "\"\xff\"", `1 2`, ``, `nul`, `null x`, `01`} {
		var id ID
		assert.Error(t, id.UnmarshalJSON([]byte(bad)), "%q", bad)
	}
	id := Int64ID(5)
	require.NoError(t, id.UnmarshalJSON([]byte(` null `)))
	assert.True(t, id.IsZero())
	require.NoError(t, id.UnmarshalJSON([]byte(` -12 `)))
	assert.Equal(t, "-12", id.Raw())
}

package jsonrpc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsZeroIsDefault(t *testing.T) {
	assert.Equal(t, int64(DefaultMaxBytes), Limits{}.maxBytes())
	assert.Equal(t, DefaultMaxIDBytes, Limits{}.maxID())
	assert.Equal(t, MaxBatch, Limits{}.maxBatch())
	neg := Limits{MaxBytes: -1, MaxIDBytes: -1, MaxBatch: -1}
	assert.Equal(t, Limits{}.maxBytes(), neg.maxBytes())
	assert.Equal(t, Limits{}.maxID(), neg.maxID())
	assert.Equal(t, Limits{}.maxBatch(), neg.maxBatch())
	for _, tc := range append(append([]decodeCase{}, validCases...), invalidCases...) {
		m1, err1 := Decode([]byte(tc.in), 0)
		m2, err2 := Limits{}.Decode([]byte(tc.in))
		assert.Equal(t, m1, m2, tc.name)
		assert.Equal(t, err1, err2, tc.name)
	}
}

// Issue 11: an id longer than the limit is a clear Invalid Request, and
// it is never echoed (no log or response carries megabytes of it).
func TestIDLimit(t *testing.T) {
	str := func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` } // n bytes of JSON text
	num := func(n int) string { return strings.Repeat("7", n) }
	cases := []struct {
		name  string
		lim   Limits
		id    string
		ok    bool
		reqID bool // a request (else a response)
	}{
		{"string at the default limit", Limits{}, str(DefaultMaxIDBytes), true, true},
		{"string one over the default limit", Limits{}, str(DefaultMaxIDBytes + 1), false, true},
		{"integer at the default limit", Limits{}, num(DefaultMaxIDBytes), true, true},
		{"integer one over the default limit", Limits{}, num(DefaultMaxIDBytes + 1), false, true},
		{"escapes count as received", Limits{}, `"` + strings.Repeat(`\u0041`, 43) + `"`, false, true}, // 260 bytes, 43 letters
		{"A issue-11 1 MiB id", Limits{MaxBytes: 2 << 20}, str(1 << 20), false, true},
		{"configured limit", Limits{MaxIDBytes: 8}, str(8), true, true},
		{"configured limit, one over", Limits{MaxIDBytes: 8}, str(9), false, true},
		{"configured limit above the default", Limits{MaxIDBytes: 1024}, str(1000), true, true},
		{"response id over the limit", Limits{MaxIDBytes: 8}, num(9), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := env + `"id":` + tc.id + `,"method":"ping"}`
			if !tc.reqID {
				body = env + `"id":` + tc.id + `,"result":{}}`
			}
			m, err := tc.lim.Decode([]byte(body))
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, tc.id, m.ID.Raw())
				return
			}
			require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Contains(t, e.reason, "id too long")
			assert.True(t, m.ID.IsZero(), "not echoed")
			out := AppendError(nil, m.ID, e)
			assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`, string(out))

			items, err := tc.lim.DecodeBatch([]byte(`[` + body + `,` + env + `"id":1,"method":"ping"}]`))
			require.NoError(t, err, "per element")
			require.Len(t, items, 2)
			assert.ErrorIs(t, items[0].Err, &Error{Code: CodeInvalidRequest})
			assert.True(t, items[0].Message.ID.IsZero())
			assert.NoError(t, items[1].Err)
		})
	}
	// The limit holds whatever else is wrong: a long id is never echoed.
	m, err := Decode([]byte(`{"jsonrpc":"1.0","id":`+str(300)+`,"method":"ping"}`), 0)
	require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
	assert.True(t, m.ID.IsZero())
	m, err = Decode([]byte(env+`"id":`+str(300)+`,"method":"m","params":{"a":1,"a":2}}`), 0)
	require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
	assert.True(t, m.ID.IsZero())
}

func TestLimitsMaxBytes(t *testing.T) {
	body := []byte(env + `"id":1,"method":"ping"}`)
	n := int64(len(body))
	_, err := Limits{MaxBytes: n}.Decode(body)
	assert.NoError(t, err, "exactly at the limit")
	_, err = Limits{MaxBytes: n - 1}.Decode(body)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, n-1, tl.Limit)
	_, err = Limits{MaxBytes: n + 1}.DecodeBatch(append(append([]byte("["), body...), ']'))
	require.ErrorAs(t, err, &tl, "the whole batch counts")
}

func TestLimitsMaxBatch(t *testing.T) {
	one := env + `"id":1,"method":"ping"}`
	batch := func(n int) []byte { return []byte("[" + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + "]") }
	items, err := Limits{MaxBatch: 3}.DecodeBatch(batch(3))
	require.NoError(t, err)
	assert.Len(t, items, 3)
	_, err = Limits{MaxBatch: 3}.DecodeBatch(batch(4))
	require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
	items, err = Limits{MaxBatch: 200}.DecodeBatch(batch(150))
	require.NoError(t, err)
	assert.Len(t, items, 150)
	_, err = Limits{}.DecodeBatch(batch(MaxBatch + 1))
	require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
	// Too many elements, but not JSON: still a parse error.
	_, err = Limits{MaxBatch: 3}.DecodeBatch(append(batch(4)[:len(batch(4))-1], ','))
	require.ErrorIs(t, err, &Error{Code: CodeParseError})
}

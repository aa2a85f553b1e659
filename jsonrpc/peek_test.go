package jsonrpc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peekAgrees checks that Peek reports what Decode decoded.
func peekAgrees(t testing.TB, in []byte, m Message) {
	t.Helper()
	p := Peek(in)
	assert.False(t, p.Batch)
	assert.Equal(t, m.Kind, p.Kind, "kind")
	assert.Equal(t, m.Method, p.Method, "method")
	assert.Equal(t, m.ID, p.ID, "id")
}

func TestPeekAgreesWithDecode(t *testing.T) {
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), 0)
			require.NoError(t, err)
			peekAgrees(t, []byte(tc.in), m)
		})
	}
}

func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Peeked
	}{
		{"request", env + `"id":1,"method":"resources/read","params":{"uri":"x"}}`, Peeked{Kind: KindRequest, Method: "resources/read", ID: Int64ID(1)}},
		{"notification", env + `"method":"notifications/initialized"}`, Peeked{Kind: KindNotification, Method: "notifications/initialized"}},
		{"response", env + `"id":"a","result":{}}`, Peeked{Kind: KindResponse, ID: StringID("a")}},
		{"error response with null id", env + `"id":null,"error":{"code":1,"message":"x"}}`, Peeked{Kind: KindResponse}},
		{"batch", ` [{"jsonrpc":"2.0","id":1,"method":"ping"}]`, Peeked{Batch: true}},
		{"method not a string", env + `"id":1,"method":5}`, Peeked{}},
		{"empty method", env + `"id":1,"method":""}`, Peeked{}},
		{"request with null id", env + `"id":null,"method":"ping"}`, Peeked{}},
		{"nothing", `{}`, Peeked{}},
		{"not JSON", `garbage`, Peeked{}},
		{"empty", ``, Peeked{}},
		// Peek does not validate: these are answers Decode would refuse.
		{"no validation: fraction id", env + `"id":1.0,"method":"ping"}`, Peeked{Kind: KindRequest, Method: "ping", ID: ID{raw: "1.0"}}},
		{"no validation: A27 duplicate method (first wins)", env + `"id":1,"method":"ping","method":"x"}`, Peeked{Kind: KindRequest, Method: "ping", ID: Int64ID(1)}},
		{"no validation: truncated", env + `"id":1,"method":"ping"`, Peeked{Kind: KindRequest, Method: "ping", ID: Int64ID(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Peek([]byte(tc.in)))
		})
	}
}

func TestPeekAllocations(t *testing.T) {
	in := []byte(env + `"id":42,"method":"resources/list","params":{"cursor":"abc"}}`)
	allocs := testing.AllocsPerRun(100, func() { _ = Peek(in) })
	assert.LessOrEqual(t, allocs, 2.0, "copies of the method and id text only")
}

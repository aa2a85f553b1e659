package jsonrpc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

func TestJSONHelpers(t *testing.T) {
	assert.Equal(t, `x"a\"b<\u2028"`, string(jsonrpc.AppendString([]byte("x"), "a\"b<\u2028")))

	var names []string
	require.NoError(t, jsonrpc.Members([]byte(`{"a":1,"b":"two","c":{}}`), func(name string, value []byte) bool {
		names = append(names, name+"="+string(value))
		return name != "b"
	}))
	assert.Equal(t, []string{"a=1", `b="two"`}, names)
	for _, bad := range []string{`[]`, `{"a":1,"a":2}`, `{"a":1,"A":2}`, "{\"\xff\":1}", `{`} {
		err := jsonrpc.Members([]byte(bad), func(string, []byte) bool { return true })
		assert.ErrorIs(t, err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}, bad)
	}

	s, ok := jsonrpc.String([]byte(`"h\u00e9"`))
	assert.True(t, ok)
	assert.Equal(t, "hé", s)
	_, ok = jsonrpc.String([]byte(`1`))
	assert.False(t, ok)
}

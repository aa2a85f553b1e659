package mcphttp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// JSONResult checks what it is given: a value that does not encode, or
// encodes to anything but a JSON object (an array, a string, null, text
// that is not JSON), is an error, answered by the table as an internal
// error; an object, a struct or a RawMessage holding one is the result.
func TestJSONResultChecks(t *testing.T) {
	values := map[string]any{
		"chan": make(chan int), "array": []int{1}, "string": "x", "nil": nil,
		"raw-array": json.RawMessage(`[1]`), "raw-broken": json.RawMessage(`{"a":`),
		"raw-twice": json.RawMessage(`{"a":1,"a":2}`),
		"ok-map":    map[string]int{"a": 1}, "ok-struct": struct{ A int }{1}, "ok-raw": json.RawMessage(` {"a":1} `),
		"ok-empty": struct{}{}, "ok-raw-empty": json.RawMessage("{ \n}"), "ok-raw-spaced": json.RawMessage(`{ "a" : 1 }`),
	}
	errs := map[string]error{}
	part := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		for name, v := range values {
			s.Handle("test/"+name, func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
				res, err := mcphttp.JSONResult(req, v, mcphttp.CacheNone)
				errs[name] = err
				return res, err
			}, mcphttp.MethodOptions{})
		}
		return nil
	})
	f := mcptest.New(t, mcptest.Options{}, part)
	for name := range values {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "test/"+name, nil)})
		require.Equal(t, 200, w.Code, w.Body.String())
		rpc := mcptest.Decode(t, w)
		if name[:3] == "ok-" {
			assert.NoError(t, errs[name], name)
			require.Nil(t, rpc.Error, name)
			assert.Equal(t, byte('{'), rpc.Result[0], name)
			// 2026-07-28: the era's members follow the result's own,
			// and the whole is valid JSON.
			body, headers := mcptest.Modern(2, "test/"+name, nil)
			w := f.Do(t, mcptest.Request{Body: body, Headers: headers})
			require.Equal(t, 200, w.Code, w.Body.String())
			require.True(t, json.Valid(w.Body.Bytes()), "%s: %s", name, w.Body.String())
			assert.Contains(t, w.Body.String(), `"resultType":"complete"`, name)
			continue
		}
		assert.Error(t, errs[name], name)
		require.NotNil(t, rpc.Error, name)
		assert.Equal(t, int64(-32603), rpc.Error.Code, name)
	}
}

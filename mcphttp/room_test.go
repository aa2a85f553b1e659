package mcphttp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// TestCallRoom: a JSONResult whose object takes exactly Request.Room
// bytes makes a response of exactly the byte limit, in both eras, for
// short and long ids, with and without the caching hints; one byte more
// is an internal error (logged), never a response over the limit.
func TestCallRoom(t *testing.T) {
	const limit = 40 << 10
	for _, cache := range []mcphttp.Cache{mcphttp.CachePrivate, mcphttp.CacheNone} {
		fill := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
			s.Handle("test/fill", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				room := c.Room(cache)
				return mcphttp.JSONResult(c, map[string]string{"text": strings.Repeat("x", room-len(`{"text":""}`))}, cache)
			}, mcphttp.MethodOptions{})
			s.Handle("test/over", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				room := c.Room(cache)
				return mcphttp.JSONResult(c, map[string]string{"text": strings.Repeat("x", room+1-len(`{"text":""}`))}, cache)
			}, mcphttp.MethodOptions{})
			return nil
		})
		f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.MaxResultBytes = limit }}, fill)
		for _, id := range []int{1, 123456789} {
			body, hdr := mcptest.Modern(id, "test/fill", nil)
			w := f.Do(t, mcptest.Request{Body: body, Headers: hdr})
			require.Equal(t, 200, w.Code, w.Body.String())
			assert.Equal(t, limit, w.Body.Len(), "modern, id %d", id)
			require.Nil(t, mcptest.Decode(t, w).Error)

			w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(id, "test/fill", nil), Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
			require.Equal(t, 200, w.Code, w.Body.String())
			assert.Equal(t, limit, w.Body.Len(), "legacy, id %d", id)
			require.Nil(t, mcptest.Decode(t, w).Error)

			body, hdr = mcptest.Modern(id, "test/over", nil)
			w = f.Do(t, mcptest.Request{Body: body, Headers: hdr})
			require.Equal(t, 200, w.Code, w.Body.String())
			require.NotNil(t, mcptest.Decode(t, w).Error, "one byte over the room")
			assert.Equal(t, int64(-32603), mcptest.Decode(t, w).Error.Code)
		}
	}
}

package seam_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// The kit's parts answer through Calls.Result (their pre-encoded
// members) and note sessions through Calls.WithSession: the endpoint adds
// the braces, the era's members and the envelope, as JSONResult does; and
// anything but a Request the endpoint made gets nothing.
func TestCalls(t *testing.T) {
	var inner *mcphttp.Request
	part := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Handle("test/raw", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			if in, ok := seam.CallsOf().WithSession(req, "s-1", true).(*mcphttp.Request); ok {
				inner = in
			}
			res, ok := seam.ResultOf[mcphttp.Result](req, []byte(`"n":1`), true)
			require.True(t, ok)
			return res, nil
		}, mcphttp.MethodOptions{})
		s.Handle("test/typed", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			return mcphttp.JSONResult(req, map[string]int{"n": 1}, mcphttp.CachePrivate)
		}, mcphttp.MethodOptions{})
		return nil
	})
	rec := &sessionSeen{}
	f := mcptest.New(t, mcptest.Options{}, part, mcphttp.Observe(rec))
	for _, method := range []string{"test/raw", "test/typed"} {
		body, hdr := mcptest.Modern(1, method, nil)
		w := f.Do(t, mcptest.Request{Body: body, Headers: hdr})
		require.Equal(t, 200, w.Code, w.Body.String())
		res := mcptest.Decode(t, w).Result
		assert.JSONEq(t, `{"n":1,"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture","version":"1.0.0"}}}`, string(res), method)

		w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, method, nil), Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
		require.Equal(t, 200, w.Code, w.Body.String())
		assert.JSONEq(t, `{"n":1}`, string(mcptest.Decode(t, w).Result), method)
	}
	require.NotNil(t, inner)
	assert.Equal(t, "s-1", inner.SessionID, "the handlers inside see the session")
	assert.Equal(t, "s-1", rec.last, "observers too")

	calls := seam.CallsOf()
	for _, v := range []any{nil, "a request", (*mcphttp.Request)(nil), &mcphttp.Request{}} {
		assert.Nil(t, calls.Result(v, []byte(`"n":1`), true), "%#v", v)
	}
	for _, v := range []any{nil, "a request", (*mcphttp.Request)(nil)} {
		assert.Nil(t, calls.WithSession(v, "s", true), "%#v", v)
	}
}

// sessionSeen is an Observer that keeps the last session it was told.
type sessionSeen struct{ last string }

func (o *sessionSeen) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (o *sessionSeen) End(_ context.Context, c mcphttp.Call) {
	if c.SessionID != "" {
		o.last = c.SessionID
	}
}

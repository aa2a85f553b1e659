package intercept_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// methodsSeen is an observer that records the methods it saw end.
type methodsSeen struct {
	mu      sync.Mutex
	methods []string
}

func (o *methodsSeen) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (o *methodsSeen) End(_ context.Context, c mcphttp.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.methods = append(o.methods, c.Method)
}

func (o *methodsSeen) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.methods...)
}

// The endpoint's parts see what the endpoint serves, and nothing it
// forwards: rate limits and observers behind Intercept.
func TestPartsSeeOnlyWhatTheEndpointServes(t *testing.T) {
	lim, err := ratelimit.New(ratelimit.Limits{
		Read:  ratelimit.Rate{PerSecond: 0.001, Burst: 1},
		List:  ratelimit.Rate{PerSecond: 0.001, Burst: 1},
		Other: ratelimit.Rate{PerSecond: 0.001, Burst: 1},
	})
	require.NoError(t, err)
	obs := &methodsSeen{}
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }},
		lim.Part(), mcphttp.Observe(obs), bridge{})
	legacy := &toolServer{tools: []string{"echo"}}
	h, err := intercept.New(f.EP, legacy, intercept.Options{Logger: quiet})
	require.NoError(t, err)
	post := func(body string) int {
		w := serve(h, withPrincipal(t, request(body, map[string]string{"MCP-Protocol-Version": "2025-11-25"}), alice))
		return w.Code
	}

	// legacy's tool calls are never limited nor observed (Other has a burst of one).
	for range 3 {
		assert.Equal(t, http.StatusOK, post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
	}
	assert.Equal(t, int64(3), legacy.calls.Load())
	// The endpoint's reads are.
	assert.Equal(t, http.StatusOK, post(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text"}}`))
	assert.Equal(t, http.StatusTooManyRequests, post(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://static-text"}}`))

	// The endpoint's half of a merged tools/list is limited as a list: once
	// over the limit, the answer holds legacy's tools alone.
	w := serve(h, withPrincipal(t, request(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, nil), alice))
	assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
	w = serve(h, withPrincipal(t, request(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, nil), alice))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, []string{"echo"}, toolNames(t, w))

	assert.Equal(t, []string{"resources/read", "resources/read", "tools/list", "tools/list"}, obs.seen(),
		"observed: the endpoint's calls, nothing forwarded")
}

package intercept_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// countingThrottle admits every refusal and counts those recorded.
type countingThrottle struct{ refused atomic.Int64 }

func (c *countingThrottle) Admit(*http.Request) (bool, time.Duration) { return true, 0 }
func (c *countingThrottle) Refused(*http.Request)                     { c.refused.Add(1) }

// A forged token is checked once per request through intercept: the
// handler authenticates (to read the body under the caller's share), and
// the endpoint answers the refusal it found instead of checking the token
// again. So N forged tokens charge the refused-credentials limit (the
// Authenticator's Throttle) N refusals, not 2N (one client's limit spent
// twice as fast), for a call the endpoint owns, a batch split between the
// two handlers, and a merged tools/list. Before, each cost two or three.
func TestForgedTokenThroughInterceptCountsOnce(t *testing.T) {
	throttle := &countingThrottle{}
	f := mcptest.New(t, mcptest.Options{Throttle: throttle}, bridge{})
	h, err := intercept.New(f.EP, &toolServer{tools: []string{"echo"}}, intercept.Options{Logger: quiet})
	require.NoError(t, err)
	alice := f.Token(t, "alice")
	forged := alice[:len(alice)-4] + "AAAA" // a real kid, a signature that fails
	const n = 7
	for name, tc := range map[string]struct {
		body string
		code int
	}{
		"own":        {`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, http.StatusUnauthorized},
		"batch":      {`[{"jsonrpc":"2.0","id":1,"method":"resources/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, http.StatusUnauthorized},
		"tools/list": {`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, http.StatusUnauthorized}, // never reaches legacy
		"legacy's":   {`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, http.StatusUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			before := throttle.refused.Load()
			for range n {
				w := serve(h, request(tc.body, map[string]string{"Authorization": "Bearer " + forged, "MCP-Protocol-Version": "2025-11-25"}))
				require.Equal(t, tc.code, w.Code, w.Body.String())
			}
			assert.Equal(t, int64(n), throttle.refused.Load()-before, "one refusal per request")
		})
	}
	// A valid token is served and charges nothing.
	before := throttle.refused.Load()
	w := serve(h, request(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, map[string]string{"Authorization": "Bearer " + alice, "MCP-Protocol-Version": "2025-11-25"}))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, before, throttle.refused.Load())
}

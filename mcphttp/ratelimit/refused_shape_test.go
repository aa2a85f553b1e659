package ratelimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// rateLimitedAnswer is the rate-limit error of the MCP draft (SEP-3304).
type rateLimitedAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    struct {
			RetryAfterMs int64 `json:"retryAfterMs"`
		} `json:"data"`
	} `json:"error"`
}

// The endpoint answers an address over its refused-credentials limit
// (the Authenticator's Throttle) as it answers a caller over its rate:
// HTTP 429 with Retry-After and a JSON-RPC error -32023 with
// data.retryAfterMs (SEP-3304), not the Authenticator's plain
// {"error":"too_many_requests"}. The id is null when the body was never
// read (the refusal comes first), the request's when observers had it
// read; a client reads both 429s alike.
func TestRefusedCredentialsAnswerInTheRateLimitShape(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, observed := range []bool{false, true} {
		t.Run("observed="+strconv.FormatBool(observed), func(t *testing.T) {
			limiter := newLimiter(t, ratelimit.Limits{
				Refused: ratelimit.Rate{PerSecond: 0.5, Burst: 2},
				Read:    ratelimit.Rate{PerSecond: 0.5, Burst: 1},
				Now:     func() time.Time { return now },
			})
			parts := []mcphttp.Part{limiter.Part()}
			if observed {
				parts = append(parts, mcphttp.Observe(noopObserver{}))
			}
			f := mcptest.New(t, mcptest.Options{Throttle: limiter}, parts...)
			token := f.Token(t, "alice")
			forged := token[:strings.LastIndexByte(token, '.')+1] + "AAAA"
			send := func(addr, token, method string, params map[string]any) *httptest.ResponseRecorder {
				return f.Do(t, mcptest.Request{Body: mcptest.Legacy(7, method, params), Token: token, RemoteAddr: addr})
			}
			for range 2 {
				require.Equal(t, http.StatusUnauthorized, send("203.0.113.9:1", forged, "resources/list", nil).Code)
			}
			refused := send("203.0.113.9:1", forged, "resources/list", nil)
			require.Equal(t, http.StatusTooManyRequests, refused.Code, refused.Body.String())

			uri := "docs://documents/alice-0001"
			require.Equal(t, http.StatusOK, send("198.51.100.1:1", token, "resources/read", map[string]any{"uri": uri}).Code)
			limited := send("198.51.100.1:1", token, "resources/read", map[string]any{"uri": uri})
			require.Equal(t, http.StatusTooManyRequests, limited.Code, limited.Body.String())

			for name, w := range map[string]*httptest.ResponseRecorder{"refused credentials": refused, "rate limit": limited} {
				assert.Equal(t, "2", w.Header().Get("Retry-After"), name)
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"), name)
				var a rateLimitedAnswer
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a), "%s: %s", name, w.Body.String())
				assert.Equal(t, "2.0", a.JSONRPC, name)
				assert.EqualValues(t, ratelimit.CodeRateLimited, a.Error.Code, name)
				assert.Equal(t, "Rate limit exceeded", a.Error.Message, name)
				assert.Equal(t, int64(2000), a.Error.Data.RetryAfterMs, name)
			}
			assert.Equal(t, "no-store", refused.Header().Get("Cache-Control"))
			assert.Equal(t, "7", string(mustID(t, limited)))
			if observed {
				assert.Equal(t, "7", string(mustID(t, refused)), "the body was read for the observers")
			} else {
				assert.Equal(t, "null", string(mustID(t, refused)), "refused before the body was read")
			}
		})
	}
}

// noopObserver observes nothing: with an observer, a refused body is
// read to name its calls.
type noopObserver struct{}

func (noopObserver) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (noopObserver) End(context.Context, mcphttp.Call)                         {}

func mustID(t *testing.T, w *httptest.ResponseRecorder) json.RawMessage {
	t.Helper()
	var a rateLimitedAnswer
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
	return a.ID
}

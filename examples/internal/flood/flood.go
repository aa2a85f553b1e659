// Package flood sends many MCP calls at once from one caller, for the
// examples' tests of the rate limits, and sorts the answers: served,
// refused in the rate limits' shape, anything else. It is linked into
// tests only.
package flood

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// Counts sorts a flood's answers.
type Counts struct {
	Served  int64 // 200
	Limited int64 // 429 in the rate limits' shape
	// Other: a failed request, another status, or a 429 without
	// Retry-After in whole seconds (at least 1), the JSON-RPC error
	// ratelimit.CodeRateLimited or a positive data.retryAfterMs.
	Other int64
}

// Start starts posting body, a 2025-11-25 call, to url with token as a
// bearer token, calls times, from inFlight goroutines at once, with
// client; the flood is under way when it returns. wait waits for its end.
func Start(client *http.Client, url, token, body string, calls, inFlight int) (wait func() Counts) {
	var served, limited, other, next atomic.Int64
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for next.Add(1) <= int64(calls) {
				switch answer(client, url, token, body) {
				case http.StatusOK:
					served.Add(1)
				case http.StatusTooManyRequests:
					limited.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	return func() Counts {
		wg.Wait()
		return Counts{Served: served.Load(), Limited: limited.Load(), Other: other.Load()}
	}
}

// answer sends one call and returns its status: 200, 429 for a refusal in
// the rate limits' shape, 0 for anything else.
func answer(client *http.Client, url, token, body string) int {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
		return http.StatusOK
	case http.StatusTooManyRequests:
		if rateLimited(res, b) {
			return http.StatusTooManyRequests
		}
	}
	return 0
}

// rateLimited reports a 429 in the rate limits' shape: Retry-After in
// whole seconds, at least 1, and the JSON-RPC error CodeRateLimited with
// a positive data.retryAfterMs.
func rateLimited(res *http.Response, body []byte) bool {
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 {
		return false
	}
	var e struct {
		Error struct {
			Code int64 `json:"code"`
			Data struct {
				RetryAfterMs int64 `json:"retryAfterMs"`
			} `json:"data"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Code == ratelimit.CodeRateLimited && e.Error.Data.RetryAfterMs > 0
}

package audit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// Attack (issue 19): a flood of forged tokens from one address. With the
// limiter as the Authenticator's Throttle, the address gets 401s for its
// burst and then 429s that cost no signature check, while a caller at
// another address is served; the audit trail holds a few records and the
// count of the rest, not one record per forged token.
func TestForgedTokenFloodIsThrottled(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	limiter, err := ratelimit.New(ratelimit.Limits{
		Refused: ratelimit.Rate{PerSecond: 1, Burst: 10},
		Now:     func() time.Time { return now },
	})
	require.NoError(t, err)
	var mu sync.Mutex
	var recs []audit.Record
	trail := audit.New(audit.Options{Record: func(_ context.Context, r audit.Record) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
	}})
	f := mcptest.New(t, mcptest.Options{Throttle: limiter}, mcphttp.Observe(trail), (limiter).Part())
	alice := f.Token(t, "alice")
	forged := alice[:len(alice)-4] + "AAAA" // a real kid, a signature that fails
	from := func(addr, token string) *httptest.ResponseRecorder {
		return f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: token, RemoteAddr: addr})
	}
	codes := map[int]int{}
	const flood = 3000
	for i := range flood {
		w := from("203.0.113.9:4000", forged)
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests {
			assert.NotEmpty(t, w.Header().Get("Retry-After"))
		}
		if i%500 == 0 {
			// Meanwhile alice, at her own address, is served.
			assert.Equal(t, http.StatusOK, from("198.51.100.1:5000", alice).Code)
		}
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: flood - 10}, codes,
		"got %v: the burst of refusals, then 429", codes)
	// A garbage token from the throttled address is refused at once too.
	assert.Equal(t, http.StatusTooManyRequests, from("203.0.113.9:4001", "garbage").Code)
	// The address refills: a second later one more check is allowed.
	now = now.Add(time.Second)
	assert.Equal(t, http.StatusUnauthorized, from("203.0.113.9:4000", forged).Code)

	trail.Flush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	refusals, ok := 0, 0
	for _, r := range recs {
		switch r.Outcome {
		case mcphttp.OutcomeOK:
			ok += r.Count
		case mcphttp.OutcomeUnauthenticated, mcphttp.OutcomeRateLimited:
			refusals += r.Count
			assert.Equal(t, "203.0.113.9", r.Remote)
			assert.Empty(t, r.Subject)
		}
	}
	assert.Equal(t, flood+2, refusals, "every refusal is counted")
	assert.Equal(t, flood/500, ok, "every successful call is recorded, one by one")
	assert.LessOrEqual(t, len(recs), flood/500+4, "got %d records for %d refusals", len(recs), flood+2)
}

// Refusals are recorded one at a time again after the interval, and a
// refusal of another address, method or outcome has a record of its own.
func TestAuditAggregatesRefusalsPerInterval(t *testing.T) {
	var log auditLog
	trail := audit.New(audit.Options{Logger: log.logger(), RefusalInterval: 50 * time.Millisecond})
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(trail))
	anon := func(addr, method string) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(mcptest.Legacy(1, method, nil)))
		r.RemoteAddr = addr
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer forged")
		f.EP.ServeHTTP(httptest.NewRecorder(), r)
	}
	for range 20 {
		anon("192.0.2.1:1", "resources/list")
		anon("192.0.2.1:2", "resources/templates/list")
		anon("192.0.2.2:1", "resources/list")
	}
	recs := log.records(t)
	require.Len(t, recs, 3, "one record per address and method")
	for _, r := range recs {
		assert.Equal(t, "unauthenticated", r["outcome"])
		assert.NotContains(t, r, "count")
	}
	time.Sleep(60 * time.Millisecond) // the interval ends
	anon("192.0.2.1:1", "resources/list")
	recs = log.records(t)
	require.Len(t, recs, 4, "three summaries, then the first refusal of the new interval")
	total := 0
	for _, r := range recs[:3] {
		total += int(r["count"].(float64))
	}
	assert.Equal(t, 3*19, total)
	assert.NotContains(t, recs[3], "count")
}

// Behind a reverse proxy every request's RemoteAddr is the proxy's. With
// Options.ClientAddr (the trusted proxies' client, as the rate limits key
// on) the refusals of two clients behind the proxy are recorded and
// aggregated as theirs, not as one client at the proxy's address; a
// header from a client that is not a trusted proxy is not believed.
// Before, every refusal through the proxy was the proxy's (10 counted as
// 10.0.0.1).
func TestAuditRefusalsKeyOnTheClientBehindTrustedProxies(t *testing.T) {
	proxies, err := ratelimit.NewTrustedProxies("10.0.0.1/32", "")
	require.NoError(t, err)
	var log auditLog
	trail := audit.New(audit.Options{Logger: log.logger(), ClientAddr: proxies.ClientAddr})
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(trail))
	send := func(peer, forwarded string) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(mcptest.Legacy(1, "resources/list", nil)))
		r.RemoteAddr = peer
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer forged")
		r.Header.Set("X-Forwarded-For", forwarded)
		w := httptest.NewRecorder()
		f.EP.ServeHTTP(w, r)
		require.Equal(t, http.StatusUnauthorized, w.Code)
	}
	for range 5 {
		send("10.0.0.1:40000", "192.0.2.7")
		send("10.0.0.1:40001", "198.51.100.8")
		send("203.0.113.5:1", "192.0.2.7") // not a proxy: its header is not believed
	}
	trail.Flush(context.Background())
	counts := map[string]int{}
	for _, r := range log.records(t) {
		require.Equal(t, "unauthenticated", r["outcome"])
		n := 1
		if c, ok := r["count"]; ok {
			n = int(c.(float64))
		}
		counts[r["remote"].(string)] += n
	}
	assert.Equal(t, map[string]int{"192.0.2.7": 5, "198.51.100.8": 5, "203.0.113.5": 5}, counts)
}

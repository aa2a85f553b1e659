package mcphttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// Attack (issue 19): a flood of forged tokens from one address. With the
// limiter as the Authenticator's Throttle, the address gets 401s for its
// burst and then 429s that cost no signature check, while a caller at
// another address is served; the audit trail holds a few records and the
// count of the rest, not one record per forged token.
func TestForgedTokenFloodIsThrottled(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	limiter, err := mcphttp.NewRateLimiter(mcphttp.RateLimits{
		Refused: mcphttp.Rate{PerSecond: 1, Burst: 10},
		Now:     func() time.Time { return now },
	})
	require.NoError(t, err)
	var mu sync.Mutex
	var recs []mcphttp.AuditRecord
	audit := mcphttp.NewAudit(mcphttp.AuditOptions{Record: func(_ context.Context, r mcphttp.AuditRecord) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
	}})
	f := newFixture(t, fixtureOptions{observer: audit, limiter: limiter, throttle: limiter})
	alice := f.token(t, "alice")
	forged := alice[:len(alice)-4] + "AAAA" // a real kid, a signature that fails
	from := func(addr, token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(legacy(1, "resources/list", nil)))
		r.RemoteAddr = addr
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		f.ep.ServeHTTP(w, r)
		return w
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

	audit.Flush(context.Background())
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
	audit := mcphttp.NewAudit(mcphttp.AuditOptions{Logger: log.logger(), RefusalInterval: 50 * time.Millisecond})
	f := newFixture(t, fixtureOptions{observer: audit})
	anon := func(addr, method string) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(legacy(1, method, nil)))
		r.RemoteAddr = addr
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer forged")
		f.ep.ServeHTTP(httptest.NewRecorder(), r)
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

// Attack (issue 19): hundreds of anonymous connections declare the
// largest body and send it a byte at a time. Memory follows the bytes
// received: a few KiB per connection, not the 4 MiB each declares (which
// took the documents server to 1.26 GB with 300 of them), and an honest
// caller is answered meanwhile.
func TestSlowBodiesDeclaringTheMaximumHoldLittleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	f := newFixture(t, fixtureOptions{})
	srv := httptest.NewServer(f.ep)
	defer srv.Close()
	alice := f.token(t, "alice")

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	idle := heap()
	const conns = 1000
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n",
		srv.Listener.Addr(), mcphttp.DefaultMaxBodyBytes)
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"x":"`
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err, "connection %d", i)
		open = append(open, c)
		_, err = io.WriteString(c, head+body[:len(body)-i%10])
		require.NoError(t, err)
	}
	// Every connection is being read: one more byte each.
	for _, c := range open {
		_, _ = io.WriteString(c, "y")
	}
	time.Sleep(200 * time.Millisecond)

	// An honest caller is served meanwhile.
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(legacy(1, "resources/list", nil)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	held := heap()
	grown := int64(held) - int64(idle)
	t.Logf("%d connections declaring %d bytes each: heap %d KiB above idle (%d B a connection)",
		conns, mcphttp.DefaultMaxBodyBytes, grown>>10, grown/conns)
	assert.Less(t, grown, int64(64<<20), "heap grew by %d MiB", grown>>20)

	// They are still being read, not refused: the server waits for bodies
	// until its read deadline.
	c := open[0]
	require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err = bufio.NewReader(c).ReadByte()
	var ne net.Error
	assert.ErrorAs(t, err, &ne, "no answer yet")
}

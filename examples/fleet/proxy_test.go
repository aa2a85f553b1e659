package fleet

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgedThroughProxy (issue 27): one client (connecting from 127.0.0.2)
// sends forged tokens through HAProxy, which appends its address to
// X-Forwarded-For, while alice (127.0.0.1, with her token) and an anonymous caller
// (127.0.0.3) ping through it. The instances trust HAProxy
// (-trusted-proxies 127.0.0.1/32), so the refused-credentials limit,
// shared by the fleet in Redis, throttles the forger's address alone:
// every honest call is served (before: every client had HAProxy's
// address, and 5 of 40 of alice's calls succeeded).
func forgedThroughProxy(t *testing.T, f *fleet, alice string) {
	forger, anon := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	forged := alice[:strings.LastIndexByte(alice, '.')+1] + "AAAA" // a bad signature
	codes := map[int]int{}
	aliceOK, anonOK := 0, 0
	const n = 40
	for range n {
		codes[status(t, forger, f.resource, forged, "resources/list")]++
		if status(t, http.DefaultClient, f.resource, alice, "ping") == http.StatusOK { // ping: her list budget is the fleet test's (-rate-list)
			aliceOK++
		}
		if status(t, anon, f.resource, "", "ping") == http.StatusOK {
			anonOK++
		}
	}
	t.Logf("forger: %v; alice served %d of %d, an anonymous caller %d of %d", codes, aliceOK, n, anonOK, n)
	assert.Equal(t, n, aliceOK, "alice is served")
	assert.Equal(t, n, anonOK, "the anonymous caller is served")
	assert.Positive(t, codes[http.StatusTooManyRequests], "the forger is throttled: %v", codes)
	assert.LessOrEqual(t, codes[http.StatusUnauthorized], 25, "about the burst of -rate-refused (20) refused fleet-wide: %v", codes)
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address addr.
func clientFrom(addr string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) { return d.DialContext(ctx, network, a) },
	}}
}

// status sends one 2025-11-25 request and returns the HTTP status.
func status(t *testing.T, c *http.Client, endpoint, token, method string) int {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

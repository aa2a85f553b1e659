package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Attack (issue 27): behind a proxy every client has the proxy's address,
// so one client's forged tokens locked the others out. With
// -trusted-proxies naming the proxy (here the test itself, at 127.0.0.1),
// the refused-credentials limit keys on the client the proxy vouches for
// in X-Forwarded-For: the forger is throttled, another client behind the
// same proxy is not, and a client that forges X-Forwarded-For itself
// cannot pick another's bucket. Without the flag the header is ignored.
func TestTrustedProxiesKeyLimitsOnTheClient(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		s := start(t, func(c *Config) {
			c.RateRefused = DefaultRateRefused
			if trusted {
				c.TrustedProxies = "127.0.0.1/32,10.0.0.0/8"
			}
		})
		alice := s.token(t, "alice")
		forged := alice[:len(alice)-4] + "AAAA"
		status := func(token, xff string) int {
			res := s.rpc(t, token, "", rpcBody(t, 1, "resources/list", nil), map[string]string{"X-Forwarded-For": xff, "MCP-Protocol-Version": "2025-11-25"})
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res.StatusCode
		}
		codes := map[int]int{}
		for range 30 {
			codes[status(forged, "203.0.113.7")]++
		}
		assert.Equal(t, map[int]int{http.StatusUnauthorized: 20, http.StatusTooManyRequests: 10}, codes, "the forger, trusted %v", trusted)
		other := status(forged, "203.0.113.8")
		spoofed := status(forged, "203.0.113.8, 203.0.113.7") // the client wrote the first entry
		if trusted {
			assert.Equal(t, http.StatusUnauthorized, other, "another client's token is checked")
			assert.Equal(t, http.StatusTooManyRequests, spoofed, "naming another client changes nothing")
		} else {
			assert.Equal(t, http.StatusTooManyRequests, other, "without -trusted-proxies the header is ignored")
		}
	}
}

func TestTrustedProxiesFlags(t *testing.T) {
	c, _, err := ParseFlags([]string{"-trusted-proxies", "127.0.0.1/32,10.0.0.0/8", "-proxy-header", "Forwarded"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1/32,10.0.0.0/8", c.TrustedProxies)
	assert.Equal(t, "Forwarded", c.ProxyHeader)
	c, _, err = ParseFlags(nil, func(k string) string { return map[string]string{"MCPKIT_TRUSTED_PROXIES": "::1"}[k] }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "::1", c.TrustedProxies)
	for _, tc := range []struct {
		cfg  Config
		flag string
	}{
		{Config{TrustedProxies: "proxy.internal"}, "trusted-proxies"},
		{Config{TrustedProxies: "10.0.0.1/8"}, "trusted-proxies"},
		{Config{TrustedProxies: "10.0.0.0/8", ProxyHeader: "X-Real-IP"}, "proxy-header"},
		{Config{ProxyHeader: "Forwarded"}, "proxy-header"},
	} {
		assert.Equal(t, []string{tc.flag}, flagsOf(tc.cfg.Validate()), "%+v", tc.cfg)
	}
	assert.NoError(t, Config{TrustedProxies: "127.0.0.1, fd00::/8", ProxyHeader: "forwarded"}.Validate())
}

// The endpoint's body limits charge an anonymous body to the client the
// trusted proxy vouches for, as the rate limits key on it.
func TestTrustedProxiesBodyLimits(t *testing.T) {
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	require.NoError(t, err)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("X-Forwarded-For", "203.0.113.7")
	l, err := (&App{cfg: Config{TrustedProxies: "127.0.0.1"}}).bodyLimits()
	require.NoError(t, err)
	require.NotNil(t, l.ClientAddr)
	assert.Equal(t, "203.0.113.7", l.ClientAddr(r).String())
	l, err = (&App{}).bodyLimits()
	require.NoError(t, err)
	assert.Nil(t, l.ClientAddr, "without -trusted-proxies: the remote address")
}

// The audit trail records and aggregates a refusal by the client the
// trusted proxy vouches for, as the limits key on it: two clients behind
// the proxy (here the test itself, at 127.0.0.1) are two remotes, not the
// proxy's one. Without -trusted-proxies every refusal is the proxy's.
func TestTrustedProxiesAuditRemote(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		var trail syncBuffer
		s := start(t, func(c *Config) {
			c.AuditWriter = &trail
			if trusted {
				c.TrustedProxies = "127.0.0.1/32"
			}
		})
		for _, client := range []string{"203.0.113.7", "203.0.113.8", "203.0.113.8"} {
			res := s.rpc(t, "forged", "", rpcBody(t, 1, "resources/list", nil), map[string]string{"X-Forwarded-For": client, "MCP-Protocol-Version": "2025-11-25"})
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		}
		require.NoError(t, s.app.Close()) // flushes the counted refusals
		counts := map[string]int{}
		for line := range strings.SplitSeq(strings.TrimSpace(trail.String()), "\n") {
			var rec struct {
				Outcome string `json:"outcome"`
				Remote  string `json:"remote"`
				Count   int    `json:"count"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
			if rec.Outcome == "unauthenticated" {
				counts[rec.Remote] += max(rec.Count, 1)
			}
		}
		if trusted {
			assert.Equal(t, map[string]int{"203.0.113.7": 1, "203.0.113.8": 2}, counts)
		} else {
			assert.Equal(t, map[string]int{"127.0.0.1": 3}, counts)
		}
	}
}

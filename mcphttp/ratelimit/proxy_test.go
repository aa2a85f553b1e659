package ratelimit_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

func mustProxies(t testing.TB, list, header string) *ratelimit.TrustedProxies {
	t.Helper()
	p, err := ratelimit.NewTrustedProxies(list, header)
	require.NoError(t, err)
	return p
}

func TestNewTrustedProxies(t *testing.T) {
	for _, ok := range []string{"", "127.0.0.1", "127.0.0.1/32, 10.0.0.0/8", "::1,fd00::/8", "::ffff:10.0.0.0/104", " 192.168.0.0/16 ,"} {
		_, err := ratelimit.NewTrustedProxies(ok, "")
		assert.NoError(t, err, "%q", ok)
	}
	for _, bad := range []string{"localhost", "10.0.0.1/8", "10.0.0.0/33", "fe80::1%eth0", "10.0.0.0/8;", "*", "10.0.0.0/8,proxy.internal"} {
		_, err := ratelimit.NewTrustedProxies(bad, "")
		assert.Error(t, err, "%q", bad)
	}
	_, err := ratelimit.NewTrustedProxies("10.0.0.0/8", "X-Real-IP")
	assert.Error(t, err, "only the two headers")
	p := mustProxies(t, "::ffff:10.0.0.0/104", "forwarded")
	assert.True(t, p.Trusted(netip.MustParseAddr("10.1.2.3")), "a 4-in-6 prefix is its IPv4 one")
	var none *ratelimit.TrustedProxies
	assert.False(t, none.Trusted(netip.MustParseAddr("127.0.0.1")))
}

// ClientAddr believes the header only from a trusted peer, and reads it
// from the right: the first address that is not a trusted proxy.
func TestClientAddr(t *testing.T) {
	xff := mustProxies(t, "127.0.0.1/32,10.0.0.0/8", ratelimit.HeaderXForwardedFor)
	fwd := mustProxies(t, "127.0.0.1/32,10.0.0.0/8", ratelimit.HeaderForwarded)
	for _, tc := range []struct {
		name    string
		p       *ratelimit.TrustedProxies
		remote  string
		headers []string // values of the proxies' header, one line each
		want    string
	}{
		{"no proxy, no header", xff, "203.0.113.7:5000", nil, "203.0.113.7"},
		// Attack: a client names an address of its choosing; from an
		// untrusted peer the header counts for nothing.
		{"spoofed from an untrusted peer", xff, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"spoofed Forwarded from an untrusted peer", fwd, "203.0.113.7:5000", []string{"for=198.51.100.1"}, "203.0.113.7"},
		{"through the proxy", xff, "127.0.0.1:40000", []string{"203.0.113.7"}, "203.0.113.7"},
		// Attack: the client sends its own X-Forwarded-For, which the proxy
		// appends to: the forged entries are left of the real one.
		{"forged prefix through the proxy", xff, "127.0.0.1:40000", []string{"198.51.100.1, 10.0.0.9, 203.0.113.7"}, "203.0.113.7"},
		{"forged line through the proxy", xff, "127.0.0.1:40000", []string{"198.51.100.1", "203.0.113.7"}, "203.0.113.7"},
		{"two trusted proxies", xff, "127.0.0.1:40000", []string{"203.0.113.7, 10.0.0.5"}, "203.0.113.7"},
		{"every hop trusted", xff, "127.0.0.1:40000", []string{"10.0.0.7, 10.0.0.5"}, "10.0.0.7"},
		{"proxy without a header", xff, "127.0.0.1:40000", nil, "127.0.0.1"},
		{"IPv6 client", xff, "127.0.0.1:40000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv6 client in brackets with a port", xff, "127.0.0.1:40000", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"IPv4 client with a port", xff, "127.0.0.1:40000", []string{"203.0.113.7:1234"}, "203.0.113.7"},
		{"4-in-6 client", xff, "127.0.0.1:40000", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"4-in-6 proxy", xff, "[::ffff:127.0.0.1]:40000", []string{"203.0.113.7"}, "203.0.113.7"},
		// Garbage where it must be read is keyed on the proxy; garbage
		// left of the real client is never read.
		{"garbage from the proxy", xff, "127.0.0.1:40000", []string{"not-an-ip"}, "127.0.0.1"},
		{"unknown", xff, "127.0.0.1:40000", []string{"unknown"}, "127.0.0.1"},
		{"empty entry", xff, "127.0.0.1:40000", []string{"203.0.113.7,"}, "127.0.0.1"},
		{"zone", xff, "127.0.0.1:40000", []string{"fe80::1%eth0"}, "127.0.0.1"},
		{"garbage left of the client", xff, "127.0.0.1:40000", []string{"<script>, 203.0.113.7"}, "203.0.113.7"},
		{"garbage behind a trusted hop", xff, "127.0.0.1:40000", []string{"junk, 10.0.0.5"}, "127.0.0.1"},
		{"Forwarded", fwd, "127.0.0.1:40000", []string{"for=203.0.113.7;proto=https"}, "203.0.113.7"},
		{"Forwarded, quoted IPv6 with a port", fwd, "127.0.0.1:40000", []string{`for="[2001:db8::1]:4711"`}, "2001:db8::1"},
		{"Forwarded, case and spaces", fwd, "127.0.0.1:40000", []string{`For=198.51.100.1, for=203.0.113.7 ; by=10.0.0.1`}, "203.0.113.7"},
		{"Forwarded, two proxies", fwd, "127.0.0.1:40000", []string{"for=203.0.113.7", "for=10.0.0.5"}, "203.0.113.7"},
		{"Forwarded, unquoted IPv6", fwd, "127.0.0.1:40000", []string{"for=2001:db8::1"}, "127.0.0.1"},
		{"Forwarded, obfuscated", fwd, "127.0.0.1:40000", []string{"for=_hidden"}, "127.0.0.1"},
		{"Forwarded, no for", fwd, "127.0.0.1:40000", []string{"proto=https"}, "127.0.0.1"},
		{"Forwarded, two for", fwd, "127.0.0.1:40000", []string{"for=203.0.113.7;for=198.51.100.1"}, "127.0.0.1"},
		// Attack: with Forwarded configured, a client's X-Forwarded-For is
		// nobody's word, and the other way round.
		{"the other header is ignored", fwd, "127.0.0.1:40000", nil, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.RemoteAddr = tc.remote
			hdr := ratelimit.HeaderXForwardedFor
			if tc.p == fwd {
				hdr = ratelimit.HeaderForwarded
				r.Header.Set(ratelimit.HeaderXForwardedFor, "198.51.100.99")
			} else {
				r.Header.Set(ratelimit.HeaderForwarded, "for=198.51.100.99")
			}
			for _, v := range tc.headers {
				r.Header.Add(hdr, v)
			}
			assert.Equal(t, netip.MustParseAddr(tc.want), tc.p.ClientAddr(r))
		})
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "@unix"
	assert.False(t, xff.ClientAddr(r).IsValid(), "no address")
}

// FuzzClientAddr: whatever the header holds, ClientAddr does not panic
// and answers the same twice; from an untrusted peer it is the peer.
// From the trusted proxy: what a client writes left of the header cannot
// change an answer that is a client's (the entries it forges are read
// only through trusted hops), and a hop the proxy appends is the answer.
func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{"203.0.113.7", "198.51.100.1, 10.0.0.9, 203.0.113.7", "[2001:db8::1]:443", "unknown", ",,", "for=203.0.113.7;proto=https",
		`for="[2001:db8::1]:4711"`, `for="\"x"`, "for=_x, for=10.0.0.1", "::ffff:1.2.3.4", "1.2.3.4:99999", "[::1", "fe80::1%25x", "::01"} {
		f.Add(s, true, false)
		f.Add(s, true, true)
		f.Add(s, false, false)
	}
	xff := mustProxies(f, "127.0.0.1/32,10.0.0.0/8", ratelimit.HeaderXForwardedFor)
	fwd := mustProxies(f, "127.0.0.1/32,10.0.0.0/8", ratelimit.HeaderForwarded)
	f.Fuzz(func(t *testing.T, header string, trustedPeer, forwarded bool) {
		p, name, hop := xff, ratelimit.HeaderXForwardedFor, "198.51.100.1"
		if forwarded {
			p, name, hop = fwd, ratelimit.HeaderForwarded, "for=198.51.100.1"
		}
		req := func(h string) *http.Request {
			r := &http.Request{Header: http.Header{name: {h}}, RemoteAddr: "203.0.113.50:1"}
			if trustedPeer {
				r.RemoteAddr = "127.0.0.1:1"
			}
			return r
		}
		got := p.ClientAddr(req(header))
		assert.Equal(t, got, p.ClientAddr(req(header)))
		peer := netip.MustParseAddrPort(req("").RemoteAddr).Addr()
		if !trustedPeer {
			assert.Equal(t, peer, got)
			return
		}
		assert.True(t, got.IsValid() && got.Zone() == "" && !got.Is4In6(), "got %v", got)
		if got != peer && !p.Trusted(got) {
			assert.Equal(t, got, p.ClientAddr(req(hop+","+header)), "a forged prefix changed the client")
		}
		assert.Equal(t, netip.MustParseAddr("203.0.113.9"), p.ClientAddr(req(header+", "+strings.Replace(hop, "198.51.100.1", "203.0.113.9", 1))),
			"the hop the proxy appends")
	})
}

// The limiter keys anonymous callers and refused credentials on the
// client address the trusted proxy vouches for: two clients behind one
// proxy have buckets of their own.
func TestLimiterKeysOnTheClientBehindAProxy(t *testing.T) {
	proxies := mustProxies(t, "127.0.0.1", "")
	l := newLimiter(t, ratelimit.Limits{Refused: ratelimit.Rate{PerSecond: 0.001, Burst: 2}, Other: ratelimit.Rate{PerSecond: 0.001, Burst: 1},
		ClientAddr: proxies.ClientAddr})
	from := func(client string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("X-Forwarded-For", client)
		return r
	}
	l.Refused(from("203.0.113.7"))
	l.Refused(from("203.0.113.7"))
	ok, _ := l.Admit(from("203.0.113.7"))
	assert.False(t, ok, "the forger is throttled")
	ok, _ = l.Admit(from("203.0.113.8"))
	assert.True(t, ok, "another client behind the same proxy is not")
	ok, _ = l.Admit(from("198.51.100.1, 203.0.113.8"))
	assert.True(t, ok, "the forger cannot name the other client's address to throttle it")
	ok, _ = l.Admit(from("203.0.113.8, 203.0.113.7"))
	assert.False(t, ok, "nor escape its own bucket by naming another")

	ok, _ = l.Allow(from("203.0.113.7"), nil, "")
	assert.True(t, ok)
	ok, _ = l.Allow(from("203.0.113.7"), nil, "")
	assert.False(t, ok, "anonymous buckets by client")
	ok, _ = l.Allow(from("203.0.113.8"), nil, "")
	assert.True(t, ok)
}

// Attack (issue 27), over loopback through a real reverse proxy that
// appends X-Forwarded-For: one client (127.0.0.2) sends forged tokens and
// floods anonymous pings; honest callers at other addresses behind the
// same proxy (alice with her token at 127.0.0.3, an anonymous caller at
// 127.0.0.4) are all served meanwhile, and the forger is throttled.
// Without a trusted proxy every client has the proxy's address: the
// control run shows the honest callers paying for the forger.
func TestForgedTokensThroughAProxy(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		name := "trusted proxy"
		if !trusted {
			name = "no trusted proxy (control)"
		}
		t.Run(name, func(t *testing.T) {
			lim := ratelimit.Limits{Refused: ratelimit.Rate{PerSecond: 1, Burst: 20}, Other: ratelimit.Rate{PerSecond: 1, Burst: 30}}
			if trusted {
				lim.ClientAddr = mustProxies(t, "127.0.0.1", "").ClientAddr
			}
			limiter := newLimiter(t, lim)
			f := mcptest.New(t, mcptest.Options{Throttle: limiter}, limiter.Part())
			backend := httptest.NewServer(f.EP)
			defer backend.Close()
			target, err := url.Parse(backend.URL)
			require.NoError(t, err)
			proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target)) // appends X-Forwarded-For
			defer proxy.Close()

			forger, alice, anon := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3"), clientFrom(t, "127.0.0.4")
			token := f.Token(t, "alice")
			forged := token[:strings.LastIndexByte(token, '.')+1] + "AAAA" // a bad signature
			var forged429, aliceOK, anonOK, n int
			for i := range 40 {
				if post(t, forger, proxy.URL, "resources/list", forged) == http.StatusTooManyRequests {
					forged429++
				}
				post(t, forger, proxy.URL, "ping", "")
				if i%2 == 0 {
					continue
				}
				n++
				if post(t, alice, proxy.URL, "resources/list", token) == http.StatusOK {
					aliceOK++
				}
				if post(t, anon, proxy.URL, "ping", "") == http.StatusOK {
					anonOK++
				}
			}
			t.Logf("%s: forger throttled %d of 40; alice served %d of %d, an anonymous caller %d of %d", name, forged429, aliceOK, n, anonOK, n)
			if !trusted {
				assert.Less(t, aliceOK+anonOK, 2*n, "without a trusted proxy the honest callers pay for the forger")
				return
			}
			assert.Equal(t, 20, forged429, "the forger is throttled past its burst")
			assert.Equal(t, n, aliceOK, "alice is served")
			assert.Equal(t, n, anonOK, "the anonymous caller is served")
		})
	}
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address addr.
func clientFrom(t *testing.T, addr string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) { return d.DialContext(ctx, network, a) }}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// post sends one legacy request and returns the status.
func post(t *testing.T, c *http.Client, u, method, token string) int {
	t.Helper()
	resp, err := c.Do(mcptest.NewLegacyRequest(t, u, method, token))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

package devissuer

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documentHost serves client ID metadata documents over TLS on loopback
// (httptest's certificate, trusted by the server under test).
type documentHost struct {
	srv     *httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	routes  map[string]http.HandlerFunc
}

func startDocumentHost(t *testing.T) *documentHost {
	t.Helper()
	d := &documentHost{routes: map[string]http.HandlerFunc{}}
	d.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.fetches.Add(1)
		d.mu.Lock()
		h := d.routes[r.URL.Path]
		d.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	d.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused certificate's handshake errors
	d.srv.StartTLS()
	t.Cleanup(d.srv.Close)
	return d
}

func (d *documentHost) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(d.srv.Certificate())
	return p
}

// serve answers path with h; the client id is d.srv.URL + path.
func (d *documentHost) serve(path string, h http.HandlerFunc) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.routes[path] = h
	return d.srv.URL + path
}

// document serves a valid metadata document at path, with changes.
func (d *documentHost) document(path string, change func(m map[string]any)) string {
	id := d.srv.URL + path
	m := map[string]any{
		"client_id": id, "client_name": "Document client", "redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
	}
	if change != nil {
		change(m)
	}
	b, _ := json.Marshal(m)
	return d.serve(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// A client identified by its metadata document: fetched over TLS, shown
// with its host, signed in, its token's client_id is the URL; the
// document is cached.
func TestClientMetadataDocument(t *testing.T) {
	d := startDocumentHost(t)
	h := newHarness(t, func(o *ServerOptions) { o.ClientMetadataRoots = d.roots() })
	id := d.document("/oauth/client.json", nil)
	verifier, challenge := pkce()
	b := h.browser()
	p := h.login(b, h.authQuery(id, challenge))
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, p.body, "Document client")
	assert.Contains(t, p.body, "as its metadata document at "+strings.TrimPrefix(d.srv.URL, "https://")+" says")
	status, tok := h.exchange(codeForm(id, h.approve(b, p, "alice").Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	pr, _, err := h.verifier.Verify(context.Background(), tok["access_token"].(string))
	require.NoError(t, err)
	assert.Equal(t, id, pr.ClientID)
	assert.Equal(t, "alice", pr.Subject)
	h.signIn(id, "bob")
	assert.EqualValues(t, 1, d.fetches.Load(), "fetched once, then cached")
}

// Documents that are huge, slow, redirected, from private addresses, or
// do not describe the client correctly: each refused with an error page,
// nothing sent to any redirect URI, no sign-in started, no document
// cached.
func TestClientMetadataDocumentAttacks(t *testing.T) {
	d := startDocumentHost(t)
	h := newHarness(t, func(o *ServerOptions) {
		o.ClientMetadataRoots = d.roots()
		o.ClientMetadataTimeout = 300 * time.Millisecond // the slow document waits this long
	})
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	valid := d.document("/valid.json", nil)
	for _, tc := range []struct {
		name string
		id   string
	}{
		{"huge", d.serve("/huge.json", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"client_id":"` + d.srv.URL + `/huge.json","redirect_uris":["http://127.0.0.1/callback"],"x":"` + strings.Repeat("x", MaxClientMetadataBytes) + `"}`))
		})},
		{"huge, without Content-Length", d.serve("/chunked.json", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for range 100 {
				_, _ = w.Write([]byte(strings.Repeat(" ", 1024)))
				w.(http.Flusher).Flush()
			}
		})},
		{"slow", d.serve("/slow.json", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		})},
		{"slow body", d.serve("/slow-body.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"client_id":`))
			w.(http.Flusher).Flush()
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		})},
		{"redirect to a valid document", d.serve("/moved.json", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/valid.json", http.StatusFound)
		})},
		{"404", d.srv.URL + "/missing.json"},
		{"not JSON", d.serve("/html.json", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`{"client_id":"` + d.srv.URL + `/html.json","redirect_uris":["http://127.0.0.1/callback"]}`))
		})},
		{"names another client_id", d.document("/other.json", func(m map[string]any) { m["client_id"] = valid })},
		{"names no client_id", d.document("/anonymous.json", func(m map[string]any) { delete(m, "client_id") })},
		{"has a client secret", d.document("/secret.json", func(m map[string]any) { m["client_secret"] = "s" })},
		{"client_secret_post", d.document("/post.json", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_post" })},
		{"redirect_uris missing", d.document("/nouris.json", func(m map[string]any) { delete(m, "redirect_uris") })},
		{"a javascript: redirect URI", d.document("/js.json", func(m map[string]any) { m["redirect_uris"] = []string{"javascript:alert(1)"} })},
		{"duplicate members", d.serve("/dup.json", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"client_id":"` + d.srv.URL + `/dup.json","redirect_uris":["https://evil.example/cb"],"redirect_uris":["http://127.0.0.1/callback"]}`))
		})},
		{"an untrusted certificate", "https://localhost:" + strings.Split(d.srv.URL, ":")[2] + "/valid.json"}, // the certificate names 127.0.0.1 and example.com
		// Refused before anything is sent: addresses of RFC 6890's special-use blocks.
		{"a private IPv4 address", "https://10.0.0.5/client.json"},
		{"a private IPv4 address with a port", "https://192.168.1.1:8443/client.json"},
		{"the link-local metadata address", "https://169.254.169.254/latest/meta-data"},
		{"a unique local IPv6 address", "https://[fd00::1]/client.json"},
		{"an IPv4-mapped private address", "https://[::ffff:10.0.0.1]/client.json"},
		{"the unspecified address", "https://0.0.0.0/client.json"},
		{"a shared address (CGNAT)", "https://100.64.0.1/client.json"},
		{"a name resolving to a private address", "https://private.test/client.json"},
		{"a name resolving to public and private addresses", "https://mixed.test/client.json"},
		// The URL rules.
		{"http on a public host", "http://client.example/client.json"},
		{"no path", d.srv.URL},
		{"the root path", d.srv.URL + "/"},
		{"a dot segment", d.srv.URL + "/a/../valid.json"},
		{"an encoded dot segment", d.srv.URL + "/a/%2e%2e/valid.json"},
		{"a query", d.srv.URL + "/valid.json?x=1"},
		{"userinfo", strings.Replace(d.srv.URL, "https://", "https://user@", 1) + "/valid.json"},
		{"too long", d.srv.URL + "/" + strings.Repeat("a", maxClientIDLen)},
		{"another scheme", "ftp://127.0.0.1/client.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := h.authQuery(tc.id, "")
			_, challenge := pkce()
			q.Set("code_challenge", challenge)
			p := h.login(h.browser(), q)
			assert.Contains(t, []int{400, 503}, p.status, p.body)
			assert.Empty(t, p.header.Get("Location"), "nothing goes to the document's redirect URIs")
			assert.Empty(t, p.request, "no login form")
			assertNotFramable(t, p.header)
		})
	}
	assert.Zero(t, h.s.pending.Len())
	assert.Zero(t, h.s.docs.cache.Len(), "no failure cached")
	// The lookups above resolved through the test's resolver only.
	assert.Equal(t, []string{"mixed.test", "private.test"}, h.names.names())
}

type nameLog struct {
	mu sync.Mutex
	n  []string
}

func (l *nameLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n = append(l.n, s)
}

func (l *nameLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string(nil), l.n...)
	for i := 1; i < len(out); i++ { // sorted, for the comparison
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// testLookup resolves the test's names without DNS, recording them in
// log: private.test to a private address, mixed.test to a public and a
// private one, anything else not at all; localhost to loopback.
func testLookup(log *nameLog) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		return lookupIn(log, host)
	}
}

func lookupIn(log *nameLog, host string) ([]netip.Addr, error) {
	switch host {
	case "private.test":
		log.add(host)
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "mixed.test":
		log.add(host)
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("192.168.0.7")}, nil
	case "localhost":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("no such host")
}

// The development rules for loopback: a document on a loopback host is
// fetched (the draft allows it when the authorization server runs on
// loopback, as a development server always does), over https or, for a
// client on the same machine without a certificate, http.
func TestClientMetadataDocumentLoopback(t *testing.T) {
	plain := httptest.NewServer(nil)
	t.Cleanup(plain.Close)
	var id string
	plain.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": []string{"http://127.0.0.1/callback"}})
	})
	h := newHarness(t, nil)
	for _, host := range []string{plain.URL, strings.Replace(plain.URL, "127.0.0.1", "localhost", 1)} {
		id = host + "/client.json"
		p := h.login(h.browser(), h.authQuery(id, mustChallenge()))
		assert.Equal(t, http.StatusOK, p.status, "%s: %s", id, p.body)
		assert.NotEmpty(t, p.request)
	}
}

func mustChallenge() string {
	_, c := pkce()
	return c
}

// The fetches in flight are bounded: past the bound, an authorization
// request waits for nothing and is answered 503.
func TestClientMetadataDocumentConcurrency(t *testing.T) {
	d := startDocumentHost(t)
	release := make(chan struct{})
	var inFlight sync.WaitGroup
	h := newHarness(t, func(o *ServerOptions) { o.ClientMetadataRoots = d.roots() })
	held := 0
	var done sync.WaitGroup
	// hold starts n authorization requests from ip, each naming a document
	// whose fetch waits for release, and waits until they are all fetching.
	hold := func(ip string, n int) {
		inFlight.Add(n)
		for range n {
			held++
			id := d.serve(fmt.Sprintf("/held%d.json", held), func(w http.ResponseWriter, r *http.Request) {
				inFlight.Done()
				select {
				case <-release:
				case <-r.Context().Done():
				}
				http.NotFound(w, r)
			})
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := clientFrom(ip).Get(h.url + "/dev/authorize?" + h.authQuery(id, mustChallenge()).Encode())
				if err == nil {
					resp.Body.Close()
				}
			}()
		}
		inFlight.Wait()
	}
	free := 0
	status := func(ip string) int {
		free++
		resp, err := clientFrom(ip).Get(h.url + "/dev/authorize?" + h.authQuery(d.document(fmt.Sprintf("/free%d.json", free), nil), mustChallenge()).Encode())
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	// One address's slow documents take its share of the slots only.
	hold("127.0.0.1", fetchesPerAddress)
	assert.Equal(t, http.StatusServiceUnavailable, status("127.0.0.1"), "the address has its share in flight")
	// Two addresses take the shared slots (issue 35: before, every slot),
	// and the reserve still serves an address with nothing in flight.
	hold("127.0.0.2", clientMetadataFetches-fetchReserve-fetchesPerAddress)
	assert.Equal(t, http.StatusServiceUnavailable, status("127.0.0.2"), "only the reserve is left, and the address holds slots")
	assert.Equal(t, http.StatusOK, status("127.0.0.3"), "an address with nothing in flight is served from the reserve")
	// The reserve taken, one slot an address: nobody's fetch starts.
	for i := range fetchReserve {
		hold(fmt.Sprintf("127.0.0.%d", 10+i), 1)
	}
	assert.Equal(t, http.StatusServiceUnavailable, status("127.0.0.4"))
	close(release)
	done.Wait()
	assert.Equal(t, http.StatusOK, status("127.0.0.1"), "once the slots are free")
}

// clientFrom returns an HTTP client whose connections come from ip (any
// 127/8 address reaches a loopback server on Linux), for the per-address
// bounds.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func TestCacheLifetime(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"": defaultMetadataCache, "max-age=60": time.Minute, "public, max-age=999999999999": maxMetadataCache,
		"no-store": 0, "no-cache": 0, "max-age=-1": 0, "max-age=x": 0, `max-age="120"`: 2 * time.Minute,
	} {
		assert.Equal(t, want, cacheLifetime(cc), cc)
	}
}

func TestAllowedAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true,
		"93.184.215.14": true, "2606:4700::1111": true,
		"10.0.0.1": false, "172.16.0.1": false, "172.31.255.255": false, "192.168.0.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "224.0.0.1": false, "255.255.255.255": false, "192.0.2.1": false,
		"::": false, "fd00::1": false, "fe80::1": false, "ff02::1": false, "::ffff:10.0.0.1": false, "2001:db8::1": false,
		"64:ff9b::a00:1": false,
		// AS112 (issue 35): IPv4 and both IPv6 blocks, their ends, and
		// their neighbours.
		"192.31.196.1": false, "192.175.48.1": false, "2001:4:112::1": false, "2001:4:112:ffff:ffff:ffff:ffff:ffff": false,
		"2620:4f:8000::1": false, "2620:4f:8000:ffff:ffff:ffff:ffff:ffff": false, "2620:4f:8001::1": true, "2620:4f:7fff::1": true,
	} {
		assert.Equal(t, want, allowedAddr(netip.MustParseAddr(s)), s)
	}
	assert.False(t, allowedAddr(netip.MustParseAddr("fe80::1%eth0")), "zoned")
}

// A client ID URL names a host a fetch could resolve: DNS names of
// well-formed labels or IP literals; "." (the root), empty labels and
// hyphens at a label's edge are refused before anything is fetched.
func TestClientIDURLHost(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://app.example/c": true, "https://app.example./c": true, "https://a-b.example/c": true,
		"https://127.0.0.1/c": true, "http://localhost/c": true, "http://localhost./c": false, "https://xn--bcher-kva.example/c": true,
		"https://./c": false, "https://./0": false, "https://a..example/c": false, "https://-a.example/c": false,
		"https://a-.example/c": false, "https://a_b.example/c": false, "https://" + strings.Repeat("a", 64) + ".example/c": false,
	} {
		_, err := checkClientIDURL(raw)
		assert.Equal(t, ok, err == nil, raw)
	}
}

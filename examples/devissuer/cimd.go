package devissuer

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of a client ID metadata document fetch: the JWK Set fetch's time
// bound (authn.JWTOptions.FetchTimeout, 5 s, body included), the size the
// draft recommends (5 kilobytes; a JWK Set may be 1 MiB, a client's
// description is a few hundred bytes), no redirects (the draft: "MUST NOT
// automatically follow HTTP redirects").
const (
	DefaultClientMetadataTimeout = 5 * time.Second
	MaxClientMetadataBytes       = 5 << 10
	// clientMetadataFetches bounds the fetches in flight: a flood of
	// authorization requests naming slow documents waits for no more;
	// fetchesPerAddress, those of requests from one address; and
	// fetchReserve of them are kept for addresses with none in flight, so
	// that a few addresses cannot take every slot (it takes more than
	// clientMetadataFetches-fetchReserve+fetchReserve = 8 addresses
	// fetching slow documents at once, each fetch bounded by the timeout).
	clientMetadataFetches = 8
	fetchesPerAddress     = 2
	fetchReserve          = 4
	// Cache lifetimes of a fetched document: its max-age, at most
	// maxMetadataCache; defaultMetadataCache without one; never for
	// no-store or no-cache.
	defaultMetadataCache = 5 * time.Minute
	maxMetadataCache     = time.Hour
	maxCachedDocuments   = 256
)

// errClientID is a client_id that is no client ID metadata document URL
// this server fetches.
var errClientID = errors.New("devissuer: not a client ID metadata document URL")

// errFetch is any failure to get a usable metadata document: unreachable,
// refused address, slow, redirected, not 200, too large, not JSON, not a
// valid description of the client.
var errFetch = errors.New("devissuer: client ID metadata document unusable")

// errBusy: too many documents are being fetched right now.
var errBusy = errors.New("devissuer: too many client ID metadata documents being fetched")

// checkClientIDURL validates a client_id that is a URL before anything is
// fetched. The draft's rules: an https URL with a path, without dot
// segments, fragment, userinfo (and, here, without a query, which it
// advises against). The development exception: http is allowed for
// loopback hosts (127.0.0.1, [::1], localhost), as for redirect URIs; a
// client on the same machine can serve its document without a
// certificate. An IP literal must be an address the fetch may reach (see
// allowedAddr). At most maxClientIDLen characters: the id goes into
// tokens.
func checkClientIDURL(raw string) (*url.URL, error) {
	if len(raw) > maxClientIDLen || !printable(raw) || strings.ContainsAny(raw, "#?\\") {
		return nil, errClientID
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" || u.Host == "" || u.String() != raw {
		return nil, errClientID
	}
	if !clientIDScheme(u) || !clientIDPort(u.Port()) || !clientIDPath(u) || !clientIDHost(u.Hostname()) {
		return nil, errClientID
	}
	return u, nil
}

// clientIDScheme: https, or http on a loopback host.
func clientIDScheme(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && loopbackHost(u.Hostname())
}

// clientIDPort: none, or 1–65535 without a leading zero.
func clientIDPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535 && port[0] != '0'
}

// clientIDPath: a path other than "/", without dot segments (escaped ones
// included).
func clientIDPath(u *url.URL) bool {
	if u.Path == "" || u.Path == "/" {
		return false
	}
	for seg := range strings.SplitSeq(u.EscapedPath(), "/") {
		if d, err := url.PathUnescape(seg); err != nil || d == "." || d == ".." {
			return false
		}
	}
	return true
}

// clientIDHost: an IP literal the fetch may reach (see allowedAddr), or a
// DNS name.
func clientIDHost(host string) bool {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return allowedAddr(ip)
	}
	return dnsName(host)
}

// dnsName reports whether h is a DNS host name (RFC 1123 §2.1): labels of
// 1 to 63 letters, digits and hyphens, not starting or ending with a
// hyphen, at most 253 characters, one trailing dot allowed. "." and
// "a..b" are not names a fetch could resolve.
func dnsName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isClientIDURL reports whether a client_id is meant as a metadata
// document URL (and so never a registered client's id).
func isClientIDURL(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// specialUse are the special-use address blocks of RFC 6890 (and its
// updates) and multicast: a metadata document is never fetched from them,
// so that a client_id cannot make the server call into a private network
// (the draft's SSRF rule). Loopback is the exception (see allowedAddr).
var specialUse = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24",
		"192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4",
		"::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
		"2002::/16", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
		"2001:4:112::/48", "2620:4f:8000::/48", // AS112-v6 (RFC 7534, RFC 7535): whoever runs a node answers
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// allowedAddr reports whether a metadata document may be fetched from ip:
// a loopback address (the draft allows it when the authorization server
// itself runs on loopback, which a development server always does), or a
// global unicast address outside every special-use block. IPv4-mapped
// IPv6 addresses are judged as the IPv4 address they map; the other IPv6
// forms that embed an IPv4 address (IPv4-compatible ::/96, IPv4-translated
// ::ffff:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16,
// Teredo 2001::/32) are refused whatever they embed: they reach an IPv4
// host by a route the IPv4 checks would not see. A zone (fe80::1%eth0)
// is refused too.
func allowedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid() || ip.Zone() != "":
		return false
	case ip.IsLoopback():
		return true
	case !ip.IsGlobalUnicast() || ip.IsPrivate():
		// Unspecified, multicast, link-local, interface-local; RFC 1918
		// and fc00::/7.
		return false
	}
	for _, p := range specialUse {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// metadataFetcher fetches client ID metadata documents, bounded in time,
// size and concurrency, from allowed addresses only, and caches the
// valid ones.
type metadataFetcher struct {
	client   *http.Client
	timeout  time.Duration
	mu       sync.Mutex
	inFlight map[string]int // fetches per requesting address
	total    int
	cache    *memory[client]
	now      func() time.Time
	// lookup resolves a host name (net.DefaultResolver.LookupNetIP);
	// tests replace it, so that no name resolves to a private address for
	// real.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

func newMetadataFetcher(roots *x509.CertPool, timeout time.Duration, now func() time.Time) *metadataFetcher {
	f := &metadataFetcher{
		timeout: timeout, inFlight: make(map[string]int),
		cache: newMemory[client](maxCachedDocuments, now), now: now,
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
	}
	dialer := &net.Dialer{
		Timeout: timeout,
		// The last line of defence: whatever was resolved, the socket
		// connects to an allowed address or not at all.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !allowedAddr(ap.Addr()) {
				return errFetch
			}
			return nil
		},
	}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy: nil, // a proxy would hide the address actually reached
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return f.dial(ctx, dialer, network, addr)
			},
			TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 16 << 10,
			MaxIdleConns:           4,
			IdleConnTimeout:        30 * time.Second,
			DisableCompression:     true, // the size bound is on the bytes received
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

// dial resolves addr's host itself, refuses it unless every address is
// allowed, and connects to those addresses only: a name cannot resolve to
// a public address for the check and a private one for the connection.
func (f *metadataFetcher) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, errFetch
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = f.lookup(ctx, host); err != nil || len(ips) == 0 {
		return nil, errFetch
	}
	for _, ip := range ips {
		if !allowedAddr(ip) {
			return nil, errFetch
		}
	}
	var last error = errFetch
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// acquire takes one of the fetch slots for a request from addr: at most
// clientMetadataFetches in all, fetchesPerAddress for one address, and
// an address that has a fetch in flight only while fetchReserve slots
// stay free, so that slow documents named from a few addresses leave
// slots for others.
func (f *metadataFetcher) acquire(addr string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := f.inFlight[addr]
	switch {
	case held >= fetchesPerAddress, f.total >= clientMetadataFetches:
		return false
	case held > 0 && f.total >= clientMetadataFetches-fetchReserve:
		return false // the reserve is for addresses with nothing in flight
	}
	f.inFlight[addr]++
	f.total++
	return true
}

func (f *metadataFetcher) release(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total--
	if f.inFlight[addr]--; f.inFlight[addr] <= 0 {
		delete(f.inFlight, addr)
	}
}

// get returns the client a metadata document URL describes: from the
// cache, or fetched now for a request from addr.
func (f *metadataFetcher) get(ctx context.Context, id, addr string) (client, error) {
	u, err := checkClientIDURL(id)
	if err != nil {
		return client{}, err
	}
	if c, ok := f.cache.Get(id); ok {
		return c, nil
	}
	if !f.acquire(addr) {
		return client{}, errBusy
	}
	defer f.release(addr)
	c, ttl, err := f.fetch(ctx, u)
	if err != nil {
		return client{}, err
	}
	if ttl > 0 {
		f.cache.Put(id, c, f.now().Add(ttl))
	}
	return c, nil
}

// fetch GETs the document once and validates it.
func (f *metadataFetcher) fetch(ctx context.Context, u *url.URL) (client, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return client{}, 0, errFetch
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return client{}, 0, errFetch
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK { // redirects included: never followed
		return client{}, 0, errFetch
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return client{}, 0, errFetch
	}
	if resp.ContentLength > MaxClientMetadataBytes {
		return client{}, 0, errFetch
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(io.LimitReader(resp.Body, MaxClientMetadataBytes+1)); err != nil || body.Len() > MaxClientMetadataBytes {
		return client{}, 0, errFetch
	}
	obj, err := decodeObject(body.Bytes())
	if err != nil {
		return client{}, 0, errFetch
	}
	var docID string
	if member(obj, "client_id", &docID) != nil || docID != u.String() {
		return client{}, 0, errFetch // the draft: it must name itself, compared as strings
	}
	if _, ok := obj["client_secret_expires_at"]; ok {
		return client{}, 0, errFetch
	}
	c, err := parseClientMetadata(obj)
	if err != nil {
		return client{}, 0, fmt.Errorf("%w: %w", errFetch, err)
	}
	c.id, c.fromDocument = docID, true
	return c, cacheLifetime(resp.Header.Get("Cache-Control")), nil
}

// cacheLifetime reads the Cache-Control of a document: max-age (at most
// maxMetadataCache), 0 for no-store or no-cache, defaultMetadataCache
// without either.
func cacheLifetime(cc string) time.Duration {
	ttl := defaultMetadataCache
	for d := range strings.SplitSeq(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(d, "max-age="), `"`))
			if err != nil || n < 0 {
				return 0
			}
			ttl = time.Duration(min(n, int(maxMetadataCache/time.Second))) * time.Second
		}
	}
	return ttl
}

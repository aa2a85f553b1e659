package ratelimit

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
)

// The client-address headers a trusted proxy may set.
const (
	// HeaderXForwardedFor is X-Forwarded-For: a comma-separated list of
	// addresses, each proxy appending the address of its peer (HAProxy's
	// "option forwardfor", nginx's $proxy_add_x_forwarded_for).
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is RFC 7239's Forwarded: comma-separated elements,
	// each proxy appending one whose for= parameter is its peer.
	HeaderForwarded = "Forwarded"
)

// TrustedProxies names the reverse proxies whose word on a request's
// client address is taken, and the one header they put it in. Limits
// must key on the real client: behind a proxy every request has the
// proxy's remote address, so per-address limits (anonymous callers'
// buckets, refused credentials) would make one client's flood everyone's.
// Trusted proxies are configured, never guessed: from any other peer the
// header is ignored, so that a client cannot name an address of its
// choosing. The zero value and a nil *TrustedProxies trust no proxy. It
// is immutable and safe for concurrent use.
type TrustedProxies struct {
	prefixes []netip.Prefix
	header   string // canonical: HeaderXForwardedFor or HeaderForwarded
}

// NewTrustedProxies returns the proxies named by list, a comma-separated
// list of IP addresses and CIDR prefixes ("127.0.0.1/32,10.0.0.0/8",
// "::1, fd00::/8"), which put the client's address in header
// (HeaderXForwardedFor or HeaderForwarded; "" means X-Forwarded-For).
// An empty list trusts no proxy. It returns an error for anything else:
// an entry that is not an address or prefix (a host name, a zone), a
// prefix with host bits set, another header.
func NewTrustedProxies(list, header string) (*TrustedProxies, error) {
	t := &TrustedProxies{header: http.CanonicalHeaderKey(header)}
	switch t.header {
	case "":
		t.header = HeaderXForwardedFor
	case HeaderXForwardedFor, HeaderForwarded:
	default:
		return nil, errors.New("ratelimit: the proxy header must be X-Forwarded-For or Forwarded")
	}
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parsePrefix(s)
		if err != nil {
			return nil, err
		}
		t.prefixes = append(t.prefixes, p)
	}
	return t, nil
}

// parsePrefix reads an address (a prefix of its full length) or a CIDR
// prefix without host bits set.
func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, errors.New("ratelimit: a trusted proxy must be an IP address or a CIDR prefix")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("ratelimit: a trusted proxy must be an IP address or a CIDR prefix")
	}
	if p.Masked() != p {
		return netip.Prefix{}, errors.New("ratelimit: a trusted proxy prefix must not have host bits set")
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 { // ::ffff:10.0.0.0/104 is 10.0.0.0/8
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p, nil
}

// Trusted reports whether a is the address of a trusted proxy.
func (t *TrustedProxies) Trusted(a netip.Addr) bool {
	if t == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr returns the address of r's client. When r's peer (its
// RemoteAddr) is a trusted proxy, that is the rightmost address of the
// proxies' header that is not itself a trusted proxy: each proxy appends
// the address it saw, so the entries right of the first untrusted one
// were written by trusted proxies and the ones left of it by the client,
// who may write anything. When every entry is trusted, it is the leftmost.
// Otherwise, or when the header is absent or holds anything but an
// address where it must be read (an obfuscated or "unknown" node, a
// malformed entry), it is the peer's address: a client's header is never
// believed, and garbage from a proxy is keyed on that proxy. The result
// is invalid only when RemoteAddr is not an address (a Unix socket, a
// test).
func (t *TrustedProxies) ClientAddr(r *http.Request) netip.Addr {
	peer := remoteAddr(r.RemoteAddr)
	if !t.Trusted(peer) {
		return peer
	}
	vals := r.Header[t.header]
	if len(vals) == 0 {
		return peer
	}
	client := peer
	// Right to left over the entries of every line of the header, the
	// later lines after the earlier ones.
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for {
			j := strings.LastIndexByte(v, ',')
			entry := v[j+1:]
			var a netip.Addr
			var ok bool
			if t.header == HeaderForwarded {
				a, ok = parseForwardedFor(entry)
			} else {
				a, ok = parseNode(strings.Trim(entry, " \t"))
			}
			if !ok {
				return peer // garbage where it must be read
			}
			client = a
			if !t.Trusted(a) {
				return a
			}
			if j < 0 {
				break
			}
			v = v[:j]
		}
	}
	return client // every hop a trusted proxy: the farthest one
}

// remoteAddr parses a RemoteAddr (host:port); the zero Addr when it is
// not one.
func remoteAddr(s string) netip.Addr {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap().WithZone("")
}

// parseNode reads a node as X-Forwarded-For and Forwarded's for= write
// it: an IPv4 address, with an optional port; an IPv6 address, bare or in
// brackets, then with an optional port. No zone, nothing else.
func parseNode(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 || !validPort(s[end+1:], true) {
			return netip.Addr{}, false
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	if strings.Count(s, ":") == 1 { // IPv4:port
		host, port, _ := strings.Cut(s, ":")
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is4() || !validPort(":"+port, false) {
			return netip.Addr{}, false
		}
		return a, true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// validPort reports whether s is empty (when that is allowed) or ":"
// and 1–5 digits.
func validPort(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	if s[0] != ':' || len(s) < 2 || len(s) > 6 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseForwardedFor reads the for= parameter of one Forwarded element
// (RFC 7239 §4: pairs separated by ";", a value a token or a quoted
// string). An element without exactly one for=, or whose node is not an
// address, is not read.
func parseForwardedFor(elem string) (netip.Addr, bool) {
	var node string
	found := false
	for pair := range strings.SplitSeq(elem, ";") {
		name, value, ok := strings.Cut(strings.Trim(pair, " \t"), "=")
		if !ok || name == "" {
			return netip.Addr{}, false
		}
		if !strings.EqualFold(name, "for") {
			continue
		}
		if found {
			return netip.Addr{}, false // two for= in one element
		}
		found = true
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
			if strings.ContainsAny(value, "\"\\") {
				return netip.Addr{}, false // escapes: never in an address
			}
		} else if strings.ContainsAny(value, "\"[]:") {
			return netip.Addr{}, false // RFC 7239 §6: an IPv6 node or a port must be quoted
		}
		node = value
	}
	if !found {
		return netip.Addr{}, false
	}
	if node != "" && node[0] != '[' && strings.Contains(node, ":") && strings.Count(node, ":") != 1 {
		return netip.Addr{}, false // RFC 7239 §6: IPv6 in brackets
	}
	return parseNode(node)
}

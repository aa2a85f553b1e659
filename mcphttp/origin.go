package mcphttp

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// originPolicy decides whether a request may reach the endpoint, as a
// defence against cross-origin requests from browsers and DNS rebinding.
type originPolicy struct {
	allowed map[string]bool // normalised "scheme://host[:port]"
}

func newOriginPolicy(origins []string) (originPolicy, error) {
	p := originPolicy{allowed: make(map[string]bool, len(origins))}
	for _, o := range origins {
		n, ok := normaliseOrigin(o)
		if !ok {
			return p, fmt.Errorf("mcphttp: allowed origin %q is not scheme://host[:port]", o)
		}
		p.allowed[n] = true
	}
	return p, nil
}

// normaliseOrigin lower-cases an origin and checks its shape:
// "http" or "https", "://", and a host with an optional port — no path,
// query, fragment or userinfo (so also not the opaque origin "null").
func normaliseOrigin(o string) (string, bool) {
	scheme, host, ok := strings.Cut(o, "://")
	if !ok || host == "" || strings.ContainsAny(host, "/?#@\\ ") {
		return "", false
	}
	if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return "", false
	}
	if h, port, err := net.SplitHostPort(host); err == nil {
		if h == "" || !allDigits(port) {
			return "", false
		}
	} else if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "", false
	}
	if hasUpper(o) {
		o = strings.ToLower(o)
	}
	return o, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// check reports whether r may proceed:
//   - an Origin header that is present must be allowed, or be the request's
//     own origin (its host equals the Host header);
//   - a request that arrived on a loopback address must name a loopback
//     host (localhost, 127.0.0.0/8, ::1) in its Host header: a DNS-rebound
//     request from a browser names the attacker's host instead.
func (p originPolicy) check(r *http.Request) bool {
	if arrivedOnLoopback(r) && !isLoopbackHost(r.Host) {
		return false
	}
	origins := r.Header.Values("Origin")
	switch len(origins) {
	case 0:
		return true // not a browser, or a same-origin GET; nothing to check
	case 1:
	default:
		return false
	}
	origin := origins[0]
	n, ok := normaliseOrigin(origin)
	if !ok {
		return false // includes the opaque "null" origin
	}
	if p.allowed[n] {
		return true
	}
	host := n[strings.Index(n, "://")+3:]
	return strings.EqualFold(host, r.Host)
}

// arrivedOnLoopback reports whether the server side of r's connection is a
// loopback address.
func arrivedOnLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// isLoopbackHost reports whether a Host header names the loopback interface.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

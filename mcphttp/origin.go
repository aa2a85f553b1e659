package mcphttp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ErrForbiddenOrigin is the error of [OriginGuard.Check] for a request it
// refuses: HTTP 403.
var ErrForbiddenOrigin = errors.New("mcphttp: forbidden origin")

// OriginGuard decides whether a request may reach the MCP endpoint (or any
// handler behind it, such as an application's REST API): the defence
// against cross-origin requests from browsers and against DNS rebinding.
// Check is the decision and Handler the glue, like the standard library's
// http.CrossOriginProtection. The zero value is not usable; make one with
// [NewOriginGuard]. It is safe for concurrent use.
type OriginGuard struct {
	allowed map[string]bool // normalised "scheme://host[:port]"
}

// NewOriginGuard returns a guard that admits cross-origin requests from
// the given browser origins ("https://app.example.com"); each must be
// scheme://host[:port] with scheme http or https. Nil or empty admits no
// cross-origin request at all: closed, never "*".
func NewOriginGuard(allowed []string) (*OriginGuard, error) {
	g := &OriginGuard{allowed: make(map[string]bool, len(allowed))}
	for _, o := range allowed {
		n, ok := normaliseOrigin(o)
		if !ok {
			return nil, fmt.Errorf("mcphttp: allowed origin %q is not scheme://host[:port]", o)
		}
		g.allowed[n] = true
	}
	return g, nil
}

// Check returns nil when r may proceed and [ErrForbiddenOrigin] when it
// must be refused:
//   - an Origin header that is present must be one of the allowed origins,
//     or be the request's own origin (its host equals the Host header);
//     two Origin headers, a malformed one and the opaque "null" are refused;
//   - a request that arrived on a loopback address must name a loopback
//     host (localhost, 127.0.0.0/8, ::1) in its Host header: a DNS-rebound
//     request from a browser names the attacker's host instead.
func (g *OriginGuard) Check(r *http.Request) error {
	if !g.check(r) {
		return ErrForbiddenOrigin
	}
	return nil
}

// Handler returns next guarded by Check: a refused request gets 403 with a
// JSON-RPC error body (no id) and never reaches next. For the allowed
// origins it also speaks CORS: it answers their preflight requests (204
// with Access-Control-Allow-Origin, -Methods, -Headers for the headers MCP
// clients send, and -Max-Age) and adds Access-Control-Allow-Origin and
// -Expose-Headers (Mcp-Session-Id, WWW-Authenticate, Retry-After) to their
// responses, with Origin appended to Vary; a preflight from any other
// origin gets 403 and no CORS header ever names one. The method value
// g.Handler mounts with chi's and gorilla's Use.
func (g *OriginGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			writeTransportError(w, err)
			return
		}
		if g.serveCORS(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
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

// check reports whether r may proceed (see Check).
func (g *OriginGuard) check(r *http.Request) bool {
	if arrivedOnLoopback(r) && !isLoopbackHost(r.Host) {
		return false
	}
	origins := r.Header["Origin"] // canonical key: Values without canonicalizing
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
	if g.allowed[n] {
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
	ip, err := netip.ParseAddr(host) // as net.ParseIP, without allocating; no zones
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

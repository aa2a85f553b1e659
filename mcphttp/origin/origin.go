package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ErrForbidden is the error of [Guard.Check] for a request it refuses:
// HTTP 403.
var ErrForbidden = errors.New("origin: forbidden origin")

// Guard decides whether a request may reach the MCP endpoint (or any
// handler behind it, such as an application's REST API): the defence
// against cross-origin requests from browsers and against DNS rebinding.
// Check is the decision and Handler the glue, like the standard library's
// http.CrossOriginProtection. The zero value, and a nil *Guard, are
// closed: they allow no cross-origin request ([Closed]). It is safe for
// concurrent use.
type Guard struct {
	allowed map[string]bool // normalised "scheme://host[:port]"
}

// New returns a guard that admits cross-origin requests from
// the given browser origins ("https://app.example.com"); each must be
// scheme://host[:port] with scheme http or https. Nil or empty admits no
// cross-origin request at all: closed, never "*".
func New(allowed []string) (*Guard, error) {
	g := &Guard{allowed: make(map[string]bool, len(allowed))}
	for _, o := range allowed {
		n, ok := normaliseOrigin(o)
		if !ok {
			return nil, fmt.Errorf("origin: allowed origin %q is not scheme://host[:port]", o)
		}
		g.allowed[n] = true
	}
	return g, nil
}

// Check returns nil when r may proceed and [ErrForbidden] when it
// must be refused:
//   - an Origin header that is present must be one of the allowed origins,
//     or be the request's own origin (its host equals the Host header);
//     two Origin headers, a malformed one and the opaque "null" are refused;
//   - a request that arrived on a loopback address must name a loopback
//     host (localhost, 127.0.0.0/8, ::1) in its Host header: a DNS-rebound
//     request from a browser names the attacker's host instead.
func (g *Guard) Check(r *http.Request) error {
	if !g.check(r) {
		return ErrForbidden
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
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			writeForbidden(w)
			return
		}
		if g.ServeCORS(w, r) {
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
func (g *Guard) check(r *http.Request) bool {
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
	if g != nil && g.allowed[n] {
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

// CORS for the allowed origins: a browser MCP client on one of
// the guard's allowed origins may call the endpoint with a bearer token; no
// other origin ever gets an Access-Control-Allow-Origin. Credentials
// (cookies) are not involved: tokens travel in Authorization, so
// Access-Control-Allow-Credentials is never sent.

const (
	// corsAllowHeaders are the request headers MCP clients send.
	// DPoP carries the proof of a DPoP request (RFC 9449).
	corsAllowHeaders = "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, DPoP"
	// corsExposeHeaders are the response headers a browser client must
	// read; DPoP-Nonce is the server nonce of RFC 9449 §9.
	corsExposeHeaders = "Mcp-Session-Id, WWW-Authenticate, Retry-After, DPoP-Nonce"
	corsAllowMethods  = "GET, POST, PUT, PATCH, DELETE"
	corsMaxAge        = "600"
)

// crossOrigin returns the normalised Origin of r when it is an allowed
// origin other than r's own ("" otherwise). Call it after check.
func (g *Guard) crossOrigin(r *http.Request) string {
	origins := r.Header["Origin"] // canonical key: Values without canonicalizing
	if len(origins) != 1 {
		return ""
	}
	n, ok := normaliseOrigin(origins[0])
	if !ok || g == nil || !g.allowed[n] {
		return ""
	}
	if host := n[strings.Index(n, "://")+3:]; strings.EqualFold(host, r.Host) {
		return "" // same origin: no CORS needed
	}
	return origins[0]
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// ServeCORS handles CORS for a request that passed Check: it answers a
// preflight from an allowed origin itself (204, done true) and adds the
// CORS headers to the response of an actual cross-origin request from one.
// A preflight from any other origin gets 403 (done true).
func (g *Guard) ServeCORS(w http.ResponseWriter, r *http.Request) (done bool) {
	origin := g.crossOrigin(r)
	h := w.Header()
	if isPreflight(r) {
		httpheader.AppendVary(h, "Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers")
		if origin == "" {
			writeForbidden(w)
			return true
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", corsAllowMethods)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		httpheader.AppendVary(h, "Origin")
	}
	return false
}

// Closed returns a guard that allows no cross-origin request: the one an
// endpoint uses when it is given none.
func Closed() *Guard { return &Guard{allowed: map[string]bool{}} }

// writeForbidden answers a refused request: 403 with a JSON-RPC error
// body without id.
func writeForbidden(w http.ResponseWriter) {
	jsonrpc.WriteHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Forbidden origin"))
}

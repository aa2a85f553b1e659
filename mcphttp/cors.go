package mcphttp

import (
	"net/http"
	"strings"
)

// CORS for the allowed origins: a browser MCP client on one of
// Options.AllowedOrigins may call the endpoint with a bearer token; no
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
func (g *OriginGuard) crossOrigin(r *http.Request) string {
	origins := r.Header["Origin"] // canonical key: Values without canonicalizing
	if len(origins) != 1 {
		return ""
	}
	n, ok := normaliseOrigin(origins[0])
	if !ok || !g.allowed[n] {
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

// serveCORS handles CORS for a request that passed check: it answers a
// preflight from an allowed origin itself (204, done true) and adds the
// CORS headers to the response of an actual cross-origin request from one.
// A preflight from any other origin gets 403.
func (g *OriginGuard) serveCORS(w http.ResponseWriter, r *http.Request) (done bool) {
	origin := g.crossOrigin(r)
	h := w.Header()
	if isPreflight(r) {
		appendVary(h, "Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers")
		if origin == "" {
			writeTransportError(w, errForbiddenOrigin)
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
		appendVary(h, "Origin")
	}
	return false
}

// appendVary adds each name to Vary unless it is listed already (or Vary
// is "*"), keeping what an outer handler set and sharing no value with
// another response.
func appendVary(h http.Header, names ...string) {
	vary := h["Vary"]
	for _, name := range names {
		have := false
		for _, v := range vary {
			if v == "*" || listHas(v, name) {
				have = true
				break
			}
		}
		if !have {
			vary = append(vary[:len(vary):len(vary)], name)
		}
	}
	if len(vary) > 0 {
		h["Vary"] = vary
	}
}

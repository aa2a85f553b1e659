package mcphttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func preflight(origin, method, headers string) *http.Request {
	r := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1:8080/mcp", nil)
	r.Header.Set("Origin", origin)
	r.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	return r
}

// A browser client on an allowed origin may call the endpoint with a
// bearer token; no other origin ever gets a CORS grant.
func TestCORSForAllowedOrigins(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{Origins: []string{"http://localhost:5173"}})
	const allowed, other = "http://localhost:5173", "http://localhost:6666"

	w := httptest.NewRecorder()
	f.EP.ServeHTTP(w, preflight(allowed, "POST", "authorization,content-type,mcp-protocol-version,mcp-session-id"))
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	h := w.Header()
	assert.Equal(t, allowed, h.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, h.Get("Access-Control-Allow-Credentials"), "tokens, not cookies")
	for _, name := range []string{"Authorization", "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id", "Mcp-Method", "Mcp-Name", "Last-Event-ID", "DPoP"} {
		assert.Contains(t, h.Get("Access-Control-Allow-Headers"), name)
	}
	assert.Contains(t, h.Get("Access-Control-Allow-Methods"), "POST")
	assert.NotEmpty(t, h.Get("Access-Control-Max-Age"))
	assert.Contains(t, h.Values("Vary"), "Origin")

	// Another origin's preflight: 403 and no grant.
	w = httptest.NewRecorder()
	f.EP.ServeHTTP(w, preflight(other, "POST", "authorization"))
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))

	// The actual request: the grant and the headers a client must read,
	// on success and on a 401 challenge alike.
	for _, tok := range []string{f.Token(t, "alice"), ""} {
		w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: tok, Headers: map[string]string{"Origin": allowed}})
		assert.Equal(t, allowed, w.Header().Get("Access-Control-Allow-Origin"), "token %v", tok != "")
		assert.Contains(t, w.Header().Get("Access-Control-Expose-Headers"), "WWW-Authenticate")
		assert.Contains(t, w.Header().Get("Access-Control-Expose-Headers"), "Mcp-Session-Id")
		assert.Contains(t, w.Header().Get("Access-Control-Expose-Headers"), "DPoP-Nonce", "RFC 9449 §9 nonces reach browser clients")
		assert.Contains(t, w.Header().Values("Vary"), "Origin")
		assert.Contains(t, w.Header().Values("Vary"), "Authorization")
	}
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: f.Token(t, "alice"), Headers: map[string]string{"Origin": other}})
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))

	// Same-origin requests need no CORS headers.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/templates/list", nil), Headers: map[string]string{"Origin": "http://127.0.0.1:8080"}})
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))

	// An OPTIONS that is no preflight is still not a method the endpoint serves.
	r := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1:8080/mcp", strings.NewReader(""))
	w = httptest.NewRecorder()
	f.EP.ServeHTTP(w, r)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)

	// Without AllowedOrigins nothing is granted, preflights included.
	closed := mcptest.New(t, mcptest.Options{})
	w = httptest.NewRecorder()
	closed.EP.ServeHTTP(w, preflight(allowed, "POST", ""))
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
}

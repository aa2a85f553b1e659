package mcphttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

// RequireSignIn (issue 37): every request without credentials —
// initialize, ping, server/discover, a public read, a part's GET and
// DELETE — gets the Authenticator's 401 challenge, so clients that start
// OAuth only when their connection is refused do so at connect. Requests
// with a valid token are served as before; a CORS preflight is not
// refused. Before, an anonymous initialize was served (200): the fixture
// has public resources.
func TestRequireSignIn(t *testing.T) {
	hub := notify.New(notify.Options{})
	t.Cleanup(hub.Close)
	part, err := sessions.New(hub, sessions.Options{})
	require.NoError(t, err)
	throttle := &countingThrottle{}
	f := mcptest.New(t, mcptest.Options{Origins: []string{"https://app.example.com"}, Throttle: throttle,
		Endpoint: func(o *mcphttp.Options) { o.RequireSignIn = true }}, part)
	initialize := mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	discover, discoverHdr := mcptest.Modern(1, "server/discover", nil)
	readPublic := mcptest.Legacy(2, "resources/read", map[string]any{"uri": "test://static-text"})
	alice := f.Token(t, "alice")
	for _, rq := range []mcptest.Request{
		{Body: initialize},
		{Body: mcptest.Legacy(1, "ping", nil)},
		{Body: discover, Headers: discoverHdr},
		{Body: readPublic},
		{Body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{Body: `not json at all`}, // refused before the body is read
	} {
		w := f.Do(t, rq)
		require.Equal(t, http.StatusUnauthorized, w.Code, rq.Body)
		ch := w.Header().Get("WWW-Authenticate")
		assert.True(t, strings.HasPrefix(ch, "Bearer "), ch)
		assert.Contains(t, ch, `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`)
		assert.NotContains(t, ch, "error=", "no credentials: no error code (RFC 6750 §3.1)")
	}
	for range 30 {
		w := f.Do(t, mcptest.Request{Body: initialize})
		require.Equal(t, http.StatusUnauthorized, w.Code, "an anonymous probe is never throttled")
	}
	assert.Zero(t, throttle.refused.Load(), "no credentials, no refused credentials")
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r := httptest.NewRequest(method, "http://127.0.0.1:8080/mcp", nil)
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("Mcp-Session-Id", "nope")
		w := httptest.NewRecorder()
		f.EP.ServeHTTP(w, r)
		assert.Equal(t, http.StatusUnauthorized, w.Code, method)
	}
	pre := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1:8080/mcp", nil)
	pre.Header.Set("Origin", "https://app.example.com")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	f.EP.ServeHTTP(w, pre)
	assert.Less(t, w.Code, 300, "a preflight carries no credentials and is answered")

	// Signed in: served as without the option.
	for _, rq := range []mcptest.Request{
		{Body: initialize, Token: alice},
		{Body: discover, Headers: discoverHdr, Token: alice},
		{Body: readPublic, Token: alice},
	} {
		w := f.Do(t, rq)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		assert.Nil(t, mcptest.Decode(t, w).Error)
	}
	w = f.Do(t, mcptest.Request{Body: initialize, Token: "not.a.token"})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="invalid_token"`)
	assert.Equal(t, int64(1), throttle.refused.Load(), "a bad token is a refused credential")

	// Without the option an anonymous initialize is served.
	plain := mcptest.New(t, mcptest.Options{})
	w = plain.Do(t, mcptest.Request{Body: initialize})
	assert.Equal(t, http.StatusOK, w.Code)

	// The service's own middleware (no Authenticator): a plain challenge.
	own := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator, o.RequireSignIn = nil, true }})
	w = own.Do(t, mcptest.Request{Body: initialize})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"))
}

// countingThrottle admits everything and counts refusals.
type countingThrottle struct{ refused atomic.Int64 }

func (c *countingThrottle) Admit(*http.Request) (bool, time.Duration) { return true, 0 }
func (c *countingThrottle) Refused(*http.Request)                     { c.refused.Add(1) }

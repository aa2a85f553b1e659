package mcphttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// Intercept in front of the real go-sdk and mcp-go servers is tested in
// examples/interop (intercept_test.go, intercept_bench_test.go), outside the
// core module, so that the core's go.mod needs neither SDK.

// TestInterceptForwardsUntouched checks that a forwarded request reaches the
// legacy handler with the same body and headers.
func TestInterceptForwardsUntouched(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var gotBody, gotSession, gotAuth string
	legacyHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotSession, gotAuth = string(b), r.Header.Get("Mcp-Session-Id"), r.Header.Get("Authorization")
		w.WriteHeader(http.StatusAccepted)
	})
	h, err := mcphttp.Intercept(f.inv, legacyHandler, mcphttp.Options{Authenticator: f.auth})
	require.NoError(t, err)
	body := `{"jsonrpc":"2.0",  "id":9,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3]}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Session-Id", "s-123")
	r.Header.Set("Authorization", "Bearer opaque-for-the-legacy-handler")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.Equal(t, body, gotBody, "byte-identical body")
	assert.Equal(t, "s-123", gotSession)
	assert.Equal(t, "Bearer opaque-for-the-legacy-handler", gotAuth, "forwarded headers are untouched")

	// GET streams go to the legacy handler too.
	r = httptest.NewRequest(http.MethodGet, "/mcp", nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusAccepted, w.Code)

	// Owned methods never reach it.
	gotBody = ""
	w = httptest.NewRecorder()
	r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(legacy(1, "resources/read", map[string]any{"uri": "test://static-text"})))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, gotBody)
}

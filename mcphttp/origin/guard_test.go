package origin_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// The origin decision is exported, for the service's other handlers.
func TestGuard(t *testing.T) {
	g, err := origin.New([]string{"https://app.example.com"})
	require.NoError(t, err)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for o, want := range map[string]int{
		"":                         http.StatusNoContent,
		"https://app.example.com":  http.StatusNoContent,
		"https://APP.example.com":  http.StatusNoContent,
		"https://evil.example.com": http.StatusForbidden,
		"null":                     http.StatusForbidden,
		"https://api.example.com":  http.StatusNoContent, // its own origin
	} {
		r := httptest.NewRequest(http.MethodPost, "https://api.example.com/api/documents", nil)
		if o != "" {
			r.Header.Set("Origin", o)
		}
		w := httptest.NewRecorder()
		g.Handler(ok).ServeHTTP(w, r)
		assert.Equal(t, want, w.Code, o)
		assert.Equal(t, want == http.StatusForbidden, g.Check(r) != nil, o)
		if want == http.StatusForbidden {
			assert.ErrorIs(t, g.Check(r), origin.ErrForbidden)
			assert.Contains(t, w.Body.String(), `"code":-32600`)
		}
	}
	_, err = origin.New([]string{"*"})
	assert.Error(t, err, "no wildcard")
}

// A nil *Guard and the zero Guard are closed, never a panic.
func TestNilAndZeroGuardsAreClosed(t *testing.T) {
	for name, g := range map[string]*origin.Guard{"nil": nil, "zero": {}} {
		r := httptest.NewRequest(http.MethodPost, "http://api.example.com/mcp", nil)
		r.Header.Set("Origin", "https://evil.example")
		require.NotPanics(t, func() {
			assert.ErrorIs(t, g.Check(r), origin.ErrForbidden, name)
			w := httptest.NewRecorder()
			assert.False(t, g.ServeCORS(w, r), name)
			assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), name)
		}, name)
	}
}

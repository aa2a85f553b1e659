package authn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingThrottle admits a remote address until it has been refused
// limit times, and counts what it was asked.
type countingThrottle struct {
	mu              sync.Mutex
	limit           int
	refused         map[string]int
	admits, charged int
}

func (c *countingThrottle) Admit(r *http.Request) (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.admits++
	if c.refused[r.RemoteAddr] >= c.limit {
		return false, 2500 * time.Millisecond
	}
	return true, 0
}

func (c *countingThrottle) Refused(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.charged++
	c.refused[r.RemoteAddr]++
}

// A Throttle is asked before any credential is checked, told about every
// refusal but those the server could not check now, and its "no" is a
// 429 with Retry-After that costs the verifier nothing (issue 19).
func TestAuthenticateThrottle(t *testing.T) {
	var calls int
	counting := VerifierFunc(func(ctx context.Context, tok string) (principal.Principal, time.Time, error) {
		calls++
		return stubVerifier().Verify(ctx, tok)
	})
	th := &countingThrottle{limit: 3, refused: map[string]int{}}
	a, err := NewAuthenticator(counting, Options{Resource: testResource, Logger: discardLogger(), Throttle: th})
	require.NoError(t, err)
	h := a.Handler(okHandler)
	from := func(addr string, auth ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		r.RemoteAddr = addr
		for _, v := range auth {
			r.Header.Add("Authorization", v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	// No credentials: the throttle is not asked.
	assert.Equal(t, http.StatusUnauthorized, from("192.0.2.1:1").Code)
	assert.Zero(t, th.admits)
	// A good token is admitted and charges nothing.
	assert.Equal(t, http.StatusOK, from("192.0.2.1:1", "Bearer good-alice").Code)
	assert.Equal(t, 1, th.admits)
	assert.Zero(t, th.charged)
	// A token that cannot be checked now is the server's fault: not charged.
	assert.Equal(t, http.StatusServiceUnavailable, from("192.0.2.1:1", "Bearer down").Code)
	assert.Zero(t, th.charged)

	// Attack: forged tokens and malformed headers are charged until the
	// address is throttled; then nothing reaches the verifier.
	for _, auth := range []string{"Bearer forged", "Bearer", "Bearer otheraud"} {
		assert.NotEqual(t, http.StatusOK, from("192.0.2.1:1", auth).Code, auth)
	}
	assert.Equal(t, 3, th.charged)
	before := calls
	for range 50 {
		w := from("192.0.2.1:1", "Bearer forged")
		require.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "3", w.Header().Get("Retry-After"), "2.5 s rounded up")
		assert.Equal(t, `{"error":"too_many_requests"}`, w.Body.String())
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	}
	assert.Equal(t, before, calls, "a throttled request costs no verification")
	assert.Equal(t, 3, th.charged, "throttled requests are not charged again")
	// Another address is served; its good token verifies.
	assert.Equal(t, http.StatusOK, from("198.51.100.7:1", "Bearer good-bob").Code)
	// A principal from earlier middleware never meets the throttle.
	admits := th.admits
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "192.0.2.1:1"
	r.Header.Set("Authorization", "Bearer forged")
	_, err = a.Authenticate(withPrincipal(t, r, principal.Principal{Subject: "carol", Audience: testResource}))
	require.NoError(t, err)
	assert.Equal(t, admits, th.admits)
}

// RequireScopes grants a caller whose scopes came in claim order (issue
// 20: HasScopes binary-searched an unsorted slice and refused it).
func TestRequireScopesAnyOrder(t *testing.T) {
	a, err := NewAuthenticator(nil, Options{Resource: testResource, Logger: discardLogger()})
	require.NoError(t, err)
	h := a.RequireScopes("notes:read")(okHandler)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = withPrincipal(t, r, principal.Principal{Subject: "alice", Scopes: []string{"notes:write", "notes:read"}, Audience: testResource})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
}

// StatusOf is WriteError's decision: the same status for every refusal,
// DPoP's included, whatever the mode (observers report it; issue 20
// retired the endpoint's copy of this table).
func TestStatusOfIsWriteErrors(t *testing.T) {
	for _, mode := range []DPoPMode{DPoPOff, DPoPAllowed, DPoPRequired} {
		a, err := NewAuthenticator(nil, Options{Resource: testResource, Logger: discardLogger(), DPoP: DPoPOptions{Mode: mode, RequireNonce: mode != DPoPOff}})
		require.NoError(t, err)
		for name, e := range map[string]error{
			"no credentials":     principal.ErrUnauthenticated,
			"invalid token":      ErrInvalidToken,
			"invalid request":    ErrInvalidRequest,
			"unavailable":        ErrUnavailable,
			"throttled":          &ThrottledError{RetryAfter: time.Second},
			"insufficient scope": &principal.ScopeError{Required: []string{"read"}},
			"invalid DPoP proof": ErrInvalidDPoPProof,
			"use DPoP nonce":     ErrUseDPoPNonce,
			"other":              errors.New("boom"),
		} {
			r := httptest.NewRequest(http.MethodPost, testResource, nil)
			r.Header.Set("Authorization", "DPoP abc")
			w := httptest.NewRecorder()
			a.WriteError(w, r, e)
			assert.Equal(t, w.Code, a.StatusOf(e), "%s, DPoP %v", name, mode)
		}
	}
}

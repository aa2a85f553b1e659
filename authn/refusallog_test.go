package authn

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// Operators see why tokens are refused (issue 29): each refusal reason is
// logged at INFO (before, only at DEBUG), with a hint, never the token or
// its key id; a reason's further refusals within the interval are one
// line with their count.
func TestRefusalReasonsAtInfo(t *testing.T) {
	e := newEnv(t)
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	jv := e.verifier(t, func(o *JWTOptions) { o.Algorithms = []string{"ES256", "RS256"} })
	a, err := NewAuthenticator(NewCache(jv, CacheOptions{Now: e.clock.Now}), Options{Resource: testResource, Logger: log,
		DPoP: dpop.Options{Mode: dpop.Allowed, Now: e.clock.Now}})
	require.NoError(t, err)
	es := testissuer.WithKey(testissuer.KidES256)
	good := e.is.Token(t, claims("alice", "read"), es)
	other := claims("alice", "read")
	other.Issuer = "https://elsewhere.example"
	bound := claims("alice", "read")
	bound.DPoPThumbprint = strings.Repeat("A", 43)
	badScope := claims("alice")
	badScope.Extra = map[string]any{"scope": "a\"b"}
	tokens := map[string]string{
		"aud":                  e.is.Token(t, withAudience(claims("alice", "read"), "https://other.example/mcp"), es),
		"iss":                  e.is.Token(t, other, es),
		"exp":                  e.is.Token(t, withExpiry(claims("alice", "read"), e.clock.Now().Add(-time.Hour)), es),
		"typ":                  e.is.Token(t, claims("alice", "read"), es, withType("JWT")),
		"alg":                  e.is.Token(t, claims("alice", "read"), testissuer.WithKey(testissuer.KidEdDSA)),
		"signature":            good[:len(good)-4] + "AAAA",
		"scope":                e.is.Token(t, badScope, es),
		"dpop_bound_as_bearer": e.is.Token(t, bound, es),
	}
	send := func(h http.Handler, scheme, tok string) int {
		r := httptest.NewRequest(http.MethodPost, testResource, nil)
		r.Header.Set("Authorization", scheme+" "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	h := a.Handler(okHandler)
	for reason, tok := range tokens {
		require.Equal(t, http.StatusUnauthorized, send(h, "Bearer", tok), reason)
	}
	assert.Equal(t, http.StatusUnauthorized, send(h, "DPoP", good), "no proof")
	assert.Equal(t, http.StatusForbidden, send(a.Handler(a.RequireScopes("write")(okHandler)), "Bearer", good))
	logs := buf.String()
	for _, reason := range []string{"aud", "iss", "exp", "typ", "alg", "signature", "scope", "insufficient_scope", "dpop_bound_as_bearer", "dpop_headers"} {
		assert.Contains(t, logs, "level=INFO msg=\"authn: credentials refused\" reason="+reason+" ", reason)
	}
	assert.Contains(t, logs, "AllowPlainJWTType", "the typ line names the option")
	for reason, tok := range tokens {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		assert.NotContains(t, logs, sig, reason)
	}
	for _, kid := range []string{testissuer.KidES256, testissuer.KidEdDSA} {
		assert.NotContains(t, logs, kid)
	}
	assert.NotContains(t, logs, "level=DEBUG")

	// Aggregation: one line at once, then one with the count.
	buf2 := &syncBuffer{}
	a2, err := NewAuthenticator(NewCache(jv, CacheOptions{Now: e.clock.Now}), Options{Resource: testResource,
		Logger: slog.New(slog.NewTextHandler(buf2, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	a2.refusals.Interval = 200 * time.Millisecond
	for range 6 {
		send(a2.Handler(okHandler), "Bearer", tokens["aud"])
	}
	send(a2.Handler(okHandler), "Bearer", tokens["exp"])
	assert.Equal(t, 1, strings.Count(buf2.String(), "reason=aud"))
	require.Eventually(t, func() bool { return strings.Contains(buf2.String(), "more credentials refused") }, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, buf2.String(), `msg="authn: more credentials refused" reason=aud count=5`)
	assert.Equal(t, 1, strings.Count(buf2.String(), "reason=exp"), "a single refusal has no count line")
	// A request without credentials is no refusal.
	buf3 := &bytes.Buffer{}
	a3, err := NewAuthenticator(jv, Options{Resource: testResource, Logger: slog.New(slog.NewTextHandler(buf3, nil))})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	a3.Handler(okHandler).ServeHTTP(w, httptest.NewRequest(http.MethodPost, testResource, nil))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Empty(t, buf3.String())
}

// reasonError is a Verifier's own error that happens to have a Reason
// method, as authn/dpop's proof errors do.
type reasonError struct{ reason string }

func (e reasonError) Error() string  { return "token refused" }
func (e reasonError) Reason() string { return e.reason }

// Only authn/dpop's proof errors give their Reason to the refusal log: a
// Verifier's error with a Reason method (whose text may hold anything)
// is classified by the kit, like any other error of a Verifier.
func TestRejectReasonOfAVerifiersOwnError(t *testing.T) {
	for _, err := range []error{
		reasonError{"sub=alice@example.com"},
		fmt.Errorf("%w: %w", ErrInvalidToken, reasonError{"dpop_x"}),
		reasonError{"dpop_htu"},
	} {
		assert.NotContains(t, rejectReason(err), "alice", err)
		assert.NotContains(t, rejectReason(err), "dpop_", err)
	}
}

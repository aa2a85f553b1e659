package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testMetadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

// stubVerifier accepts "good-<subject>" tokens and fails others as told.
func stubVerifier() Verifier {
	return VerifierFunc(func(ctx context.Context, tok string) (principal.Principal, time.Time, error) {
		switch {
		case strings.HasPrefix(tok, "good-"):
			return principal.Principal{Subject: strings.TrimPrefix(tok, "good-"), ClientID: "app", Scopes: []string{"read", "write"}, Audience: testResource}, time.Now().Add(time.Hour), nil
		case tok == "unsorted":
			return principal.Principal{Subject: "u", Scopes: []string{"write", "read", "read"}, Audience: testResource}, time.Time{}, nil
		case tok == "otheraud":
			return principal.Principal{Subject: "u", Audience: "https://other.example"}, time.Time{}, nil
		case tok == "noaud":
			return principal.Principal{Subject: "u"}, time.Time{}, nil
		case tok == "badsub":
			return principal.Principal{Subject: "a\nb", Audience: testResource}, time.Time{}, nil
		case tok == "emptysub":
			return principal.Principal{Audience: testResource}, time.Time{}, nil
		case tok == "down":
			return principal.Principal{}, time.Time{}, &UnavailableError{RetryAfter: 1500 * time.Millisecond}
		case tok == "downplain":
			return principal.Principal{}, time.Time{}, ErrUnavailable
		case tok == "weird":
			return principal.Principal{}, time.Time{}, errors.New("db password is hunter2 for " + tok)
		}
		return principal.Principal{}, time.Time{}, ErrInvalidToken
	})
}

func newTestAuthenticator(t *testing.T) *Authenticator {
	t.Helper()
	log, _ := newLogger()
	a, err := NewAuthenticator(stubVerifier(), Options{Resource: testResource, Scopes: []string{"read"}, Logger: log})
	require.NoError(t, err)
	return a
}

func serve(h http.Handler, auth ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	for _, a := range auth {
		r.Header.Add("Authorization", a)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// okHandler echoes the principal's subject and scopes.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, ok := principal.FromContext(r.Context())
	if !ok {
		_, _ = w.Write([]byte("anonymous"))
		return
	}
	_, _ = w.Write([]byte(p.Subject + " " + strings.Join(p.Scopes, ",")))
})

func TestHandler(t *testing.T) {
	a := newTestAuthenticator(t)
	h := a.Handler(okHandler)

	w := serve(h, "Bearer good-alice")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "alice read,write", w.Body.String())
	// A23: authenticated responses are private.
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
	assert.Equal(t, []string{"Authorization"}, w.Header().Values("Vary"))

	cases := []struct {
		name   string
		auth   []string
		status int
		params map[string]string
	}{
		{"no credentials", nil, 401, map[string]string{"resource_metadata": testMetadataURL, "scope": "read"}},
		{"other scheme", []string{"Basic eDp5"}, 401, map[string]string{"resource_metadata": testMetadataURL, "scope": "read"}},
		{"invalid token", []string{"Bearer bad"}, 401, map[string]string{"error": "invalid_token", "error_description": descInvalidToken, "resource_metadata": testMetadataURL, "scope": "read"}},
		{"wrong audience from a custom verifier", []string{"Bearer otheraud"}, 401, map[string]string{"error": "invalid_token", "error_description": descInvalidToken, "resource_metadata": testMetadataURL, "scope": "read"}},
		{"no audience from a custom verifier", []string{"Bearer noaud"}, 401, map[string]string{"error": "invalid_token", "error_description": descInvalidToken, "resource_metadata": testMetadataURL, "scope": "read"}},
		{"bad subject from a custom verifier", []string{"Bearer badsub"}, 401, map[string]string{"error": "invalid_token", "error_description": descInvalidToken, "resource_metadata": testMetadataURL, "scope": "read"}},
		{"malformed header", []string{"Bearer a b"}, 400, map[string]string{"error": "invalid_request", "error_description": descInvalidRequest, "resource_metadata": testMetadataURL}},
		{"two headers", []string{"Bearer good-a", "Bearer good-a"}, 400, map[string]string{"error": "invalid_request", "error_description": descInvalidRequest, "resource_metadata": testMetadataURL}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, tc.auth...)
			assert.Equal(t, tc.status, w.Code)
			chs := w.Header().Values("WWW-Authenticate")
			require.Len(t, chs, 1)
			p, err := parseChallenge(chs[0])
			require.NoError(t, err)
			assert.Equal(t, tc.params, p)
			conforming(t, p)
			// A23
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			assert.Equal(t, "Authorization", w.Header().Get("Vary"))
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			assert.True(t, strings.HasPrefix(w.Body.String(), `{"error":"`))
		})
	}

	// A principal without a subject (a client-credentials token) is
	// accepted: templates owned by the subject are simply not its.
	w = serve(h, "Bearer emptysub")
	assert.Equal(t, http.StatusOK, w.Code)

	w = serve(h, "Bearer down")
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "2", w.Header().Get("Retry-After"), "rounded up to whole seconds")
	assert.Empty(t, w.Header().Values("WWW-Authenticate"))
	w = serve(h, "Bearer downplain")
	assert.Equal(t, "5", w.Header().Get("Retry-After"))

	// A24: an unexpected verifier error is a generic 500, its text stays out.
	w = serve(h, "Bearer weird")
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "hunter2")
	assert.Equal(t, `{"error":"server_error"}`, w.Body.String())
}

func TestAuthenticateNormalizesScopes(t *testing.T) {
	a := newTestAuthenticator(t)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer unsorted")
	p, err := a.Authenticate(r)
	require.NoError(t, err)
	assert.Equal(t, []string{"read", "write"}, p.Scopes)
}

func TestOptional(t *testing.T) {
	a := newTestAuthenticator(t)
	h := a.Optional(okHandler)
	w := serve(h)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "anonymous", w.Body.String())
	assert.Equal(t, "Authorization", w.Header().Get("Vary"))
	assert.Empty(t, w.Header().Get("Cache-Control"))

	w = serve(h, "Bearer good-bob")
	assert.Equal(t, "bob read,write", w.Body.String())
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))

	// An invalid token is never downgraded to anonymous.
	w = serve(h, "Bearer bad")
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	w = serve(h, "Bearer a b")
	assert.Equal(t, http.StatusBadRequest, w.Code)
}

func TestRequireScopes(t *testing.T) {
	a := newTestAuthenticator(t)
	h := a.Handler(a.RequireScopes("write", "admin", "write")(okHandler))
	w := serve(h, "Bearer good-alice")
	assert.Equal(t, http.StatusForbidden, w.Code)
	p, err := parseChallenge(w.Header().Get("WWW-Authenticate"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"error": "insufficient_scope", "scope": "admin write",
		"resource_metadata": testMetadataURL, "error_description": descScope}, p)
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, "Authorization", w.Header().Get("Vary"))

	w = serve(a.Handler(a.RequireScopes("read")(okHandler)), "Bearer good-alice")
	assert.Equal(t, http.StatusOK, w.Code)

	// Without Handler in front: no principal → 401.
	w = serve(a.RequireScopes("read")(okHandler), "Bearer good-alice")
	assert.Equal(t, http.StatusUnauthorized, w.Code)

	// An invalid scope name fails closed.
	w = serve(a.Handler(a.RequireScopes(`bad"scope`)(okHandler)), "Bearer good-alice")
	assert.Equal(t, http.StatusInternalServerError, w.Code)
}

func TestWriteErrorScopeFromElsewhere(t *testing.T) {
	a := newTestAuthenticator(t)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w.Header().Set("Vary", "Origin")
	a.WriteError(w, r, errors.Join(errors.New("wrapped"), &principal.ScopeError{Required: []string{"b", `in"valid`, "a"}}))
	assert.Equal(t, http.StatusForbidden, w.Code)
	p, err := parseChallenge(w.Header().Get("WWW-Authenticate"))
	require.NoError(t, err)
	assert.Equal(t, "a b", p["scope"], "invalid scope names left out")
	assert.Equal(t, []string{"Origin", "Authorization"}, w.Header().Values("Vary"))
	assert.True(t, errors.Is(&principal.ScopeError{}, principal.ErrInsufficientScope))
}

func TestSetPrivate(t *testing.T) {
	h := http.Header{}
	h.Set("Vary", "Accept-Encoding, authorization")
	SetPrivate(h)
	assert.Equal(t, []string{"Accept-Encoding, authorization"}, h.Values("Vary"))
	assert.Equal(t, "private, max-age=0", h.Get("Cache-Control"))
}

func TestNewAuthenticatorValidation(t *testing.T) {
	for name, o := range map[string]Options{
		"no resource":    {},
		"http resource":  {Resource: "http://mcp.example.com/mcp"},
		"query":          {Resource: testResource + "?x=1"},
		"bad scope":      {Resource: testResource, Scopes: []string{"a b"}},
		"quote in scope": {Resource: testResource, Scopes: []string{`a"`}},
	} {
		_, err := NewAuthenticator(stubVerifier(), o)
		assert.Error(t, err, name)
	}
	_, err := NewAuthenticator(nil, Options{Resource: "not a url"})
	assert.Error(t, err, "a context-only Authenticator still needs a valid Resource")
	a, err := NewAuthenticator(stubVerifier(), Options{Resource: "http://127.0.0.1:8080"})
	require.NoError(t, err)
	assert.Equal(t, `Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource"`, a.chNoCreds)
}

// S4: the principal.Principal type holds only its seven fields, none of which can
// carry the token; the handler sees no token through the principal.
func TestPrincipalIsolation(t *testing.T) {
	typ := reflect.TypeOf(principal.Principal{})
	var fields []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	assert.Equal(t, []string{"Issuer string", "Subject string", "ClientID string", "Scopes []string", "Audience string",
		"Expires time.Time", "DPoPThumbprint string"}, fields,
		"a new principal.Principal field needs a review: it must never hold the raw token or claims")

	e := newEnv(t)
	v := e.verifier(t, nil)
	a, err := NewAuthenticator(NewCache(v, CacheOptions{Now: e.clock.Now}), Options{Resource: testResource})
	require.NoError(t, err)
	tok := e.is.Token(t, claims("alice", "read"))
	exposures := 0
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal.FromContext(r.Context())
		require.True(t, ok)
		for _, s := range append([]string{p.Subject, p.ClientID, p.Audience, p.Issuer, p.DPoPThumbprint}, p.Scopes...) {
			for _, frag := range tokenFragments(tok) {
				if strings.Contains(s, frag) {
					exposures++
				}
			}
		}
	}))
	for range 2 { // first verification, then the cached one
		assert.Equal(t, http.StatusOK, serve(h, "Bearer "+tok).Code)
	}
	assert.Zero(t, exposures)
}

// S1: challenge conformance over every kind of response.
func TestChallengeConformance(t *testing.T) {
	log, _ := newLogger()
	checked := 0
	for _, scopes := range [][]string{nil, {"read"}, {"files:read", "files:write"}, {"a-b_c.d~e!#$%&'()*+,/:;<=>?@[]^`{|}"}} {
		a, err := NewAuthenticator(stubVerifier(), Options{Resource: testResource, Scopes: scopes, Logger: log})
		require.NoError(t, err)
		h := a.Handler(a.RequireScopes("admin", "x:y")(okHandler))
		for _, auth := range [][]string{nil, {"Bearer bad"}, {"Bearer a b"}, {"bearer good-x"}, {"Basic x"}, {"Bearer"},
			{"Bearer good-x", "Bearer good-x"}} {
			w := serve(h, auth...)
			chs := w.Header().Values("WWW-Authenticate")
			require.Len(t, chs, 1)
			p, err := parseChallenge(chs[0])
			require.NoError(t, err, chs[0])
			conforming(t, p)
			assert.Equal(t, testMetadataURL, p["resource_metadata"])
			if w.Code == http.StatusUnauthorized && p["error"] == "" && scopes != nil {
				assert.Equal(t, strings.Join(scopes, " "), p["scope"])
			}
			if _, hasErr := p["error"]; !hasErr {
				assert.Equal(t, http.StatusUnauthorized, w.Code, "no error code only for missing credentials")
			}
			checked++
		}
	}
	t.Logf("S1: %d challenges generated, 0 non-conforming", checked)
}

func TestAuthenticateSetsExpires(t *testing.T) {
	a := newTestAuthenticator(t)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer good-alice")
	p, err := a.Authenticate(r)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.WithinDuration(t, time.Now().Add(time.Hour), p.Expires, time.Minute, "the verifier's expiry")

	r.Header.Set("Authorization", "Bearer unsorted")
	p, err = a.Authenticate(r)
	require.NoError(t, err)
	assert.True(t, p.Expires.IsZero(), "unknown expiry stays zero")

	r.Header.Set("Authorization", "Bearer otheraud")
	p, err = a.Authenticate(r)
	assert.ErrorIs(t, err, ErrInvalidToken)
	assert.True(t, p.Expires.IsZero())
}

// A principal that an earlier middleware put in the context is used as it
// is: the token is not verified again (here it would not verify at all).
func TestAuthenticateUsesTheContextPrincipal(t *testing.T) {
	calls := 0
	v := VerifierFunc(func(context.Context, string) (principal.Principal, time.Time, error) {
		calls++
		return principal.Principal{}, time.Time{}, ErrInvalidToken
	})
	a, err := NewAuthenticator(v, Options{Resource: "https://mcp.example.com/mcp"})
	require.NoError(t, err)
	set := principal.Principal{Subject: "carol", Scopes: []string{"a"}, Audience: "https://mcp.example.com/mcp"}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer anything")
	r = withPrincipal(t, r, set)
	p, err := a.Authenticate(r)
	require.NoError(t, err)
	assert.Equal(t, set, p)
	assert.Zero(t, calls, "no second verification")

	// Handler and Optional pass it on unchanged, also without a token.
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r = withPrincipal(t, r, set)
	for name, mw := range map[string]func(http.Handler) http.Handler{"Handler": a.Handler, "Optional": a.Optional} {
		var got principal.Principal
		rec := httptest.NewRecorder()
		mw(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, _ = principal.FromContext(r.Context()) })).ServeHTTP(rec, r)
		assert.Equal(t, http.StatusOK, rec.Code, name)
		assert.Equal(t, set, got, name)
	}
	assert.Zero(t, calls)
}

// An Authenticator without a Verifier trusts only the context: no token is
// anonymous, a token nobody accepted is invalid (never anonymous), and its
// challenges still name the resource metadata.
func TestContextOnlyAuthenticator(t *testing.T) {
	a, err := NewAuthenticator(nil, Options{Resource: "https://mcp.example.com/mcp", Scopes: []string{"docs:read"}})
	require.NoError(t, err)

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	_, err = a.Authenticate(r)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)

	r.Header.Set("Authorization", "Bearer forged")
	_, err = a.Authenticate(r)
	assert.ErrorIs(t, err, ErrInvalidToken)
	rec := httptest.NewRecorder()
	a.WriteError(rec, r, err)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Header().Get("WWW-Authenticate"), `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`)

	set := principal.Principal{Subject: "dave", Audience: "https://mcp.example.com/mcp"}
	p, err := a.Authenticate(withPrincipal(t, r, set))
	require.NoError(t, err)
	assert.Equal(t, "dave", p.Subject)
}

// Issuers that put many group claims in a token exceed 8 KiB: a validly
// signed 12 KiB token verifies with the defaults, one over 16 KiB is
// refused before it is examined (400 invalid_request), and MaxTokenBytes
// raises the limit on the Authenticator and the verifier alike.
func TestLargeTokens(t *testing.T) {
	e := newEnv(t)
	groups := func(n int) []string {
		g := make([]string, n)
		for i := range g {
			g[i] = fmt.Sprintf("group-%05d-of-a-large-directory", i)
		}
		return g
	}
	sign := func(n int) string {
		c := claims("alice", "read")
		c.Extra = map[string]any{"groups": groups(n)}
		return e.is.Token(t, c)
	}
	mid, big := sign(250), sign(450)
	require.Greater(t, len(mid), 8<<10)
	require.Less(t, len(mid), DefaultMaxTokenBytes)
	require.Greater(t, len(big), DefaultMaxTokenBytes)

	serve := func(a *Authenticator, tok string) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		a.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })).ServeHTTP(w, r)
		return w.Code
	}
	a, err := NewAuthenticator(e.verifier(t, nil), Options{Resource: testResource})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, serve(a, mid), "%d bytes", len(mid))
	assert.Equal(t, http.StatusBadRequest, serve(a, big), "%d bytes", len(big))

	raised, err := NewAuthenticator(e.verifier(t, func(o *JWTOptions) { o.MaxTokenBytes = 32 << 10 }),
		Options{Resource: testResource, MaxTokenBytes: 32 << 10})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, serve(raised, big))

	_, err = NewAuthenticator(e.verifier(t, nil), Options{Resource: testResource, MaxTokenBytes: -1})
	assert.Error(t, err)
}

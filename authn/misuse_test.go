package authn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
)

// Misuse is an error, never a panic (issue 28): every interface-typed
// argument and option refuses a typed nil with an error naming it.
func TestTypedNilsAreRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		v    Verifier
		opts Options
		want string
	}{
		"nil *JWTVerifier":           {v: (*JWTVerifier)(nil), want: "NewAuthenticator's Verifier is a nil *authn.JWTVerifier"},
		"nil *Cache":                 {v: (*Cache)(nil), want: "NewAuthenticator's Verifier is a nil *authn.Cache"},
		"nil *IntrospectionVerifier": {v: (*IntrospectionVerifier)(nil), want: "NewAuthenticator's Verifier is a nil"},
		"nil *MultiIssuerVerifier":   {v: (*MultiIssuerVerifier)(nil), want: "NewAuthenticator's Verifier is a nil"},
		"nil VerifierFunc":           {v: VerifierFunc(nil), want: "NewAuthenticator's Verifier is a nil authn.VerifierFunc"},
		"Cache of nil":               {v: NewCache(nil, CacheOptions{}), want: "not made by its constructor"},
		"Cache of nil *JWTVerifier":  {v: NewCache((*JWTVerifier)(nil), CacheOptions{}), want: "not made by its constructor"},
		"zero JWTVerifier":           {v: &JWTVerifier{}, want: "not made by its constructor"},
		"zero Cache":                 {v: &Cache{}, want: "not made by its constructor"},
		"zero IntrospectionVerifier": {v: &IntrospectionVerifier{}, want: "not made by its constructor"},
		"zero MultiIssuerVerifier":   {v: &MultiIssuerVerifier{}, want: "not made by its constructor"},
		"nil Throttle":               {opts: Options{Throttle: (*countingThrottle)(nil)}, want: "Options.Throttle is a nil *authn.countingThrottle"},
		"nil dpop.ReplayStore": {opts: Options{DPoP: dpop.Options{Mode: dpop.Allowed, ReplayStore: (*memoryReplayStore)(nil)}},
			want: "dpop.Options.ReplayStore is a nil *authn.memoryReplayStore"},
	} {
		t.Run(name, func(t *testing.T) {
			o := tc.opts
			o.Resource = testResource
			a, err := NewAuthenticator(tc.v, o)
			require.Error(t, err)
			assert.Nil(t, a)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A nil interface is still the service's-own-middleware mode.
	_, err := NewAuthenticator(nil, Options{Resource: testResource})
	require.NoError(t, err)
}

// A nil *Authenticator and a zero Authenticator answer 500 (logged), never
// panic, and their methods return errors or zero values (issue 28).
func TestZeroAuthenticatorRefusesClearly(t *testing.T) {
	var nilAuth *Authenticator
	for name, a := range map[string]*Authenticator{"nil": nilAuth, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "Bearer abc")
			_, err := a.Authenticate(r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "NewAuthenticator")
			assert.Equal(t, http.StatusInternalServerError, a.StatusOf(err))
			for hname, h := range map[string]http.Handler{
				"Handler":       a.Handler(okHandler),
				"Optional":      a.Optional(okHandler),
				"RequireScopes": a.RequireScopes("read")(okHandler),
			} {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				assert.Equal(t, http.StatusInternalServerError, w.Code, hname)
				assert.Equal(t, `{"error":"server_error"}`, w.Body.String(), hname)
			}
			w := httptest.NewRecorder()
			a.WriteError(w, r, ErrInvalidToken)
			assert.Equal(t, http.StatusInternalServerError, w.Code)
			assert.Equal(t, dpop.Off, a.DPoPMode())
			assert.Nil(t, a.DPoPAlgorithms())
			_, _, err = a.Metadata(Metadata{})
			assert.Error(t, err)
		})
	}
}

// The zero values and nil pointers of the verifiers answer an error
// (500), never panic (issue 28).
func TestZeroVerifiersRefuseClearly(t *testing.T) {
	ctx := context.Background()
	for name, v := range map[string]Verifier{
		"zero Cache": &Cache{}, "nil Cache": (*Cache)(nil), "Cache of nil": NewCache(nil, CacheOptions{}),
		"Cache of nil JWTVerifier": NewCache((*JWTVerifier)(nil), CacheOptions{}),
		"zero JWTVerifier":         &JWTVerifier{}, "nil JWTVerifier": (*JWTVerifier)(nil),
		"zero IntrospectionVerifier": &IntrospectionVerifier{}, "nil IntrospectionVerifier": (*IntrospectionVerifier)(nil),
		"zero MultiIssuerVerifier": &MultiIssuerVerifier{}, "nil MultiIssuerVerifier": (*MultiIssuerVerifier)(nil),
		"nil VerifierFunc": VerifierFunc(nil),
	} {
		_, _, err := v.Verify(ctx, "a.b.c")
		require.Error(t, err, name)
		assert.Equal(t, http.StatusInternalServerError, StatusOf(err), name)
		assert.True(t, strings.HasPrefix(err.Error(), "authn: "), name)
	}
	assert.Zero(t, (*Cache)(nil).Len())
	assert.NoError(t, (*JWTVerifier)(nil).Close())
	assert.NoError(t, (&JWTVerifier{}).Close())
	assert.NoError(t, (*MultiIssuerVerifier)(nil).Close())
	assert.Nil(t, (*MultiIssuerVerifier)(nil).Issuers())
}

// The resource URI is given once (issue 29): a verifier made for another
// resource than the Authenticator's is refused at construction, with
// both values in the error, directly or behind a Cache.
func TestResourceMismatchIsAConstructionError(t *testing.T) {
	e := newEnv(t)
	other := "https://other.example.com/mcp"
	jv := e.verifier(t, func(o *JWTOptions) { o.Resource = other })
	for _, v := range []Verifier{jv, NewCache(jv, CacheOptions{})} {
		_, err := NewAuthenticator(v, Options{Resource: testResource})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"`+other+`"`)
		assert.Contains(t, err.Error(), `"`+testResource+`"`)
	}
	iv, err := NewIntrospectionVerifier(IntrospectionOptions{Endpoint: e.is.IntrospectionURL(), Resource: other, ClientID: "rs"})
	require.NoError(t, err)
	_, err = NewAuthenticator(iv, Options{Resource: testResource})
	assert.ErrorContains(t, err, "differs from Options.Resource")
	m, err := NewMultiIssuerVerifier(context.Background(), MultiIssuerOptions{Resource: other, JWT: []JWTOptions{{Issuer: e.is.ID(), JWKSURL: e.is.JWKSURL()}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	_, err = NewAuthenticator(m, Options{Resource: testResource})
	assert.ErrorContains(t, err, "differs from Options.Resource")
	// The same URI in both is fine.
	_, err = NewAuthenticator(NewCache(e.verifier(t, nil), CacheOptions{}), Options{Resource: testResource})
	assert.NoError(t, err)
}

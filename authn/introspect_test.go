package authn

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newIntrospection(t *testing.T, e *env, mod func(*IntrospectionOptions)) *IntrospectionVerifier {
	t.Helper()
	id, secret := e.is.IntrospectionCredentials()
	o := IntrospectionOptions{Endpoint: e.is.IntrospectionURL(), ClientID: id, ClientSecret: secret,
		Resource: testResource, Logger: e.log, Now: e.clock.Now}
	if mod != nil {
		mod(&o)
	}
	iv, err := NewIntrospectionVerifier(o)
	require.NoError(t, err)
	return iv
}

func TestIntrospectionVerifier(t *testing.T) {
	e := newEnv(t)
	iv := newIntrospection(t, e, func(o *IntrospectionOptions) { o.Issuer = e.is.ID() })
	opaque := func(c testissuer.Claims, active bool) string {
		tok, err := e.is.Opaque(c, active)
		require.NoError(t, err)
		return tok
	}

	tok := opaque(testissuer.Claims{Subject: "alice", ClientID: "app", Scopes: []string{"write", "read"}}, true)
	p, exp, err := iv.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"read", "write"}, Audience: testResource}, p)
	assert.Equal(t, e.clock.Now().Add(time.Hour).Unix(), exp.Unix())

	// A client-credentials token has a client id and no subject.
	p, _, err = iv.Verify(context.Background(), opaque(testissuer.Claims{ClientID: "batch-job"}, true))
	require.NoError(t, err)
	assert.Equal(t, "", p.Subject)
	assert.Equal(t, "batch-job", p.ClientID)

	tok = opaque(testissuer.Claims{Subject: "alice", Audience: []string{"https://x.example", testResource}}, true)
	_, _, err = iv.Verify(context.Background(), tok)
	assert.NoError(t, err, "aud array")

	invalid := map[string]string{
		"inactive":        opaque(claims("alice"), false),
		"unknown token":   "unknown-token",
		"other audience":  opaque(withAudience(claims("alice"), "https://other.example/mcp"), true),
		"no audience":     opaque(testissuer.Claims{Subject: "alice", Extra: map[string]any{"aud": nil}}, true),
		"expired":         opaque(withExpiry(claims("alice"), e.clock.Now().Add(-time.Hour)), true),
		"no exp":          opaque(testissuer.Claims{Subject: "alice", Extra: map[string]any{"exp": nil}}, true),
		"wrong issuer":    opaque(testissuer.Claims{Subject: "alice", Issuer: "https://evil.example"}, true),
		"bad subject":     opaque(testissuer.Claims{Subject: "a\u0000"}, true),
		"active a string": e.is.OpaqueRaw([]byte(`{"active":"true","sub":"a","aud":"` + testResource + `","exp":9999999999}`)),
		"exp a string":    e.is.OpaqueRaw([]byte(`{"active":true,"sub":"a","aud":"` + testResource + `","exp":"9999999999"}`)),
	}
	for name, tok := range invalid {
		_, _, err := iv.Verify(context.Background(), tok)
		assert.ErrorIs(t, err, ErrInvalidToken, name)
		assert.NotErrorIs(t, err, ErrUnavailable, name)
	}
	// A response the strict decoder refuses (here a duplicate "aud", a
	// parser differential) is an endpoint failure: 503, never acceptance.
	dup := e.is.OpaqueRaw([]byte(`{"active":true,"sub":"a","aud":"x","aud":"` + testResource + `","exp":9999999999}`))
	_, _, err = iv.Verify(context.Background(), dup)
	assert.ErrorIs(t, err, ErrUnavailable)

	// Syntax errors never reach the endpoint.
	before := e.is.Introspections()
	for _, tok := range []string{"", "a b", "tok\n", strings.Repeat("a", DefaultMaxTokenBytes+1)} {
		_, _, err := iv.Verify(context.Background(), tok)
		assert.ErrorIs(t, err, ErrInvalidToken)
	}
	assert.Equal(t, before, e.is.Introspections())
}

func TestIntrospectionRequestFormat(t *testing.T) {
	e := newEnv(t)
	var got atomic.Pointer[http.Request]
	var form atomic.Pointer[url.Values]
	e.is.SetIntrospectionHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := r.PostForm
		form.Store(&f)
		got.Store(r)
		_, _ = w.Write([]byte(`{"active":false}`))
	}))
	iv := newIntrospection(t, e, func(o *IntrospectionOptions) { o.ClientID, o.ClientSecret = "rs:1", "s&cr t%" })
	_, _, _ = iv.Verify(context.Background(), "abc.def+/=")
	r := got.Load()
	require.NotNil(t, r)
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
	id, secret, ok := r.BasicAuth()
	require.True(t, ok)
	assert.Equal(t, url.QueryEscape("rs:1"), id, "RFC 6749 §2.3.1: form-encoded before Basic")
	assert.Equal(t, url.QueryEscape("s&cr t%"), secret)
	assert.Equal(t, "abc.def+/=", form.Load().Get("token"))
	assert.Equal(t, "access_token", form.Load().Get("token_type_hint"))
}

// The endpoint failing is "cannot check now" (503), never invalid_token.
func TestIntrospectionUnavailable(t *testing.T) {
	cases := map[string]func(e *env) (http.Handler, func(*IntrospectionOptions)){
		"500":     func(*env) (http.Handler, func(*IntrospectionOptions)) { return testissuer.Status(500), nil },
		"503":     func(*env) (http.Handler, func(*IntrospectionOptions)) { return testissuer.Status(503), nil },
		"garbage": func(*env) (http.Handler, func(*IntrospectionOptions)) { return testissuer.Body([]byte("<html>")), nil },
		"empty":   func(*env) (http.Handler, func(*IntrospectionOptions)) { return testissuer.Body(nil), nil },
		"huge":    func(*env) (http.Handler, func(*IntrospectionOptions)) { return testissuer.Huge(10<<20, false), nil },
		"redirect": func(*env) (http.Handler, func(*IntrospectionOptions)) {
			return http.RedirectHandler("https://example.com/", http.StatusFound), nil
		},
		"wrong secret": func(*env) (http.Handler, func(*IntrospectionOptions)) {
			return nil, func(o *IntrospectionOptions) { o.ClientSecret = "nope" }
		},
		"unreachable": func(*env) (http.Handler, func(*IntrospectionOptions)) {
			return nil, func(o *IntrospectionOptions) { o.Endpoint = "http://127.0.0.1:1/introspect" }
		},
		"slow": func(e *env) (http.Handler, func(*IntrospectionOptions)) {
			return e.is.Stall(nil, nil), func(o *IntrospectionOptions) { o.Timeout = 50 * time.Millisecond }
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			h, mod := setup(e)
			if h != nil {
				e.is.SetIntrospectionHandler(h)
			}
			iv := newIntrospection(t, e, mod)
			tok, err := e.is.Opaque(claims("alice"), true)
			require.NoError(t, err)
			_, _, err = iv.Verify(context.Background(), tok)
			assert.ErrorIs(t, err, ErrUnavailable)
			assert.NotErrorIs(t, err, ErrInvalidToken)
			assert.NotContains(t, e.logs.String(), tok, "A24")
		})
	}
}

func TestIntrospectionWithCache(t *testing.T) {
	e := newEnv(t)
	c := NewCache(newIntrospection(t, e, nil), CacheOptions{Now: e.clock.Now})
	tok, err := e.is.Opaque(claims("alice"), true)
	require.NoError(t, err)
	for range 5 {
		_, _, err := c.Verify(context.Background(), tok)
		require.NoError(t, err)
	}
	assert.Equal(t, int64(1), e.is.Introspections())
}

func TestIntrospectionOptionsValidation(t *testing.T) {
	good := IntrospectionOptions{Endpoint: "https://as.example.com/introspect", ClientID: "rs", Resource: testResource}
	for name, mod := range map[string]func(*IntrospectionOptions){
		"no endpoint":     func(o *IntrospectionOptions) { o.Endpoint = "" },
		"http endpoint":   func(o *IntrospectionOptions) { o.Endpoint = "http://as.example.com/introspect" },
		"no client id":    func(o *IntrospectionOptions) { o.ClientID = "" },
		"no resource":     func(o *IntrospectionOptions) { o.Resource = "" },
		"negative":        func(o *IntrospectionOptions) { o.Timeout = -1 },
		"leeway too long": func(o *IntrospectionOptions) { o.Leeway = time.Hour },
	} {
		o := good
		mod(&o)
		_, err := NewIntrospectionVerifier(o)
		assert.Error(t, err, name)
	}
	_, err := NewIntrospectionVerifier(good)
	assert.NoError(t, err)
}

package authntest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/authn/dpop"
)

const resource = "https://mcp.example.com/mcp"

func verifier(t *testing.T, is *authntest.Issuer) *authn.JWTVerifier {
	t.Helper()
	v, err := authn.NewJWTVerifier(context.Background(), is.JWTOptions())
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v
}

// Tokens of every algorithm verify with the verifier of JWTOptions, with
// the claims asked for.
func TestTokensVerify(t *testing.T) {
	for _, alg := range []string{"", "ES256", "RS256", "PS256", "EdDSA"} {
		is := authntest.Start(t, authntest.Options{Resource: resource, Algorithm: alg})
		v := verifier(t, is)
		p, exp, err := v.Verify(context.Background(), is.Token("alice", "docs:read", "docs:write"))
		require.NoError(t, err, alg)
		assert.Equal(t, "alice", p.Subject)
		assert.Equal(t, []string{"docs:read", "docs:write"}, p.Scopes)
		assert.Equal(t, resource, p.Audience)
		assert.Equal(t, "authntest-client", p.ClientID)
		assert.WithinDuration(t, time.Now().Add(time.Hour), exp, time.Minute)
	}
}

// Each option changes what it says, and the verifier refuses the tokens
// that should be refused.
func TestTokenOptions(t *testing.T) {
	now := time.Now()
	is := authntest.Start(t, authntest.Options{Resource: resource, Issuer: "https://issuer.example", TTL: 10 * time.Minute, ClientID: "app"})
	assert.Equal(t, "https://issuer.example", is.URL())
	assert.True(t, strings.HasPrefix(is.JWKSURL(), "http://127.0.0.1:"))
	v := verifier(t, is)
	ctx := context.Background()
	p, exp, err := v.Verify(ctx, is.Token("bob"))
	require.NoError(t, err)
	assert.Equal(t, "app", p.ClientID)
	assert.Nil(t, p.Scopes)
	assert.WithinDuration(t, now.Add(10*time.Minute), exp, time.Minute)
	for name, o := range map[string]authntest.TokenOptions{
		"expired":        {ExpiresAt: now.Add(-time.Hour)},
		"other issuer":   {Issuer: "https://elsewhere.example"},
		"other audience": {Audience: "https://other.example/mcp"},
	} {
		tok, err := is.TokenWith("bob", o)
		require.NoError(t, err)
		_, _, err = v.Verify(ctx, tok)
		assert.ErrorIs(t, err, authn.ErrInvalidToken, name)
	}
	tok, err := is.TokenWith("bob", authntest.TokenOptions{Algorithm: "EdDSA", ClientID: "other", Claims: map[string]any{"client_id": "x"}})
	require.NoError(t, err)
	p, _, err = v.Verify(ctx, tok)
	require.NoError(t, err)
	assert.Equal(t, "x", p.ClientID, "Claims override")
	_, err = is.TokenWith("bob", authntest.TokenOptions{Algorithm: "HS256"})
	assert.Error(t, err)
}

// A token bound to a DPoP key is served with the key's proof and refused
// as a bearer token.
func TestDPoP(t *testing.T) {
	is := authntest.Start(t, authntest.Options{Resource: resource})
	auth, err := authn.NewAuthenticator(verifier(t, is), authn.Options{Resource: resource, DPoP: dpop.Options{Mode: dpop.Allowed}})
	require.NoError(t, err)
	h := auth.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	key, err := authntest.NewDPoPKey()
	require.NoError(t, err)
	assert.Len(t, key.Thumbprint(), 43)
	tok, err := is.TokenWith("alice", authntest.TokenOptions{DPoP: key})
	require.NoError(t, err)
	send := func(prepare func(r *http.Request)) int {
		r := httptest.NewRequest(http.MethodPost, resource, nil)
		prepare(r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	assert.Equal(t, http.StatusOK, send(func(r *http.Request) { require.NoError(t, key.Authorize(r, tok)) }))
	assert.Equal(t, http.StatusUnauthorized, send(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }))
	other, err := authntest.NewDPoPKey()
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, send(func(r *http.Request) { require.NoError(t, other.Authorize(r, tok)) }), "another key's proof")
	// A plain token with Issuer.Authorize.
	assert.Equal(t, http.StatusOK, send(func(r *http.Request) { require.NoError(t, is.Authorize(r, "bob", "read")) }))
}

type fakeTB struct {
	failed   bool
	cleanups []func()
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }

// Misuse is an error, never a panic: bad options fail the test or return
// an error; zero values answer errors.
func TestMisuse(t *testing.T) {
	for _, o := range []authntest.Options{{}, {Resource: resource, Algorithm: "none"}, {Resource: resource, TTL: -1}} {
		_, err := authntest.New(o)
		assert.Error(t, err)
		tb := &fakeTB{}
		assert.Nil(t, authntest.Start(tb, o))
		assert.True(t, tb.failed)
	}
	var zero *authntest.Issuer
	assert.Empty(t, zero.Token("alice"))
	_, err := (&authntest.Issuer{}).TokenWith("alice", authntest.TokenOptions{})
	assert.Error(t, err)
	assert.Error(t, zero.Authorize(httptest.NewRequest(http.MethodGet, "/", nil), "alice"))
	assert.Empty(t, zero.URL())
	assert.Empty(t, zero.JWKSURL())
	zero.Close()
	_, err = authn.NewJWTVerifier(context.Background(), zero.JWTOptions())
	assert.Error(t, err)
	var k *authntest.DPoPKey
	assert.Empty(t, k.Thumbprint())
	_, err = k.Proof("GET", resource, "t", "")
	assert.Error(t, err)
	assert.Error(t, (&authntest.DPoPKey{}).Authorize(httptest.NewRequest(http.MethodGet, "/", nil), "t"))
	is := authntest.Start(t, authntest.Options{Resource: resource})
	_, err = is.TokenWith("alice", authntest.TokenOptions{DPoP: &authntest.DPoPKey{}})
	assert.Error(t, err)
}

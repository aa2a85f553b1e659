package authn

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// twoIssuers starts two real issuers with keys of their own (the same key
// ids: "rs256", "es256", …) and a verifier trusting both; issuer B names
// this resource "api://mcp" and puts the subject in "uid".
func twoIssuers(t *testing.T) (a, b *testissuer.Issuer, m *MultiIssuerVerifier, clk *fakeClock) {
	t.Helper()
	clk = newClock()
	a = testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now, UniqueKeys: true})
	b = testissuer.Start(t, testissuer.Options{Audience: "api://mcp", Now: clk.Now, UniqueKeys: true})
	m, err := NewMultiIssuerVerifier(context.Background(), MultiIssuerOptions{
		Resource: testResource,
		JWT: []JWTOptions{
			{Issuer: a.ID(), JWKSURL: a.JWKSURL(), Now: clk.Now, Logger: discardLogger()},
			{Issuer: b.ID(), JWKSURL: b.JWKSURL(), Audience: "api://mcp", Claims: ClaimNames{Subject: "uid"},
				Algorithms: []string{"ES256"}, Now: clk.Now, Logger: discardLogger()},
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return a, b, m, clk
}

func TestMultiIssuerVerifier(t *testing.T) {
	a, b, m, _ := twoIssuers(t)
	ctx := context.Background()
	assert.Equal(t, []string{a.ID(), b.ID()}, m.Issuers())

	pa, _, err := m.Verify(ctx, a.Token(t, claims("alice", "read")))
	require.NoError(t, err)
	pb, _, err := m.Verify(ctx, b.Token(t, testissuer.Claims{Extra: map[string]any{"uid": "alice"}, Scopes: []string{"read"}}, testissuer.WithKey(testissuer.KidES256)))
	require.NoError(t, err)
	assert.Equal(t, "alice", pa.Subject)
	assert.Equal(t, "alice", pb.Subject)
	assert.Equal(t, a.ID(), pa.Issuer)
	assert.Equal(t, b.ID(), pb.Issuer)
	assert.Equal(t, testResource, pb.Audience, "the principal's Audience is the resource, whatever the issuer's aud")
	assert.NotEqual(t, pa.Key(), pb.Key(), "the same subject of two issuers is two callers")
	assert.Equal(t, a.ID()+"#alice", pa.Key())

	fetchesA, fetchesB := a.JWKSFetches(), b.JWKSFetches()
	bES, _ := b.Key(testissuer.KidES256)
	aRS, _ := a.Key(testissuer.KidRS256)
	for _, tc := range []struct {
		name, token, reason string
	}{
		// B's key (same kid as A's) signing a token that names A: only A's
		// keys are tried, and the signature fails.
		{"A's iss signed by B's key", signWith(t, bES, "ES256", "es256", map[string]any{"iss": a.ID(), "sub": "alice", "aud": testResource, "exp": 1_900_000_000}), "signature"},
		{"B's iss signed by A's key", signWith(t, aRS, "RS256", "rs256", map[string]any{"iss": b.ID(), "uid": "alice", "aud": "api://mcp", "exp": 1_900_000_000}), "alg"},
		{"untrusted issuer", signWith(t, aRS, "RS256", "rs256", map[string]any{"iss": "https://evil.example", "sub": "alice", "aud": testResource, "exp": 1_900_000_000}), "issuer_unknown"},
		{"iss with trailing slash", a.Token(t, testissuer.Claims{Subject: "alice", Issuer: a.ID() + "/"}), "issuer_unknown"},
		{"iss missing", a.Token(t, testissuer.Claims{Subject: "alice", Extra: map[string]any{"iss": nil}}), "iss"},
		{"iss a number", a.Token(t, testissuer.Claims{Subject: "alice", Extra: map[string]any{"iss": 1}}), "iss"},
		{"iss twice", rawPayload(t, aRS, `{"iss":"`+b.ID()+`","iss":"`+a.ID()+`","sub":"alice","aud":"`+testResource+`","exp":1900000000}`), "claims"},
		{"iss and ISS", rawPayload(t, aRS, `{"ISS":"`+b.ID()+`","iss":"`+a.ID()+`","sub":"alice","aud":"`+testResource+`","exp":1900000000}`), "claims"},
		{"A's token with B's aud", a.Token(t, testissuer.Claims{Subject: "alice", Audience: []string{"api://mcp"}}), "aud"},
		{"B's token with A's subject claim only", b.Token(t, testissuer.Claims{Subject: "alice"}, testissuer.WithKey(testissuer.KidES256)), ""},
		{"opaque token, no opaque issuer", "opaque-token-value", "issuer_unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := m.Verify(ctx, tc.token)
			if tc.reason == "" { // verifies, but without a subject: B names it "uid"
				require.NoError(t, err)
				assert.Empty(t, p.Subject)
				return
			}
			require.ErrorIs(t, err, ErrInvalidToken)
			assert.Equal(t, tc.reason, rejectReason(err))
		})
	}
	// No token led to a fetch of either JWK Set beyond A's one unknown-kid refresh.
	assert.LessOrEqual(t, a.JWKSFetches()-fetchesA, int64(1))
	assert.Equal(t, fetchesB, b.JWKSFetches(), "B's keys were never fetched for A's tokens")
}

// Opaque tokens go to the one opaque issuer only; its JWT-form tokens by iss.
func TestMultiIssuerIntrospection(t *testing.T) {
	clk := newClock()
	a := testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now, UniqueKeys: true})
	b := testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now, UniqueKeys: true})
	ida, seca := a.IntrospectionCredentials()
	idb, secb := b.IntrospectionCredentials()
	m, err := NewMultiIssuerVerifier(context.Background(), MultiIssuerOptions{
		Resource: testResource,
		Introspection: []IntrospectionOptions{
			{Issuer: a.ID(), Endpoint: a.IntrospectionURL(), ClientID: ida, ClientSecret: seca, Now: clk.Now},
			{Issuer: b.ID(), Endpoint: b.IntrospectionURL(), ClientID: idb, ClientSecret: secb, Now: clk.Now},
		},
		OpaqueIssuer: a.ID(),
	})
	require.NoError(t, err)
	tokA, err := a.Opaque(claims("alice"), true)
	require.NoError(t, err)
	p, _, err := m.Verify(context.Background(), tokA)
	require.NoError(t, err)
	assert.Equal(t, a.ID()+"#alice", p.Key())
	tokB, err := b.Opaque(claims("alice"), true)
	require.NoError(t, err)
	_, _, err = m.Verify(context.Background(), tokB)
	assert.ErrorIs(t, err, ErrInvalidToken)
	assert.Zero(t, b.Introspections(), "B's endpoint never saw a token")
	jwtB := b.Token(t, claims("alice"))
	_, _, err = m.Verify(context.Background(), jwtB)
	assert.ErrorIs(t, err, ErrInvalidToken, "B does not know this JWT as an introspectable token")
	assert.Equal(t, int64(1), b.Introspections(), "a JWT naming B goes to B only")
}

func TestMultiIssuerOptions(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{})
	for name, o := range map[string]MultiIssuerOptions{
		"no issuers":        {Resource: testResource},
		"no resource":       {JWT: []JWTOptions{{Issuer: is.ID(), JWKSURL: is.JWKSURL()}}},
		"issuer no url":     {Resource: testResource, JWT: []JWTOptions{{Issuer: "issuer-a", JWKSURL: is.JWKSURL()}}},
		"issuer fragment":   {Resource: testResource, JWT: []JWTOptions{{Issuer: "https://a.example/#x", JWKSURL: is.JWKSURL()}}},
		"twice":             {Resource: testResource, JWT: []JWTOptions{{Issuer: is.ID(), JWKSURL: is.JWKSURL()}, {Issuer: is.ID(), JWKSURL: is.JWKSURL()}}},
		"other resource":    {Resource: testResource, JWT: []JWTOptions{{Issuer: is.ID(), JWKSURL: is.JWKSURL(), Resource: "https://other.example/mcp"}}},
		"unknown opaque":    {Resource: testResource, JWT: []JWTOptions{{Issuer: is.ID(), JWKSURL: is.JWKSURL()}}, OpaqueIssuer: is.ID()},
		"introspection iss": {Resource: testResource, Introspection: []IntrospectionOptions{{Endpoint: is.IntrospectionURL(), ClientID: "c"}}},
	} {
		_, err := NewMultiIssuerVerifier(context.Background(), o)
		assert.Error(t, err, name)
	}
}

// Through an Authenticator with DPoP: each issuer's DPoP-bound tokens work,
// and the Authenticator accepts the principals (Issuer set).
func TestMultiIssuerAuthenticator(t *testing.T) {
	a, b, m, clk := twoIssuers(t)
	auth, err := NewAuthenticator(NewCache(m, CacheOptions{Now: clk.Now}), Options{Resource: testResource, DPoP: dpop.Options{Mode: dpop.Allowed, Now: clk.Now}})
	require.NoError(t, err)
	k, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, _ := k.Thumbprint()
	tokA := a.Token(t, testissuer.Claims{Subject: "alice", DPoPThumbprint: jkt})
	tokB := b.Token(t, testissuer.Claims{Extra: map[string]any{"uid": "alice"}, DPoPThumbprint: jkt}, testissuer.WithKey(testissuer.KidES256))
	keys := map[string]bool{}
	for _, tok := range []string{tokA, tokB} {
		proof, err := k.Sign(testissuer.Proof{Method: "GET", URL: dpopURL, Token: tok, Time: clk.Now()})
		require.NoError(t, err)
		r, _ := http.NewRequest(http.MethodGet, dpopURL, nil)
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", proof)
		p, err := auth.Authenticate(r)
		require.NoError(t, err)
		keys[p.Key()] = true
	}
	assert.Len(t, keys, 2)
}

func signWith(t *testing.T, k *testissuer.Key, alg, kid string, claims map[string]any) string {
	t.Helper()
	h := `{"alg":"` + alg + `","kid":"` + kid + `","typ":"at+jwt"}`
	p, err := jsonMarshal(claims)
	require.NoError(t, err)
	tok, err := testissuer.Compact(alg, k.Private, []byte(h), p)
	require.NoError(t, err)
	return tok
}

func rawPayload(t *testing.T, k *testissuer.Key, payload string) string {
	t.Helper()
	tok, err := testissuer.Compact("RS256", k.Private, []byte(`{"alg":"RS256","kid":"rs256","typ":"at+jwt"}`), []byte(payload))
	require.NoError(t, err)
	return tok
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

package authn

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S3: positive table. Every algorithm, keys with and without alg, aud as a
// string and an array, typ variants.
func TestJWTVerifierAccepts(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, func(o *JWTOptions) {
		o.Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "EdDSA"}
	})
	cases := []struct {
		name string
		c    testissuer.Claims
		opts []testissuer.SignOption
	}{
		{"RS256 key with alg", claims("alice", "read"), nil},
		{"PS256 key with alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidPS256)}},
		{"RS256 key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidRSANoAlg)}},
		{"PS256 key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidRSANoAlg), testissuer.WithAlg("PS256")}},
		{"RS512 key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidRSANoAlg), testissuer.WithAlg("RS512")}},
		{"PS384 key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidRSANoAlg), testissuer.WithAlg("PS384")}},
		{"ES256 key with alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidES256)}},
		{"ES256 key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidECNoAlg)}},
		{"EdDSA key with alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidEdDSA)}},
		{"EdDSA key without alg", claims("alice", "read"), []testissuer.SignOption{testissuer.WithKey(testissuer.KidEdDSANoAlg)}},
		{"aud array with ours", testissuer.Claims{Subject: "alice", Audience: []string{"https://other.example", testResource}}, nil},
		{"aud array of one", testissuer.Claims{Subject: "alice", Audience: []string{testResource}, AudienceArray: true}, nil},
		{"typ application/at+jwt", claims("alice"), []testissuer.SignOption{testissuer.WithType("application/at+jwt")}},
		{"typ AT+JWT", claims("alice"), []testissuer.SignOption{testissuer.WithType("AT+JWT")}},
		{"typ Application/At+Jwt", claims("alice"), []testissuer.SignOption{testissuer.WithType("Application/At+Jwt")}},
		{"scp array", testissuer.Claims{Subject: "alice", Extra: map[string]any{"scp": []string{"b", "a", "b"}}}, nil},
		{"unknown header ignored", claims("alice"), []testissuer.SignOption{testissuer.WithHeader("x-custom", 1)}},
		{"nested claim", testissuer.Claims{Subject: "alice", Extra: map[string]any{"cnf": map[string]any{"jkt": "x"}}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := e.is.Token(t, tc.c, tc.opts...)
			p, exp, err := v.Verify(context.Background(), tok)
			require.NoError(t, err, "reason %s", rejectReason(err))
			assert.Equal(t, "alice", p.Subject)
			assert.Equal(t, testResource, p.Audience)
			assert.Equal(t, e.clock.Now().Add(time.Hour).Unix(), exp.Unix())
		})
	}
}

func TestJWTVerifierPrincipalFields(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, nil)
	tok := e.is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "app", Scopes: []string{"write", "read", "write"}})
	p, _, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"read", "write"}, Audience: testResource}, p)

	// azp is the fallback client id; scp the fallback scopes.
	tok = e.is.Token(t, testissuer.Claims{Subject: "bob", Extra: map[string]any{"azp": "web", "scp": "x y"}})
	p, _, err = v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, principal.Principal{Subject: "bob", ClientID: "web", Scopes: []string{"x", "y"}, Audience: testResource}, p)

	// Custom claim names.
	v2 := e.verifier(t, func(o *JWTOptions) {
		o.Claims = ClaimNames{Subject: "oid", ClientID: []string{"appid"}, Scope: []string{"roles"}}
	})
	tok = e.is.Token(t, testissuer.Claims{Subject: "ignored", Extra: map[string]any{"oid": "u-1", "appid": "a-1", "roles": []string{"admin"}}})
	p, _, err = v2.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, principal.Principal{Subject: "u-1", ClientID: "a-1", Scopes: []string{"admin"}, Audience: testResource}, p)
}

package authn

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// provider is one row of README.md's "Your provider -> options" table: a
// token of the shape that provider issues, and the options the table
// documents for it.
type provider struct {
	name   string
	issuer string // "iss" as the provider writes it
	sign   []testissuer.SignOption
	claims testissuer.Claims
	jwks   func(t *testing.T, is *testissuer.Issuer) // the JWK Set's shape
	opts   func(o *JWTOptions)                       // what the table says to set
	// without is the refusal reason of the same token with none of the
	// options set ("" when it needs none).
	without string
	// want: the principal the documented options give.
	sub, client string
	scopes      []string
}

// rsaEncJWK adds an RSA encryption key (use "enc", alg RSA-OAEP) to the
// JWK Set, as Keycloak publishes beside its signing key.
func rsaEncJWK(t *testing.T, is *testissuer.Issuer) {
	t.Helper()
	k, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	jk, err := jwk.FromRaw(k.Public())
	require.NoError(t, err)
	require.NoError(t, jk.Set(jwk.KeyIDKey, "enc-1"))
	require.NoError(t, jk.Set(jwk.KeyUsageKey, "enc"))
	require.NoError(t, jk.Set(jwk.AlgorithmKey, "RSA-OAEP"))
	raw, err := json.Marshal(jk)
	require.NoError(t, err)
	is.AddRawJWK(raw)
}

func providerRows() []provider {
	const entraAPI = "6e74172b-be56-4843-9ff4-e66a39bb12e3" // the API's application (client) id
	return []provider{
		{
			name: "Auth0 (default access token profile)", issuer: "https://tenant.example.auth0.com/",
			sign: []testissuer.SignOption{testissuer.WithType("JWT")},
			claims: testissuer.Claims{Subject: "auth0|alice", Scopes: []string{"openid", "docs:read"},
				Audience: []string{testResource, "https://tenant.example.auth0.com/userinfo"},
				Extra:    map[string]any{"azp": "auth0-client", "permissions": []string{"docs:read"}}},
			opts:    func(o *JWTOptions) { o.AllowPlainJWTType = true },
			without: "typ", sub: "auth0|alice", client: "auth0-client", scopes: []string{"docs:read", "openid"},
		},
		{
			name: "Auth0 (RFC 9068 access token profile)", issuer: "https://tenant.example.auth0.com/",
			claims: testissuer.Claims{Subject: "auth0|alice", ClientID: "auth0-client", Scopes: []string{"docs:read"},
				Audience: []string{testResource}},
			opts: func(o *JWTOptions) {}, sub: "auth0|alice", client: "auth0-client", scopes: []string{"docs:read"},
		},
		{
			name: "Entra ID (v2 access token, delegated)", issuer: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
			sign: []testissuer.SignOption{testissuer.WithType("JWT"), testissuer.WithHeader("x5t", "dGh1bWJwcmludA")},
			claims: testissuer.Claims{Subject: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", Audience: []string{entraAPI},
				Extra: map[string]any{"azp": "a3f1c9e2-0000-4000-8000-000000000001", "scp": "Docs.Read Docs.Write", "ver": "2.0",
					"tid": "9188040d-6c67-4c5b-b112-36a304b66dad", "oid": "00000000-0000-0000-66f3-3332eca7ea81"}},
			opts: func(o *JWTOptions) {
				o.AllowPlainJWTType, o.Audience = true, entraAPI
				o.Claims.Scope = []string{"scp", "roles"}
			},
			without: "typ", sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", client: "a3f1c9e2-0000-4000-8000-000000000001",
			scopes: []string{"Docs.Read", "Docs.Write"},
		},
		{
			name: "Entra ID (v2 access token, app-only roles)", issuer: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
			sign: []testissuer.SignOption{testissuer.WithType("JWT")},
			claims: testissuer.Claims{Subject: "svc-object-id", Audience: []string{entraAPI},
				Extra: map[string]any{"azp": "a3f1c9e2-0000-4000-8000-000000000002", "roles": []string{"Docs.Read.All"}, "ver": "2.0"}},
			opts: func(o *JWTOptions) {
				o.AllowPlainJWTType, o.Audience = true, entraAPI
				o.Claims.Scope = []string{"scp", "roles"}
			},
			without: "typ", sub: "svc-object-id", client: "a3f1c9e2-0000-4000-8000-000000000002", scopes: []string{"Docs.Read.All"},
		},
		{
			name: "Okta (custom authorization server)", issuer: "https://example.okta.com/oauth2/default",
			sign: []testissuer.SignOption{testissuer.WithType("")},
			claims: testissuer.Claims{Subject: "alice@example.com", Audience: []string{"api://default"},
				Extra: map[string]any{"cid": "0oa1b2c3d4", "uid": "00u1b2c3d4", "scp": []string{"openid", "docs:read"}, "ver": 1}},
			opts: func(o *JWTOptions) {
				o.AllowPlainJWTType, o.Audience = true, "api://default"
				o.Claims.ClientID = []string{"cid"}
			},
			without: "typ", sub: "alice@example.com", client: "0oa1b2c3d4", scopes: []string{"docs:read", "openid"},
		},
		{
			name: "Keycloak (audience mapper)", issuer: "https://kc.example.com/realms/mcp",
			sign: []testissuer.SignOption{testissuer.WithType("JWT")},
			claims: testissuer.Claims{Subject: "f1e2d3c4-0000-4000-8000-00000000000a", Scopes: []string{"openid", "profile", "docs:read"},
				Audience: []string{"account", testResource}, AudienceArray: true,
				Extra: map[string]any{"azp": "mcp-client", "typ": "Bearer", "preferred_username": "alice"}},
			jwks:    rsaEncJWK,
			opts:    func(o *JWTOptions) { o.AllowPlainJWTType = true },
			without: "typ", sub: "f1e2d3c4-0000-4000-8000-00000000000a", client: "mcp-client", scopes: []string{"docs:read", "openid", "profile"},
		},
		{
			name: "Amazon Cognito (resource binding)", issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123",
			sign: []testissuer.SignOption{testissuer.WithType("")}, // kid and alg only
			claims: testissuer.Claims{Subject: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", ClientID: "1example23456789", Scopes: []string{"docs:read"},
				Audience: []string{testResource},
				Extra:    map[string]any{"token_use": "access", "username": "alice", "cognito:groups": []string{"readers"}}},
			opts:    func(o *JWTOptions) { o.AllowPlainJWTType = true },
			without: "typ", sub: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", client: "1example23456789", scopes: []string{"docs:read"},
		},
		{
			name: "Ory Hydra / Ory Network (JWT access tokens)", issuer: "https://auth.example.com/",
			sign: []testissuer.SignOption{testissuer.WithType("JWT")},
			claims: testissuer.Claims{Subject: "alice", ClientID: "hydra-client", Audience: []string{testResource}, AudienceArray: true,
				Extra: map[string]any{"scp": []string{"docs:read", "offline_access"}, "ext": map[string]any{}}},
			opts:    func(o *JWTOptions) { o.AllowPlainJWTType = true },
			without: "typ", sub: "alice", client: "hydra-client", scopes: []string{"docs:read", "offline_access"},
		},
		{
			name: "Any provider, one key, no kid", issuer: "https://as.example.com",
			sign:   []testissuer.SignOption{testissuer.WithHeader("kid", nil)},
			claims: testissuer.Claims{Subject: "alice", ClientID: "c", Scopes: []string{"docs:read"}, Audience: []string{testResource}},
			jwks: func(t *testing.T, is *testissuer.Issuer) {
				is.Unpublish(testissuer.KidRSANoAlg) // rs256 is then the only key for RS256
			},
			opts: func(o *JWTOptions) {}, sub: "alice", client: "c", scopes: []string{"docs:read"},
		},
	}
}

// Each row of the provider table mints a token of that provider's shape —
// its typ (at+jwt, JWT or none), aud as a string or an array and in its
// own form, scope or scp as a string or an array (or Entra's roles),
// client_id, azp or cid, extra header parameters, kid present or absent,
// several RS256 keys and an encryption key in the JWK Set — and verifies
// it with the options the table documents; without them the token is
// refused for the reason the table names.
func TestProviderTable(t *testing.T) {
	for _, row := range providerRows() {
		t.Run(row.name, func(t *testing.T) {
			clk := newClock()
			is := testissuer.Start(t, testissuer.Options{Issuer: row.issuer, Now: clk.Now})
			if row.jwks != nil {
				row.jwks(t, is)
			}
			base := JWTOptions{Issuer: row.issuer, Resource: testResource, JWKSURL: is.JWKSURL(), Now: clk.Now}
			tok := is.Token(t, row.claims, row.sign...)

			o := base
			row.opts(&o)
			v, err := NewJWTVerifier(context.Background(), o)
			require.NoError(t, err)
			t.Cleanup(func() { _ = v.Close() })
			p, _, err := v.Verify(context.Background(), tok)
			require.NoError(t, err, "reason %s", rejectReason(err))
			assert.Equal(t, row.sub, p.Subject)
			assert.Equal(t, row.client, p.ClientID)
			assert.Equal(t, row.scopes, p.Scopes)
			assert.Equal(t, testResource, p.Audience)

			// Another resource's token of the same shape is refused.
			other := row.claims
			other.Audience = []string{"https://other.example.com/mcp"}
			_, _, err = v.Verify(context.Background(), is.Token(t, other, row.sign...))
			assert.Equal(t, "aud", rejectReason(err))

			if row.without != "" {
				plain, err := NewJWTVerifier(context.Background(), base)
				require.NoError(t, err)
				t.Cleanup(func() { _ = plain.Close() })
				_, _, err = plain.Verify(context.Background(), tok)
				assert.Equal(t, row.without, rejectReason(err), "without the documented options")
			}
		})
	}

	// Cognito without resource binding: its access tokens carry no aud,
	// and are refused whatever the options (MCP requires the audience).
	row := providerRows()[6]
	is := testissuer.Start(t, testissuer.Options{Issuer: row.issuer})
	noAud := row.claims
	noAud.Audience = nil
	o := JWTOptions{Issuer: row.issuer, Resource: testResource, JWKSURL: is.JWKSURL(), AllowPlainJWTType: true}
	v, err := NewJWTVerifier(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	_, _, err = v.Verify(context.Background(), is.Token(t, noAud, row.sign...))
	assert.Equal(t, "aud", rejectReason(err))
}

// The table's opaque-token rows: the introspection responses of Okta,
// Keycloak and Ory Hydra, verified by the Introspector with the options
// the table documents.
func TestProviderTableIntrospection(t *testing.T) {
	for _, row := range []struct {
		name   string
		issuer string
		claims testissuer.Claims
		opts   func(o *IntrospectionOptions)
		client string
		scopes []string
	}{
		{"Okta", "https://example.okta.com/oauth2/default",
			testissuer.Claims{Subject: "alice@example.com", ClientID: "0oa1b2c3d4", Scopes: []string{"docs:read", "openid"},
				Audience: []string{"api://default"}, Extra: map[string]any{"username": "alice@example.com", "uid": "00u1b2c3d4"}},
			func(o *IntrospectionOptions) { o.Audience = "api://default" }, "0oa1b2c3d4", []string{"docs:read", "openid"}},
		{"Keycloak", "https://kc.example.com/realms/mcp",
			testissuer.Claims{Subject: "f1e2d3c4", ClientID: "mcp-client", Scopes: []string{"docs:read", "profile"},
				Audience: []string{"account", testResource}, AudienceArray: true, Extra: map[string]any{"azp": "mcp-client", "typ": "Bearer"}},
			func(o *IntrospectionOptions) {}, "mcp-client", []string{"docs:read", "profile"}},
		{"Ory Hydra", "https://auth.example.com/",
			testissuer.Claims{Subject: "alice", ClientID: "hydra-client", Scopes: []string{"docs:read", "offline_access"},
				Audience: []string{testResource}, AudienceArray: true, Extra: map[string]any{"token_use": "access_token", "ext": map[string]any{}}},
			func(o *IntrospectionOptions) {}, "hydra-client", []string{"docs:read", "offline_access"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			is := testissuer.Start(t, testissuer.Options{Issuer: row.issuer})
			id, secret := is.IntrospectionCredentials()
			o := IntrospectionOptions{Endpoint: is.IntrospectionURL(), ClientID: id, ClientSecret: secret,
				Resource: testResource, Issuer: row.issuer}
			row.opts(&o)
			v, err := NewIntrospectionVerifier(o)
			require.NoError(t, err)
			tok, err := is.Opaque(row.claims, true)
			require.NoError(t, err)
			p, _, err := v.Verify(context.Background(), tok)
			require.NoError(t, err, "reason %s", rejectReason(err))
			assert.Equal(t, row.claims.Subject, p.Subject)
			assert.Equal(t, row.client, p.ClientID)
			assert.Equal(t, row.scopes, p.Scopes)
			inactive, err := is.Opaque(row.claims, false)
			require.NoError(t, err)
			_, _, err = v.Verify(context.Background(), inactive)
			assert.Equal(t, "inactive", rejectReason(err))
		})
	}
}

package app

import (
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// identityProvider is the production identity provider of a test: the
// kit's test issuer (internal/testkit/testissuer) over real HTTP on loopback, with
// keys of its own (so that two providers do not verify each other's
// tokens), its JWK Set (replaceable, to take it down) and an RFC 7662
// introspection endpoint that authenticates its client with HTTP Basic.
// Its tokens are at+jwt access tokens of client "app".
type identityProvider struct {
	*testissuer.Issuer
	url      string // the issuer identifier, and the server's URL
	audience string
}

func startIdentityProvider(t *testing.T, audience string) *identityProvider {
	t.Helper()
	return startIntrospectionProvider(t, audience, "", "")
}

// startIntrospectionProvider is startIdentityProvider whose introspection
// endpoint accepts the client id and secret (empty: the package defaults).
func startIntrospectionProvider(t *testing.T, audience, clientID, clientSecret string) *identityProvider {
	t.Helper()
	is := testissuer.Start(t, testissuer.Options{Audience: audience, UniqueKeys: true,
		IntrospectionClientID: clientID, IntrospectionClientSecret: clientSecret})
	return &identityProvider{Issuer: is, url: is.ID(), audience: audience}
}

func (idp *identityProvider) jwksURL() string { return idp.JWKSURL() }

func (idp *identityProvider) introspectionURL() string { return idp.IntrospectionURL() }

// token mints an at+jwt access token for subject with scopes.
func (idp *identityProvider) token(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	return idp.tokenFor(t, idp.audience, subject, scopes...)
}

// tokenFor mints a token of the same issuer and key for another audience.
func (idp *identityProvider) tokenFor(t *testing.T, audience, subject string, scopes ...string) string {
	t.Helper()
	return idp.Token(t, testissuer.Claims{Subject: subject, ClientID: "app", Scopes: scopes, Audience: []string{audience}})
}

// plainToken mints the same token but typed "JWT" (like an ID token)
// instead of "at+jwt".
func (idp *identityProvider) plainToken(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	return idp.Token(t, testissuer.Claims{Subject: subject, ClientID: "app", Scopes: scopes}, testissuer.WithType("JWT"))
}

// setJWKS replaces the JWK Set's handler.
func (idp *identityProvider) setJWKS(h http.Handler) { idp.SetJWKSHandler(h) }

// opaqueToken registers a random opaque token whose introspection answer
// says active (or not), for subject with scopes and audience.
func (idp *identityProvider) opaqueToken(t *testing.T, active bool, audience, subject string, scopes ...string) string {
	t.Helper()
	tok, err := idp.Opaque(testissuer.Claims{Subject: subject, ClientID: "app", Scopes: scopes, Audience: []string{audience}}, active)
	if err != nil {
		t.Fatalf("opaque token: %v", err)
	}
	return tok
}

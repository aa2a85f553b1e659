package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
)

// Two real issuers (each its own key and JWK Set over HTTP) with the same
// users: -issuer and -jwks-url given twice. Each issuer's alice has her
// own documents; a cursor of one is refused for the other; a share by
// alice of A reaches bob of A and only him; the metadata lists both; the
// request log names the issuer.
func TestSeveralIssuers(t *testing.T) {
	idpA := startIdentityProvider(t, prodResource)
	idpB := startIdentityProvider(t, prodResource)
	s := start(t, func(c *Config) {
		jwtConfig(idpA)(c)
		c.MoreIssuers = []TrustedIssuer{{Issuer: idpB.url, JWKSURL: idpB.jwksURL()}}
		c.PageSize = 5
	})
	aliceA, aliceB := idpA.token(t, "alice", ScopeRead, ScopeShare), idpB.token(t, "alice", ScopeRead, ScopeShare)
	bobA, bobB := idpA.token(t, "bob", ScopeRead), idpB.token(t, "bob", ScopeRead)

	listA, _ := s.walk(t, aliceA)
	listB, _ := s.walk(t, aliceB)
	docsA, docsB := documentsOnly(listA), documentsOnly(listB)
	require.Len(t, docsA, 12)
	require.Len(t, docsB, 12)
	for _, u := range docsA {
		assert.NotContains(t, docsB, u, "alice of A and alice of B share nothing")
	}
	// A's cursor is not B's.
	first := s.list(t, aliceA, "")
	require.NotEmpty(t, first.NextCursor)
	_, out := s.post(t, aliceB, "resources/list", map[string]any{"cursor": first.NextCursor})
	require.NotNil(t, out.Error)
	assert.Equal(t, int64(-32602), out.Error.Code)
	// Reads: A's documents are "not found" for B's alice.
	assert.NotNil(t, s.read(t, aliceB, docsA[0]).Error)
	assert.Nil(t, s.read(t, aliceA, docsA[0]).Error)

	// A share by alice of A goes to bob of A; bob of B hears nothing.
	keyBobA, keyBobB := principal.SubjectKey(idpA.url, "bob"), principal.SubjectKey(idpB.url, "bob")
	stA := s.listen(t, bobA, keyBobA, []string{AboutURI}, 1)
	defer stA.close()
	stB := s.listen(t, bobB, keyBobB, []string{AboutURI}, 1)
	defer stB.close()
	id := strings.TrimPrefix(docsA[0], documentPrefix)
	s.share(t, aliceA, id, "bob")
	s.app.hub.ResourceUpdated(t.Context(), keyBobA, AboutURI) // markers
	s.app.hub.ResourceUpdated(t.Context(), keyBobB, AboutURI)
	assert.Equal(t, []note{listChangedNote()}, stA.untilMarker(t))
	assert.Empty(t, stB.untilMarker(t), "bob of B is another user")
	bobAList, _ := s.walk(t, bobA)
	bobBList, _ := s.walk(t, bobB)
	assert.Contains(t, bobAList, docsA[0])
	assert.NotContains(t, bobBList, docsA[0])

	// The metadata lists both issuers; the log names the issuer.
	_, body := get(t, s.app.URL()+authn.WellKnownPrefix+"/mcp")
	assert.Contains(t, body, `"authorization_servers":["`+idpA.url+`","`+idpB.url+`"]`)
	assert.Contains(t, s.logs.String(), "issuer="+idpB.url)
}

func TestSeveralIssuerFlags(t *testing.T) {
	c, _, err := ParseFlags([]string{"-issuer", "https://a.example", "-jwks-url", "https://a.example/k",
		"-issuer", "https://b.example", "-jwks-url", "https://b.example/k", "-resource", "https://m.example/mcp", "-dpop", "required"},
		func(string) string { return "" }, &strings.Builder{})
	require.NoError(t, err)
	assert.Equal(t, "https://a.example", c.Issuer)
	assert.Equal(t, "https://a.example/k", c.JWKSURL)
	assert.Equal(t, []TrustedIssuer{{"https://b.example", "https://b.example/k"}}, c.MoreIssuers)
	assert.Equal(t, dpop.Required, c.DPoP)
	require.NoError(t, c.Validate())

	_, _, err = ParseFlags([]string{"-issuer", "https://a.example", "-issuer", "https://b.example", "-jwks-url", "https://a.example/k"},
		func(string) string { return "" }, &strings.Builder{})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "jwks-url", ce.Flag)

	for name, cfg := range map[string]Config{
		"twice":         {Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp", MoreIssuers: []TrustedIssuer{{"https://a.example", "https://a.example/k"}}},
		"http issuer":   {Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp", MoreIssuers: []TrustedIssuer{{"http://b.example", "https://b.example/k"}}},
		"as flag":       {Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp", AuthorizationServer: "https://c.example", MoreIssuers: []TrustedIssuer{{"https://b.example", "https://b.example/k"}}},
		"nonce w/o":     {Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp", DPoPNonce: true},
		"dpop bad mode": {Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp", DPoP: 9},
	} {
		assert.Error(t, cfg.Validate(), name)
	}
}

// DPoP in the documents server: with -dpop required, a Bearer request is
// refused with a DPoP challenge and the metadata says DPoP is required.
func TestDocumentsDPoPRequired(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	s := start(t, func(c *Config) { jwtConfig(idp)(c); c.DPoP = dpop.Required })
	res, _ := s.post(t, idp.token(t, "alice", ScopeRead), "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.True(t, strings.HasPrefix(res.Header.Get("WWW-Authenticate"), `DPoP error="invalid_token"`), res.Header.Get("WWW-Authenticate"))
	_, body := get(t, s.app.URL()+authn.WellKnownPrefix+"/mcp")
	assert.Contains(t, body, `"dpop_signing_alg_values_supported":["ES256","EdDSA","PS256","RS256"],"dpop_bound_access_tokens_required":true`)
}

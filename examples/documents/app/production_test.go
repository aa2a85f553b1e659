package app

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// A resource URI for servers behind a (pretend) proxy: tokens name it, the
// server does not need to be reachable at it.
const prodResource = "http://localhost/mcp"

func jwtConfig(is *testissuer.Issuer) func(*Config) {
	return func(c *Config) {
		c.Issuer, c.JWKSURL, c.Resource, c.Seed = is.URL(), is.JWKSURL(), prodResource, SeedAlways
	}
}

// With a real issuer: its JWTs are accepted, development mode is off, and
// tokens of the development issuer are refused.
func TestProductionJWT(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{Audience: prodResource})
	s := start(t, jwtConfig(is))
	alice := is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "app", Scopes: []string{ScopeRead}})

	uris, _ := s.walk(t, alice)
	assert.Len(t, documentsOnly(uris), 12)
	assert.Empty(t, s.stdout.String(), "no walk-through outside development mode")
	assert.NotContains(t, s.logs.String(), "DEVELOPMENT MODE")

	res, _ := get(t, s.app.URL()+"/dev/jwks.json")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "no development issuer")
	res, body := get(t, s.app.URL()+"/.well-known/oauth-protected-resource/mcp")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"authorization_servers":["`+is.URL()+`"]`)
	assert.Contains(t, body, `"resource":"`+prodResource+`"`)

	// Missing scope: 403 insufficient_scope naming documents:read.
	noScope := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{"profile"}})
	res, _ = s.post(t, noScope, "resources/list", nil)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `scope="documents:read"`)

	// An ID-token-like JWT (typ JWT) is refused without -allow-plain-jwt-type.
	plain := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{ScopeRead}}, testissuer.WithType("JWT"))
	res, _ = s.post(t, plain, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)

	// Another audience is refused.
	other := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{ScopeRead}, Audience: []string{"https://other.example/mcp"}})
	res, _ = s.post(t, other, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestProductionAllowPlainJWTType(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{Audience: prodResource})
	s := start(t, func(c *Config) { jwtConfig(is)(c); c.AllowPlainJWTType = true })
	plain := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{ScopeRead}}, testissuer.WithType("JWT"))
	assert.Len(t, documentsOnly(s.list(t, plain, "").uris()), 4)
	assert.Contains(t, s.logs.String(), "allow-plain-jwt-type")
}

// Opaque tokens through RFC 7662 introspection; the client secret never
// reaches the log.
func TestProductionIntrospection(t *testing.T) {
	const secret = "introspection-s3cret-value"
	is := testissuer.Start(t, testissuer.Options{IntrospectionClientID: "documents", IntrospectionClientSecret: secret})
	s := start(t, func(c *Config) {
		c.IntrospectionURL, c.IntrospectionClientID, c.IntrospectionClientSecret = is.IntrospectionURL(), "documents", secret
		c.Resource, c.AuthorizationServer, c.Seed = prodResource, is.URL(), SeedAlways
	})
	tok, err := is.Opaque(testissuer.Claims{Subject: "bob", Scopes: []string{ScopeRead}, Audience: []string{prodResource}}, true)
	require.NoError(t, err)
	uris, _ := s.walk(t, tok)
	assert.Len(t, documentsOnly(uris), 3)
	inactive, err := is.Opaque(testissuer.Claims{Subject: "bob", Scopes: []string{ScopeRead}, Audience: []string{prodResource}}, false)
	require.NoError(t, err)
	res, _ := s.post(t, inactive, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.NotContains(t, s.logs.String(), secret)
}

// Two instances behind a load balancer share a database and cursor keys:
// a cursor from one continues on the other. Without shared keys it is
// invalid there.
func TestSeveralInstancesShareCursorKeys(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{Audience: prodResource})
	key, err := sealedcursor.GenerateKey(1)
	require.NoError(t, err)
	dir := t.TempDir()
	fleet := func(keys string) func(*Config) {
		return func(c *Config) {
			jwtConfig(is)(c)
			c.DB, c.CursorKeys = "sqlite:"+filepath.Join(dir, "shared.db"), keys
		}
	}
	a, b := start(t, fleet(key)), start(t, fleet(key))
	alice := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{ScopeRead}})

	first := a.list(t, alice, "")
	require.NotEmpty(t, first.NextCursor)
	second := b.list(t, alice, first.NextCursor)
	assert.NotEmpty(t, second.Resources)
	assert.NotContains(t, second.uris(), first.uris()[len(first.Resources)-1], "b continued after a's page")

	lone := start(t, fleet("")) // a random per-process key
	_, out := lone.post(t, alice, "resources/list", map[string]any{"cursor": first.NextCursor})
	assert.Equal(t, "invalid", cursorReason(t, out))
}

// A JWK Set that is down at start does not stop the server: requests get
// 503 (cannot check now), never 401, and the health endpoint stays up.
func TestProductionJWKSDown(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{Audience: prodResource})
	is.SetJWKSHandler(testissuer.Status(http.StatusInternalServerError))
	s := start(t, jwtConfig(is))
	alice := is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{ScopeRead}})
	res, _ := s.post(t, alice, "resources/list", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res, _ = get(t, s.app.URL()+"/healthz")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.False(t, strings.Contains(s.logs.String(), alice))
}

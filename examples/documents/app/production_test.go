package app

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// A resource URI for servers behind a (pretend) proxy: tokens name it, the
// server does not need to be reachable at it.
const prodResource = "http://localhost/mcp"

func jwtConfig(idp *identityProvider) func(*Config) {
	return func(c *Config) {
		c.Issuer, c.JWKSURL, c.Resource, c.Seed = idp.url, idp.jwksURL(), prodResource, SeedAlways
	}
}

// With a real issuer: its JWTs are accepted, development mode is off, and
// tokens of the development issuer are refused.
func TestProductionJWT(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	s := start(t, jwtConfig(idp))
	alice := idp.token(t, "alice", ScopeRead)

	uris, _ := s.walk(t, alice)
	assert.Len(t, documentsOnly(uris), 12)
	assert.Empty(t, s.stdout.String(), "no walk-through outside development mode")
	assert.NotContains(t, s.logs.String(), "DEVELOPMENT MODE")

	res, _ := get(t, s.app.URL()+"/dev/jwks.json")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "no development issuer")
	res, body := get(t, s.app.URL()+"/.well-known/oauth-protected-resource/mcp")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"authorization_servers":["`+idp.url+`"]`)
	assert.Contains(t, body, `"resource":"`+prodResource+`"`)

	// Missing scope: 403 insufficient_scope naming documents:read.
	noScope := idp.token(t, "alice", "profile")
	res, _ = s.post(t, noScope, "resources/list", nil)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `scope="documents:read"`)

	// An ID-token-like JWT (typ JWT) is refused without -allow-plain-jwt-type.
	plain := idp.plainToken(t, "alice", ScopeRead)
	res, _ = s.post(t, plain, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)

	// Another audience is refused.
	other := idp.tokenFor(t, "https://other.example/mcp", "alice", ScopeRead)
	res, _ = s.post(t, other, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// Outside development mode pages hold the kit's 50 resources (small pages
// are for the walk-through only): clients that stop after 64 pages can
// list 3,200 resources.
func TestProductionPageSize(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	s := start(t, jwtConfig(idp))
	require.NoError(t, store.SeedMany(context.Background(), s.app.db, "dave", 120))
	dave := idp.token(t, "dave", ScopeRead)
	first := s.list(t, dave, "")
	assert.Len(t, first.Resources, 50, "the kit's default")
	uris, pages := s.walk(t, dave)
	assert.Len(t, documentsOnly(uris), 120)
	assert.Equal(t, 3, pages, "the about resource and 120 documents at 50 a page")

	s = start(t, func(c *Config) { jwtConfig(idp)(c); c.PageSize = 7 })
	assert.Len(t, s.list(t, idp.token(t, "alice", ScopeRead), "").Resources, 7, "-page-size wins")
}

func TestProductionAllowPlainJWTType(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	s := start(t, func(c *Config) { jwtConfig(idp)(c); c.AllowPlainJWTType = true })
	plain := idp.plainToken(t, "alice", ScopeRead)
	assert.Len(t, documentsOnly(s.list(t, plain, "").uris()), 12, "all of alice's documents on the first page of 50")
	assert.Contains(t, s.logs.String(), "allow-plain-jwt-type")
}

// Opaque tokens through RFC 7662 introspection; the client secret never
// reaches the log.
func TestProductionIntrospection(t *testing.T) {
	const secret = "introspection-s3cret-value"
	idp := startIntrospectionProvider(t, prodResource, "documents", secret)
	s := start(t, func(c *Config) {
		c.IntrospectionURL, c.IntrospectionClientID, c.IntrospectionClientSecret = idp.introspectionURL(), "documents", secret
		c.Resource, c.AuthorizationServer, c.Seed = prodResource, idp.url, SeedAlways
	})
	tok := idp.opaqueToken(t, true, prodResource, "bob", ScopeRead)
	uris, _ := s.walk(t, tok)
	assert.Len(t, documentsOnly(uris), 3)
	inactive := idp.opaqueToken(t, false, prodResource, "bob", ScopeRead)
	res, _ := s.post(t, inactive, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.NotContains(t, s.logs.String(), secret)
}

// Two instances behind a load balancer share a database and cursor keys:
// a cursor from one continues on the other. Without shared keys it is
// invalid there.
func TestSeveralInstancesShareCursorKeys(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	key, err := sealedcursor.GenerateKey(1)
	require.NoError(t, err)
	dir := t.TempDir()
	fleet := func(keys string) func(*Config) {
		return func(c *Config) {
			jwtConfig(idp)(c)
			c.DB, c.CursorKeys = "sqlite:"+filepath.Join(dir, "shared.db"), keys
			c.PageSize = 5 // alice's 13 resources span pages
		}
	}
	a, b := start(t, fleet(key)), start(t, fleet(key))
	alice := idp.token(t, "alice", ScopeRead)

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
	idp := startIdentityProvider(t, prodResource)
	idp.setJWKS(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	s := start(t, jwtConfig(idp))
	alice := idp.token(t, "alice", ScopeRead)
	res, _ := s.post(t, alice, "resources/list", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res, _ = get(t, s.app.URL()+"/healthz")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.False(t, strings.Contains(s.logs.String(), alice))
}

// Issue 21: development mode pages as production does (50 a page), so
// that clients that stop after 64 pages (the TypeScript SDK v2, the MCP
// Inspector) can list a user with 400 documents there too: 9 pages, where
// 5 a page made 81.
func TestDevelopmentPageSizeFitsClientCeilings(t *testing.T) {
	const clientPageCeiling = 64 // TypeScript SDK v2 and MCP Inspector
	s := start(t, nil)
	require.True(t, s.cfg.Development())
	require.NoError(t, store.SeedMany(context.Background(), s.app.db, "dave", 400))
	dave := s.token(t, "dave")
	assert.Len(t, s.list(t, dave, "").Resources, DefaultPageSize)
	uris, pages := s.walk(t, dave)
	assert.Len(t, documentsOnly(uris), 400)
	assert.LessOrEqual(t, pages, clientPageCeiling, "listable by clients that stop at 64 pages")
	assert.Equal(t, 9, pages, "the about resource and 400 documents at 50 a page")
}

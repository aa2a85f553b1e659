package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// "token USER" prints a token that the fleet's instances accept: signed
// with the key kept in -data-dir (what the serving issuer publishes), for
// the fleet's resource, with both scopes.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	const resource = "http://127.0.0.1:8080/mcp"
	var out bytes.Buffer
	require.NoError(t, run([]string{"-addr", "127.0.0.1:8090", "-data-dir", dir, "-resource", resource, "token", "alice"}, &out, io.Discard))

	// The JWK Set the serving issuer would publish, from the same key.
	is, err := devissuer.Load(dir, "http://127.0.0.1:8090", resource, devissuer.Options{})
	require.NoError(t, err)
	jwks := httptest.NewServer(is.JWKSHandler())
	defer jwks.Close()
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: "http://127.0.0.1:8090", Resource: resource, JWKSURL: jwks.URL, Algorithms: []string{"ES256"},
	})
	require.NoError(t, err)
	defer v.Close()
	p, _, err := v.Verify(context.Background(), strings.TrimSpace(out.String()))
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, []string{app.ScopeRead, app.ScopeShare}, p.Scopes)

	err = run([]string{"-data-dir", dir, "token"}, io.Discard, io.Discard)
	assert.Error(t, err, "token without a user")
}

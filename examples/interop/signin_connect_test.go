package interop_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// TestSignInAtConnect (issue 37): with -require-sign-in the documents
// server answers the TypeScript SDK v2 client's very first request,
// initialize, with the 401 challenge; the SDK starts OAuth at connect (its
// authorization asks for the challenge's scope and the resource), the
// person signs in through the page, and the client connects again and
// lists alice's documents. Without the option the SDK's initialize is
// served without a token (TestSignInWithTypeScriptSDKs).
func TestSignInAtConnect(t *testing.T) {
	node, sdkDir := tsSDK(t)
	playwright(t, sdkDir)
	browser := chromium(t)
	d := startDocumentsWith(t, func(c *app.Config) { c.RequireSignIn = true })
	bobs := d.bobsDocuments(t)
	s := runSignIn(t, node, sdkDir, browser, d.mcpURL, map[string]any{
		"sdk": "v2", "registration": "dynamic", "user": "alice", "login": "mcpkit",
		"signInAtConnect": true, "foreign": bobs[:1],
	})
	require.NotEmpty(t, s.Requests)
	first := s.Requests[0]
	assert.Equal(t, "initialize", first.RPCMethod, "the client's first request")
	assert.Equal(t, http.StatusUnauthorized, first.Status, "refused at connect")
	require.Len(t, s.SignIns, 1, "one sign-in, at connect")
	assert.Equal(t, "connect-1", s.SignIns[0].Label)
	a := s.SignIns[0].Authorization
	assert.Equal(t, app.ScopeRead, a.Scope, "the scope of the connect challenge")
	assert.Equal(t, d.app.Resource(), a.Resource)
	initialized := false
	for _, rq := range s.Requests[1:] {
		if rq.RPCMethod == "initialize" && rq.Status == http.StatusOK {
			initialized = true
		}
	}
	assert.True(t, initialized, "initialize again, with the token")
	assert.Equal(t, "alice", s.Token.Sub)
	assert.Contains(t, s.Listed, app.AboutURI)
	assert.NotEmpty(t, documentsOf(s.Listed))
	for _, u := range bobs {
		assert.NotContains(t, s.Listed, u)
	}
}

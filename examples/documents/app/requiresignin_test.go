package app

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -require-sign-in (issue 37): an anonymous initialize and the public
// about resource get the 401 challenge with the resource metadata URL;
// a signed-in caller is served as before. Without the flag, the anonymous
// initialize is served (the about resource is public).
func TestRequireSignInFlag(t *testing.T) {
	initialize := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}}
	plain := start(t, nil)
	res, _ := plain.post(t, "", "initialize", initialize)
	assert.Equal(t, http.StatusOK, res.StatusCode)

	s := start(t, func(c *Config) { c.RequireSignIn = true })
	for _, rq := range []struct {
		method string
		params any
	}{{"initialize", initialize}, {"ping", nil}, {"resources/read", map[string]any{"uri": AboutURI}}} {
		res, _ := s.post(t, "", rq.method, rq.params)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, rq.method)
		assert.Contains(t, res.Header.Get("WWW-Authenticate"), `resource_metadata="`, rq.method)
	}
	alice := s.token(t, "alice")
	res, rpc := s.post(t, alice, "initialize", initialize)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Nil(t, rpc.Error)
	uris := s.list(t, alice, "").uris()
	assert.Contains(t, uris, AboutURI, "the about resource, signed in")
	assert.NotEmpty(t, documentsOnly(uris))
}

package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
)

// The Observer (and so the audit record) of a refused request reports the
// status the Authenticator answers it with, for every refusal, DPoP's
// included: a refused proof is a 401 the client can act on, not a server
// error.
func TestChallengeStatusIsTheResponses(t *testing.T) {
	auth, err := authn.NewAuthenticator(nil, authn.Options{
		Resource: "https://mcp.example.com/mcp",
		DPoP:     authn.DPoPOptions{Mode: authn.DPoPAllowed, RequireNonce: true},
	})
	require.NoError(t, err)
	for name, e := range map[string]error{
		"no credentials":     authn.ErrNoCredentials,
		"invalid token":      authn.ErrInvalidToken,
		"invalid request":    authn.ErrInvalidRequest,
		"unavailable":        authn.ErrUnavailable,
		"insufficient scope": &principal.ScopeError{Required: []string{"read"}},
		"invalid DPoP proof": authn.ErrInvalidDPoPProof,
		"use DPoP nonce":     authn.ErrUseDPoPNonce,
	} {
		r := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
		r.Header.Set("Authorization", "DPoP abc")
		w := httptest.NewRecorder()
		auth.WriteError(w, r, e)
		status, outcome := challengeStatus(e)
		assert.Equal(t, w.Code, status, name)
		assert.NotEqual(t, OutcomeError, outcome, name)
	}
}

package devissuer

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
)

const exchangeSecret = "exchange-secret-0123456789"

func exchangeHarness(t *testing.T) (*harness, string) {
	var upstream string
	h := newHarness(t, func(o *ServerOptions) {
		o.Exchange = &ExchangeOptions{ClientID: "mcp-server", ClientSecret: exchangeSecret,
			Audiences: map[string][]string{"http://127.0.0.1:9/api": {"photos:read"}}}
		upstream = "http://127.0.0.1:9/api"
	})
	return h, upstream
}

func (h *harness) tokenExchange(id, secret string, form url.Values) (int, map[string]any) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+"/dev/token", strings.NewReader(form.Encode()))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	require.NoError(h.t, json.Unmarshal(b, &out), "%s", b)
	return resp.StatusCode, out
}

func exchangeForm(subject, audience string) url.Values {
	return url.Values{"grant_type": {grantTokenExchange}, "subject_token": {subject}, "subject_token_type": {tokenTypeAccessToken},
		"requested_token_type": {tokenTypeAccessToken}, "audience": {audience}}
}

func TestTokenExchange(t *testing.T) {
	h, upstream := exchangeHarness(t)
	alice, err := h.is.Sign("alice", []string{"documents:read"}, time.Hour)
	require.NoError(t, err)

	status, out := h.tokenExchange("mcp-server", exchangeSecret, exchangeForm(alice, upstream))
	require.Equal(t, 200, status, "%v", out)
	assert.Equal(t, tokenTypeAccessToken, out["issued_token_type"])
	assert.Equal(t, "photos:read", out["scope"])
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: h.is.Issuer(), Resource: upstream,
		JWKSURL: h.is.JWKSURL(), HTTPClient: h.is.Client(), Now: h.clock.Now})
	require.NoError(t, err)
	defer v.Close()
	p, _, err := v.Verify(context.Background(), out["access_token"].(string))
	require.NoError(t, err, "a token for the upstream's audience")
	assert.Equal(t, "alice", p.Subject)
	_, _, err = h.verifier.Verify(context.Background(), out["access_token"].(string))
	assert.Error(t, err, "not a token for the MCP server")

	// An unknown audience, a wrong secret, a subject token not of this
	// server's audience (the exchanged one), a scope the upstream lacks.
	status, out = h.tokenExchange("mcp-server", exchangeSecret, exchangeForm(alice, "http://127.0.0.1:9/other"))
	assert.Equal(t, 400, status)
	assert.Equal(t, "invalid_target", out["error"])
	status, out = h.tokenExchange("mcp-server", "wrong-secret-0123456789", exchangeForm(alice, upstream))
	assert.Equal(t, 401, status)
	assert.Equal(t, "invalid_client", out["error"])
	exchanged, _ := h.is.mintFor(upstream, "alice", "c", nil, time.Hour)
	status, out = h.tokenExchange("mcp-server", exchangeSecret, exchangeForm(exchanged, upstream))
	assert.Equal(t, 400, status, "an upstream token is not a subject token")
	assert.Equal(t, "invalid_grant", out["error"])
	f := exchangeForm(alice, upstream)
	f.Set("scope", "photos:write")
	status, out = h.tokenExchange("mcp-server", exchangeSecret, f)
	assert.Equal(t, 400, status)
	assert.Equal(t, "invalid_scope", out["error"])
	f = exchangeForm(alice, upstream)
	f.Set("grant_type", "authorization_code")
	status, out = h.tokenExchange("mcp-server", exchangeSecret, f)
	assert.Equal(t, 400, status)
	assert.Equal(t, "unsupported_grant_type", out["error"])
	h.clock.Advance(2 * time.Hour)
	status, out = h.tokenExchange("mcp-server", exchangeSecret, exchangeForm(alice, upstream))
	assert.Equal(t, 400, status, "an expired subject token")
	assert.Equal(t, "invalid_grant", out["error"])
}

func TestTokenExchangeOffByDefault(t *testing.T) {
	h := newHarness(t, nil)
	alice, err := h.is.Sign("alice", []string{"documents:read"}, time.Hour)
	require.NoError(t, err)
	status, out := h.tokenExchange("mcp-server", exchangeSecret, exchangeForm(alice, "http://127.0.0.1:9/api"))
	assert.Equal(t, 401, status)
	assert.Equal(t, "invalid_client", out["error"])
	_, err = h.is.NewServer(ServerOptions{Scopes: testScopes, Exchange: &ExchangeOptions{ClientID: "x", ClientSecret: "short"}})
	assert.Error(t, err)
}

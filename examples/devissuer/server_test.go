package devissuer

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// The metadata names every endpoint, S256 only, public clients, client ID
// metadata documents, and is served at the RFC 8414 location and both
// OpenID discovery locations, with CORS for browser-based clients.
func TestServerMetadata(t *testing.T) {
	h := newHarness(t, nil)
	for _, path := range []string{
		"/.well-known/oauth-authorization-server/dev", "/.well-known/openid-configuration/dev", "/dev/.well-known/openid-configuration",
	} {
		t.Run(path, func(t *testing.T) {
			resp, err := http.Get(h.url + path)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
			var md map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&md))
			assert.Equal(t, h.url+"/dev", md["issuer"], "identical to the issuer the metadata URL was built from")
			assert.Equal(t, h.url+"/dev/authorize", md["authorization_endpoint"])
			assert.Equal(t, h.url+"/dev/token", md["token_endpoint"])
			assert.Equal(t, h.url+"/dev/register", md["registration_endpoint"])
			assert.Equal(t, h.url+"/dev/jwks.json", md["jwks_uri"])
			assert.Equal(t, []any{"S256"}, md["code_challenge_methods_supported"])
			assert.Equal(t, []any{"none"}, md["token_endpoint_auth_methods_supported"])
			assert.Equal(t, true, md["client_id_metadata_document_supported"])
			assert.Equal(t, true, md["authorization_response_iss_parameter_supported"])
			assert.Equal(t, []any{"documents:read", "documents:share"}, md["scopes_supported"])
			assert.Equal(t, []any{"code"}, md["response_types_supported"])
		})
	}
	req, _ := http.NewRequest(http.MethodOptions, h.url+"/dev/token", nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "the token endpoint's preflight")
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "POST", resp.Header.Get("Access-Control-Allow-Methods"))
	assert.ElementsMatch(t, []string{
		"/dev/authorize", "/dev/consent", "/dev/token", "/dev/register", "/dev/jwks.json",
		"/.well-known/oauth-authorization-server/dev", "/.well-known/openid-configuration/dev", "/dev/.well-known/openid-configuration",
	}, h.s.Paths())
}

// The whole flow with a dynamically registered client: the login page,
// alice chosen, a code with state and iss, the exchange, and an RFC 9068
// access token the kit's verifier accepts, for alice, this client, the
// requested scope and this resource; then a rotated refresh.
func TestServerSignIn(t *testing.T) {
	h := newHarness(t, nil)
	id := h.register(defaultClient())
	require.True(t, strings.HasPrefix(id, dcrPrefix))
	verifier, challenge := pkce()
	b := h.browser()
	p := h.login(b, h.authQuery(id, challenge))
	require.Equal(t, http.StatusOK, p.status, p.body)
	for _, want := range []string{"Development mode", "Test client", "documents:read", "list and read your documents",
		"alice", "bob", "carol", "another user", "Approve", "Deny", testRedirect} {
		assert.Contains(t, p.body, want)
	}
	assert.NotContains(t, p.body, "documents:share", "only the requested scopes are shown")
	assert.NotContains(t, p.body, "<script", "no scripts")
	q := h.approve(b, p, "alice")
	assert.Equal(t, "st-123", q.Get("state"))
	assert.Equal(t, h.url+"/dev", q.Get("iss"), "RFC 9207")
	require.NotEmpty(t, q.Get("code"))

	status, tok := h.exchange(codeForm(id, q.Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	assert.Equal(t, "Bearer", tok["token_type"])
	assert.Equal(t, "documents:read", tok["scope"])
	assert.EqualValues(t, 3600, tok["expires_in"])
	require.NotEmpty(t, tok["refresh_token"], "the client registered the refresh_token grant")
	pr, _, err := h.verifier.Verify(context.Background(), tok["access_token"].(string))
	require.NoError(t, err, "the kit verifies the token")
	assert.Equal(t, "alice", pr.Subject)
	assert.Equal(t, id, pr.ClientID)
	assert.Equal(t, []string{"documents:read"}, pr.Scopes)
	assert.Equal(t, h.url+"/mcp", pr.Audience)
	assert.Equal(t, "at+jwt", segment(t, tok["access_token"].(string), 0)["typ"])

	// Refresh: a new access token and a new refresh token (rotation).
	old := tok["refresh_token"].(string)
	status, ref := h.exchange(url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {old}, "resource": {h.url + "/mcp"}})
	require.Equal(t, http.StatusOK, status, "%v", ref)
	assert.NotEqual(t, old, ref["refresh_token"], "rotated")
	pr, _, err = h.verifier.Verify(context.Background(), ref["access_token"].(string))
	require.NoError(t, err)
	assert.Equal(t, "alice", pr.Subject)

	// Narrower scopes on refresh are fine; the next refresh still has the whole grant.
	status, narrow := h.exchange(url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {ref["refresh_token"].(string)}, "scope": {"documents:read"}})
	require.Equal(t, http.StatusOK, status, "%v", narrow)
}

// A client that did not register the refresh_token grant gets no refresh
// token; a request without scope gets the default scopes; another user
// typed in the field is signed in; several scopes are shown and granted.
func TestServerSignInVariants(t *testing.T) {
	h := newHarness(t, nil)
	md := defaultClient()
	md["grant_types"] = []string{"authorization_code"}
	delete(md, "client_name")
	id := h.register(md)
	verifier, challenge := pkce()
	b := h.browser()
	q := h.authQuery(id, challenge)
	q.Del("scope")
	q.Del("resource") // optional: the audience is the only resource
	p := h.login(b, q)
	assert.Contains(t, p.body, "An unnamed client")
	resp := h.submit(b, url.Values{"request": {p.request}, "csrf": {p.csrf}, "other": {"dave"}, "user": {""}, "decision": {"approve"}}, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	status, tok := h.exchange(codeForm(id, h.redirectQuery(resp).Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	assert.Nil(t, tok["refresh_token"])
	assert.Equal(t, "documents:read", tok["scope"], "the default scope")
	pr, _, err := h.verifier.Verify(context.Background(), tok["access_token"].(string))
	require.NoError(t, err)
	assert.Equal(t, "dave", pr.Subject)

	verifier, challenge = pkce()
	q = h.authQuery(id, challenge)
	q.Set("scope", "documents:read documents:share")
	b = h.browser() // another browser: in dave's, only dave may approve (TestStepUpIsTheSignedInUsers)
	p = h.login(b, q)
	assert.Contains(t, p.body, "share your documents")
	status, tok = h.exchange(codeForm(id, h.approve(b, p, "bob").Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	assert.Equal(t, "documents:read documents:share", tok["scope"])
}

// Deny sends access_denied, with state and iss, and issues nothing.
func TestServerDeny(t *testing.T) {
	h := newHarness(t, nil)
	id := h.register(defaultClient())
	_, challenge := pkce()
	b := h.browser()
	p := h.login(b, h.authQuery(id, challenge))
	resp := h.submit(b, url.Values{"request": {p.request}, "csrf": {p.csrf}, "decision": {"deny"}}, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	q := h.redirectQuery(resp)
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.Equal(t, "st-123", q.Get("state"))
	assert.Equal(t, h.url+"/dev", q.Get("iss"))
	assert.Empty(t, q.Get("code"))
	codes, grants := h.issued()
	assert.Zero(t, codes+grants)
}

// Approving without choosing a user shows the page again with a message,
// and the sign-in can still be answered.
func TestServerApproveWithoutUser(t *testing.T) {
	h := newHarness(t, nil)
	id := h.register(defaultClient())
	_, challenge := pkce()
	b := h.browser()
	p := h.login(b, h.authQuery(id, challenge))
	for _, form := range []url.Values{
		{"request": {p.request}, "csrf": {p.csrf}, "decision": {"approve"}},
		{"request": {p.request}, "csrf": {p.csrf}, "decision": {"approve"}, "other": {"bad\x01name"}},
	} {
		req, _ := http.NewRequest(http.MethodPost, h.url+"/dev/consent", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := b.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(body), "Choose a user")
	}
	h.approve(b, p, "carol")
}

// Registration answers RFC 7591's 201 with the registered metadata: the
// client is public whatever it asked for.
func TestServerRegistration(t *testing.T) {
	h := newHarness(t, nil)
	md := defaultClient()
	md["token_endpoint_auth_method"] = nil
	md["logo_uri"] = "https://example.com/logo.png" // unknown to the server: ignored
	status, body := h.postJSON("/dev/register", md)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(body, &out))
	assert.Equal(t, "none", out["token_endpoint_auth_method"])
	assert.Equal(t, []any{"http://127.0.0.1/callback"}, out["redirect_uris"])
	assert.Equal(t, []any{"authorization_code", "refresh_token"}, out["grant_types"])
	assert.Equal(t, "Test client", out["client_name"])
	assert.NotContains(t, out, "client_secret")
	assert.NotContains(t, out, "logo_uri")
}

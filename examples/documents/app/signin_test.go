package app

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var formField = regexp.MustCompile(`name="(request|csrf)" value="([^"]*)"`)

// signInAs runs the authorization code flow against the server's own
// development authorization server as a client would, with net/http as the
// browser: discovery from the resource metadata, registration, the login
// page, approve as user, the code exchange. It returns the access token.
func signInAs(t *testing.T, s *testServer, user, scope string) string {
	t.Helper()
	res, body := get(t, s.app.URL()+"/.well-known/oauth-protected-resource/mcp")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &prm))
	require.Len(t, prm.AuthorizationServers, 1)
	issuer, _ := url.Parse(prm.AuthorizationServers[0])
	res, body = get(t, issuer.Scheme+"://"+issuer.Host+"/.well-known/oauth-authorization-server"+issuer.Path)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var md struct {
		Issuer, AuthorizationEndpoint, TokenEndpoint, RegistrationEndpoint string
	}
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	md.Issuer, md.AuthorizationEndpoint = raw["issuer"].(string), raw["authorization_endpoint"].(string)
	md.TokenEndpoint, md.RegistrationEndpoint = raw["token_endpoint"].(string), raw["registration_endpoint"].(string)
	require.Equal(t, prm.AuthorizationServers[0], md.Issuer)

	const redirect = "http://127.0.0.1:43210/cb"
	reg, err := http.Post(md.RegistrationEndpoint, "application/json", strings.NewReader(`{"client_name":"app test","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`))
	require.NoError(t, err)
	var client struct {
		ClientID string `json:"client_id"`
	}
	require.NoError(t, json.NewDecoder(reg.Body).Decode(&client))
	reg.Body.Close()
	require.Equal(t, http.StatusCreated, reg.StatusCode)

	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect}, "scope": {scope},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {s.app.Resource()}, "state": {"s1"}}
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = browser.Get(md.AuthorizationEndpoint + "?" + q.Encode())
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", page)
	assert.Contains(t, string(page), "mcpkit documents")
	assert.Contains(t, string(page), "Development mode")
	form := url.Values{"user": {user}, "decision": {"approve"}}
	for _, m := range formField.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	res, err = browser.PostForm(s.app.URL()+"/dev/consent", form)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	tr, err := http.PostForm(md.TokenEndpoint, url.Values{"grant_type": {"authorization_code"}, "client_id": {client.ClientID},
		"code": {loc.Query().Get("code")}, "code_verifier": {verifier}, "redirect_uri": {redirect}, "resource": {s.app.Resource()}})
	require.NoError(t, err)
	defer tr.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	require.NoError(t, json.NewDecoder(tr.Body).Decode(&tok))
	require.Equal(t, http.StatusOK, tr.StatusCode)
	require.Equal(t, scope, tok.Scope)
	return tok.AccessToken
}

// In development mode the server signs people in: a token obtained
// through its login page lists alice's documents only; the readers of a
// document need documents:share too (403 insufficient_scope naming both
// scopes, the step-up a client follows), and are the owner's to read.
func TestDevelopmentSignIn(t *testing.T) {
	s := start(t, nil)
	alice := signInAs(t, s, "alice", ScopeRead)
	printed := s.token(t, "alice") // the token subcommand keeps working beside it
	viaPage, _ := s.walk(t, alice)
	viaPrinted, _ := s.walk(t, printed)
	assert.Equal(t, viaPrinted, viaPage, "the same documents as with a printed token")
	require.NotEmpty(t, documentsOnly(viaPage))

	aliceDoc := strings.TrimPrefix(documentsOnly(viaPage)[0], documentPrefix)
	readers := "docs://readers/" + aliceDoc
	res, out := s.post(t, alice, "resources/read", map[string]any{"uri": readers})
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "%+v", out)
	ch := res.Header.Get("WWW-Authenticate")
	assert.Contains(t, ch, `error="insufficient_scope"`)
	assert.Contains(t, ch, `scope="documents:read documents:share"`, "every scope the read needs, so a client asking for exactly these goes on")
	assert.Contains(t, ch, "resource_metadata=")

	stepped := signInAs(t, s, "alice", ScopeRead+" "+ScopeShare)
	got := s.read(t, stepped, readers)
	require.Nil(t, got.Error, "%+v", got.Error)
	var rr struct {
		Contents []struct{ Text string } `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(got.Result, &rr))
	require.Len(t, rr.Contents, 1)
	assert.Equal(t, "alice\n", rr.Contents[0].Text)

	bob := signInAs(t, s, "bob", ScopeRead+" "+ScopeShare)
	notFound := s.read(t, bob, readers)
	require.NotNil(t, notFound.Error, "bob may not see who reads alice's document")
	assert.EqualValues(t, -32002, notFound.Error.Code)
	bobs, _ := s.walk(t, bob)
	for _, u := range documentsOnly(viaPage) {
		assert.NotContains(t, bobs, u)
	}
}

// With a real issuer the development authorization server is off: none of
// its paths answers, and the metadata names the real issuer only.
func TestNoSignInWithARealIssuer(t *testing.T) {
	idp := startIdentityProvider(t, prodResource)
	s := start(t, jwtConfig(idp))
	for _, path := range []string{"/dev/authorize", "/dev/token", "/dev/register", "/dev/consent",
		"/.well-known/oauth-authorization-server/dev", "/.well-known/openid-configuration/dev", "/dev/.well-known/openid-configuration"} {
		res, _ := get(t, s.app.URL()+path)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
	res, body := get(t, s.app.URL()+"/.well-known/oauth-protected-resource/mcp")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &prm))
	assert.Equal(t, []string{idp.url}, prm.AuthorizationServers)
}

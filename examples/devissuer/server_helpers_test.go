package devissuer

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
)

// clock is a settable time source.
type clock = fakeclock.Clock

// harness is an authorization server on a real loopback listener, the
// issuer of http://ADDR/dev for the resource http://ADDR/mcp.
type harness struct {
	t        *testing.T
	is       *Issuer
	s        *Server
	url      string // http://ADDR
	clock    *clock
	verifier *authn.JWTVerifier
	names    *nameLog // the names the metadata fetcher resolved
}

var testScopes = []Scope{{"documents:read", "list and read your documents"}, {"documents:share", "share your documents"}}

func newHarness(t *testing.T, mutate func(*ServerOptions)) *harness {
	t.Helper()
	var h harness
	h.t, h.clock = t, fakeclock.New(time.Now())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.s.ServeHTTP(w, r) }))
	h.url = "http://" + srv.Listener.Addr().String()
	is, err := New(h.url+"/dev", h.url+"/mcp", Options{Now: h.clock.Now})
	require.NoError(t, err)
	opts := ServerOptions{Scopes: testScopes, Logger: discard()}
	if mutate != nil {
		mutate(&opts)
	}
	h.is = is
	h.s, err = is.NewServer(opts)
	require.NoError(t, err)
	h.names = &nameLog{}
	h.s.docs.lookup = testLookup(h.names) // no real DNS: see TestClientMetadataDocumentAttacks
	srv.Start()
	t.Cleanup(srv.Close)
	h.verifier, err = authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: is.Issuer(), Resource: is.Audience(), JWKSURL: is.JWKSURL(), HTTPClient: is.Client(),
		Now: h.clock.Now,
	})
	require.NoError(t, err)
	t.Cleanup(func() { h.verifier.Close() })
	return &h
}

// browser is a person's browser: cookies kept, redirects not followed (the
// test reads where they go).
func (h *harness) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(h.t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// pkce returns a code_verifier and its S256 code_challenge.
func pkce() (verifier, challenge string) {
	verifier = secret() + "-x"
	s := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(s[:])
}

const testRedirect = "http://127.0.0.1:41234/callback"

// register registers a client by RFC 7591 and returns its id.
func (h *harness) register(metadata map[string]any) string {
	h.t.Helper()
	status, body := h.postJSON("/dev/register", metadata)
	require.Equal(h.t, http.StatusCreated, status, "%s", body)
	var out struct {
		ClientID string `json:"client_id"`
	}
	require.NoError(h.t, json.Unmarshal(body, &out))
	return out.ClientID
}

func (h *harness) postJSON(path string, v any) (int, []byte) {
	h.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(h.t, err)
	resp, err := http.Post(h.url+path, "application/json", strings.NewReader(string(b)))
	require.NoError(h.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func defaultClient() map[string]any {
	return map[string]any{
		"client_name": "Test client", "redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none",
	}
}

// authQuery is a valid authorization request of clientID.
func (h *harness) authQuery(clientID, challenge string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {testRedirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-123"},
		"scope": {"documents:read"}, "resource": {h.url + "/mcp"},
	}
}

// page is a fetched HTML page.
type page struct {
	status  int
	header  http.Header
	body    string
	request string // the form's sign-in id
	csrf    string
}

var (
	hiddenRequest = regexp.MustCompile(`name="request" value="([^"]*)"`)
	hiddenCSRF    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
)

func (h *harness) get(b *http.Client, rawURL string) page {
	h.t.Helper()
	resp, err := b.Get(rawURL)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := page{status: resp.StatusCode, header: resp.Header, body: string(body)}
	if m := hiddenRequest.FindStringSubmatch(p.body); m != nil {
		p.request = html.UnescapeString(m[1])
	}
	if m := hiddenCSRF.FindStringSubmatch(p.body); m != nil {
		p.csrf = html.UnescapeString(m[1])
	}
	return p
}

// login opens the login page of q in b.
func (h *harness) login(b *http.Client, q url.Values) page {
	h.t.Helper()
	return h.get(b, h.url+"/dev/authorize?"+q.Encode())
}

// submit posts the login form and returns the response.
func (h *harness) submit(b *http.Client, form url.Values, header http.Header) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+"/dev/consent", strings.NewReader(form.Encode()))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.Do(req)
	require.NoError(h.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// approve submits the page's form as user and returns the redirect's query.
func (h *harness) approve(b *http.Client, p page, user string) url.Values {
	h.t.Helper()
	require.Equal(h.t, http.StatusOK, p.status, p.body)
	resp := h.submit(b, url.Values{"request": {p.request}, "csrf": {p.csrf}, "user": {user}, "decision": {"approve"}}, nil)
	require.Equal(h.t, http.StatusSeeOther, resp.StatusCode)
	return h.redirectQuery(resp)
}

// redirectQuery checks that resp redirects to the test redirect URI (any
// loopback port) and returns its query.
func (h *harness) redirectQuery(resp *http.Response) url.Values {
	h.t.Helper()
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(h.t, err)
	require.Equal(h.t, "127.0.0.1:41234", loc.Host, "to the redirect URI of the request")
	require.Equal(h.t, "/callback", loc.Path)
	return loc.Query()
}

// exchange posts a token request and returns the status and the decoded
// JSON object.
func (h *harness) exchange(form url.Values) (int, map[string]any) {
	h.t.Helper()
	resp, err := http.Post(h.url+"/dev/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.NoError(h.t, err)
	defer resp.Body.Close()
	require.Equal(h.t, "no-store", resp.Header.Get("Cache-Control"))
	var out map[string]any
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func codeForm(clientID, code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"code_verifier": {verifier}, "redirect_uri": {testRedirect}}
}

// signIn runs the whole flow for user and returns the token response.
func (h *harness) signIn(clientID, user string) map[string]any {
	h.t.Helper()
	verifier, challenge := pkce()
	b := h.browser()
	q := h.approve(b, h.login(b, h.authQuery(clientID, challenge)), user)
	status, tok := h.exchange(codeForm(clientID, q.Get("code"), verifier))
	require.Equal(h.t, http.StatusOK, status, "%v", tok)
	return tok
}

// issued reports how many codes and refresh tokens the server holds.
func (h *harness) issued() (codes, refresh int) { return h.s.codes.Len(), h.s.grants.Len() }

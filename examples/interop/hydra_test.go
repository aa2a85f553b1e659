package interop_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/interop/hydra"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/principal"
)

const hydraHint = `build Ory Hydra v2.3.0 and export its path:
	eval "$(bash .ci/hydra.sh)"`

// hydraBinary returns the Hydra binary of MCPKIT_HYDRA; missing, it skips
// the test (fails it under CI=true).
func hydraBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MCPKIT_HYDRA")
	if _, err := os.Stat(bin); bin == "" || err != nil {
		if mustRun() {
			t.Fatalf(mustRunReason()+"no Hydra binary in MCPKIT_HYDRA=%q; %s", bin, hydraHint)
		}
		t.Skipf("no Hydra binary in MCPKIT_HYDRA=%q; %s", bin, hydraHint)
	}
	return bin
}

// freePorts returns n distinct loopback ports that were free a moment ago
// (held together, so that no two are the same).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// hydraServer is a running Hydra: its public and admin URLs and issuer.
type hydraServer struct {
	public, admin, issuer string
}

// startHydra runs Hydra with an in-memory database (DSN memory), its
// login and consent pages on loginApp, until the test ends.
func startHydra(t *testing.T, bin, loginApp string, pub, adm int) hydraServer {
	t.Helper()
	h := hydraServer{public: fmt.Sprintf("http://127.0.0.1:%d", pub), admin: fmt.Sprintf("http://127.0.0.1:%d", adm)}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	config := fmt.Sprintf(`dsn: memory
serve:
  public: {host: 127.0.0.1, port: %d}
  admin: {host: 127.0.0.1, port: %d}
urls:
  self: {issuer: %s/}
  login: %s/login
  consent: %s/consent
secrets:
  system: [%q]
strategies:
  access_token: jwt
oidc:
  dynamic_client_registration: {enabled: true}
log: {level: warn}
`, pub, adm, h.public, loginApp, loginApp, base64.RawURLEncoding.EncodeToString(secret))
	cfgFile := filepath.Join(t.TempDir(), "hydra.yml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(config), 0o600))
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out", "--config", cfgFile)
	cmd.Env = append(os.Environ(), "SQA_OPT_OUT=true")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	started := time.Now()
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("hydra output:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(90 * time.Second) // a hang guard, not a timing assertion
	ready := func(u string) bool {
		res, err := http.Get(u + "/health/ready")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	for { // the public and the admin server become ready separately
		if ready(h.admin) && ready(h.public) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hydra not ready:\n%s", logs.String())
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("hydra ended before it was ready (%v):\n%s", err, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Logf("Hydra ready %v after start", time.Since(started).Round(time.Millisecond))
	var md struct {
		Issuer string `json:"issuer"`
	}
	getJSON(t, h.public+"/.well-known/openid-configuration", &md)
	h.issuer = md.Issuer
	return h
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, u)
	require.NoError(t, json.NewDecoder(res.Body).Decode(out))
}

// postJSON sends body to u and decodes the answer of status want.
func postJSON(t *testing.T, u string, body, out any, want int) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	res, err := http.Post(u, "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	require.Equal(t, want, res.StatusCode, "%s: %s", u, raw)
	require.NoError(t, json.Unmarshal(raw, out))
}

// hydraTokens is a token endpoint answer.
type hydraTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
}

// signInHydra runs the authorization code flow with PKCE as a public
// client does, the login app accepting for the person: it returns the
// token endpoint's answer. audienceParam is the parameter naming the
// resource: "resource" (RFC 8707, what MCP clients send; the login and
// consent app grants it) or "audience" (Hydra's own).
func signInHydra(t *testing.T, h hydraServer, clientID, redirect, scope, audienceParam, resource string) hydraTokens {
	t.Helper()
	verifier := base64.RawURLEncoding.EncodeToString(randomBytes(t, 32))
	sum := sha256.Sum256([]byte(verifier))
	state := base64.RawURLEncoding.EncodeToString(randomBytes(t, 16))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "scope": {scope},
		"state": {state}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		audienceParam: {resource}}
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) || len(via) > 20 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := browser.Get(h.public + "/oauth2/auth?" + q.Encode())
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, []int{http.StatusFound, http.StatusSeeOther}, res.StatusCode, "the flow ends at the client's redirect URI: %s", body)
	back, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, state, back.Query().Get("state"))
	code := back.Query().Get("code")
	require.NotEmpty(t, code, "no code: %s", back.Query().Get("error_description"))
	return tokenRequest(t, h, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}}, http.StatusOK)
}

func tokenRequest(t *testing.T, h hydraServer, form url.Values, want int) hydraTokens {
	t.Helper()
	res, err := http.PostForm(h.public+"/oauth2/token", form)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	require.Equal(t, want, res.StatusCode, "%s", raw)
	var tok hydraTokens
	require.NoError(t, json.Unmarshal(raw, &tok))
	return tok
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// TestSignInWithHydra (issue 37): Ory Hydra v2.3.0, a second real
// authorization server, with an in-memory database and the login and
// consent app of examples/interop/hydra. A public client (registered
// dynamically, RFC 7591) signs alice in with the authorization code and
// PKCE, naming the resource with RFC 8707's resource parameter as MCP
// clients do (the consent app grants it as audience: Hydra itself reads
// only its audience parameter, which the opaque client below uses); Hydra's JWT access token
// (typ JWT, aud an array, scp an array) is verified by authn.JWTVerifier
// with the options the README's provider table gives, and an endpoint
// serves alice's record with it. A record that needs docs:share answers
// the 403 challenge naming it; the client signs in again for the wider
// scope and reads it. The refresh token gives a new access token once and
// is refused when reused. A client with opaque access tokens gets tokens
// that authn.IntrospectionVerifier verifies at Hydra's admin introspection
// endpoint.
func TestSignInWithHydra(t *testing.T) {
	bin := hydraBinary(t)
	ports := freePorts(t, 3) // distinct: Hydra's public and admin servers, the MCP server
	pub, adm, mcpPort := ports[0], ports[1], ports[2]
	app, err := hydra.New(fmt.Sprintf("http://127.0.0.1:%d", adm), "alice")
	require.NoError(t, err)
	appSrv := httptest.NewServer(app)
	t.Cleanup(appSrv.Close)
	h := startHydra(t, bin, appSrv.URL, pub, adm)

	// The MCP server: its resource URI is the audience the clients ask for.
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort)
	read := func(token, uri string) *http.Response {
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
		req, err := http.NewRequest(http.MethodPost, resource, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}

	// Dynamic registration of a public client, its tokens JWTs.
	redirect := "http://127.0.0.1:1/callback"
	var client struct {
		ClientID string `json:"client_id"`
	}
	postJSON(t, h.public+"/oauth2/register", map[string]any{
		"client_name": "mcpkit hydra test", "redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none", "scope": "docs:read docs:share offline_access",
		"audience": []string{resource},
	}, &client, http.StatusCreated)
	require.NotEmpty(t, client.ClientID)

	tok := signInHydra(t, h, client.ClientID, redirect, "docs:read offline_access", "resource", resource)
	// The verifier starts once Hydra has issued a token: a JWK Set
	// fetched before Hydra's access token key exists lacks it, and the
	// key would then be fetched only after UnknownKeyCooldown.
	jv, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: h.issuer, Resource: resource, JWKSURL: h.public + "/.well-known/jwks.json", AllowPlainJWTType: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = jv.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(jv, authn.CacheOptions{}), authn.Options{Resource: resource, Scopes: []string{"docs:read"}})
	require.NoError(t, err)
	projects := inventory.Template{Name: "projects", URITemplate: "proj://projects/{id}", RequiredScopes: []string{"docs:read"},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			if req.Params["id"] == "shared" && !req.Principal.HasScopes("docs:share") {
				return nil, &principal.ScopeError{Required: []string{"docs:read", "docs:share"}}
			}
			return []inventory.Contents{{URI: req.URI, Text: "project " + req.Params["id"] + " of " + req.Principal.Subject}}, nil
		}}
	inv, err := inventory.New(nil, []inventory.Template{projects}, inventory.Options{})
	require.NoError(t, err)
	endpoint, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth})
	require.NoError(t, err)
	mcp := httptest.NewUnstartedServer(endpoint)
	mcp.Listener.Close()
	mcp.Listener, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", mcpPort))
	require.NoError(t, err)
	mcp.Start()
	t.Cleanup(mcp.Close)
	// The shape the README's provider table names: typ JWT, aud and scp
	// arrays, client_id.
	parts := strings.Split(tok.AccessToken, ".")
	require.Len(t, parts, 3)
	var hdr struct {
		Typ, Kid string
	}
	var claims struct {
		Aud      []string `json:"aud"`
		Scp      []string `json:"scp"`
		ClientID string   `json:"client_id"`
	}
	for i, out := range []any{&hdr, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	assert.Equal(t, "JWT", hdr.Typ)
	assert.NotEmpty(t, hdr.Kid)
	assert.Equal(t, []string{resource}, claims.Aud, "the resource parameter, granted by the consent app")
	assert.Equal(t, []string{"docs:read", "offline_access"}, claims.Scp)
	assert.Equal(t, client.ClientID, claims.ClientID)
	p, _, err := jv.Verify(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, client.ClientID, p.ClientID)
	assert.Equal(t, []string{"docs:read", "offline_access"}, p.Scopes)
	assert.Equal(t, resource, p.Audience)
	assert.Equal(t, http.StatusOK, read(tok.AccessToken, "proj://projects/7").StatusCode)

	// Step-up: the record needs docs:share.
	res := read(tok.AccessToken, "proj://projects/shared")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `error="insufficient_scope", scope="docs:read docs:share"`)
	wider := signInHydra(t, h, client.ClientID, redirect, "docs:read docs:share offline_access", "resource", resource)
	assert.Equal(t, http.StatusOK, read(wider.AccessToken, "proj://projects/shared").StatusCode)

	// Refresh: a new access token, once.
	require.NotEmpty(t, tok.RefreshToken)
	refreshed := tokenRequest(t, h, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client.ClientID}}, http.StatusOK)
	p, _, err = jv.Verify(context.Background(), refreshed.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	again := tokenRequest(t, h, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client.ClientID}}, http.StatusBadRequest)
	assert.Equal(t, "invalid_grant", again.Error, "a refresh token is good once")

	// Opaque access tokens, verified by introspection at the admin API.
	var opaqueClient struct {
		ClientID string `json:"client_id"`
	}
	postJSON(t, h.admin+"/admin/clients", map[string]any{
		"client_name": "mcpkit hydra test (opaque)", "redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none", "scope": "docs:read",
		"audience": []string{resource}, "access_token_strategy": "opaque",
	}, &opaqueClient, http.StatusCreated)
	otok := signInHydra(t, h, opaqueClient.ClientID, redirect, "docs:read", "audience", resource)
	_, _, err = jv.Verify(context.Background(), otok.AccessToken)
	assert.Error(t, err, "not a JWT")
	iv, err := authn.NewIntrospectionVerifier(authn.IntrospectionOptions{Endpoint: h.admin + "/admin/oauth2/introspect",
		ClientID: "mcpkit", ClientSecret: "unused-by-hydra-admin", Resource: resource, Issuer: h.issuer})
	require.NoError(t, err)
	p, _, err = iv.Verify(context.Background(), otok.AccessToken)
	require.NoError(t, err, "introspection")
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, opaqueClient.ClientID, p.ClientID)
	assert.Equal(t, []string{"docs:read"}, p.Scopes)
	_, _, err = iv.Verify(context.Background(), otok.AccessToken+"x")
	assert.True(t, errors.Is(err, authn.ErrInvalidToken), "an unknown token is inactive")
}

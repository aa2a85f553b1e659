package app

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
)

// identityProvider is the production identity provider of a test, over
// real HTTP on loopback: the development issuer's key and tokens (kept in
// a temporary directory), its JWK Set at /jwks.json (replaceable, to take
// it down), and an RFC 7662 introspection endpoint at /introspect that
// authenticates its client with HTTP Basic.
type identityProvider struct {
	url string // the issuer identifier, and the server's URL
	dir string // the signing key's directory
	is  *devissuer.Issuer

	mu           sync.Mutex
	jwks         http.Handler
	clientID     string
	clientSecret string
	opaque       map[string][]byte // token -> introspection response
}

func startIdentityProvider(t *testing.T, audience string) *identityProvider {
	t.Helper()
	idp := &identityProvider{dir: t.TempDir(), opaque: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		idp.mu.Lock()
		h := idp.jwks
		idp.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/introspect", idp.introspect)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	idp.url = srv.URL
	idp.is = idp.issuer(t, audience)
	idp.jwks = idp.is.JWKSHandler()
	return idp
}

// issuer returns the provider's issuer (same key) minting for audience.
func (idp *identityProvider) issuer(t *testing.T, audience string) *devissuer.Issuer {
	t.Helper()
	is, err := devissuer.Open(idp.dir, idp.url, audience, devissuer.Options{ClientID: "app"})
	require.NoError(t, err)
	return is
}

func (idp *identityProvider) jwksURL() string { return idp.url + "/jwks.json" }

func (idp *identityProvider) introspectionURL() string { return idp.url + "/introspect" }

// token mints an at+jwt access token for subject with scopes.
func (idp *identityProvider) token(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	tok, err := idp.is.Sign(subject, scopes, time.Hour)
	require.NoError(t, err)
	return tok
}

// tokenFor mints a token of the same issuer and key for another audience.
func (idp *identityProvider) tokenFor(t *testing.T, audience, subject string, scopes ...string) string {
	t.Helper()
	tok, err := idp.issuer(t, audience).Sign(subject, scopes, time.Hour)
	require.NoError(t, err)
	return tok
}

// plainToken mints the same token but typed "JWT" (like an ID token)
// instead of "at+jwt": the claims of a real token, re-signed with the
// issuer's key under a header that differs in typ only.
func (idp *identityProvider) plainToken(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	parts := strings.Split(idp.token(t, subject, scopes...), ".")
	require.Len(t, parts, 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	head, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	var h struct {
		Kid string `json:"kid"`
	}
	require.NoError(t, json.Unmarshal(head, &h))

	pemBytes, err := os.ReadFile(filepath.Join(idp.dir, devissuer.KeyFile))
	require.NoError(t, err)
	key, err := jwk.ParseKey(pemBytes, jwk.WithPEM(true))
	require.NoError(t, err)
	hdrs := jws.NewHeaders()
	require.NoError(t, hdrs.Set(jws.KeyIDKey, h.Kid))
	require.NoError(t, hdrs.Set(jws.TypeKey, "JWT"))
	signed, err := jws.Sign(payload, jws.WithKey(jwa.ES256, key, jws.WithProtectedHeaders(hdrs)))
	require.NoError(t, err)
	return string(signed)
}

// setJWKS replaces the JWK Set's handler.
func (idp *identityProvider) setJWKS(h http.Handler) {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.jwks = h
}

// setIntrospectionClient sets the credentials the introspection endpoint
// requires.
func (idp *identityProvider) setIntrospectionClient(id, secret string) {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.clientID, idp.clientSecret = id, secret
}

// opaqueToken registers a random opaque token whose introspection answer
// says active (or not), for subject with scopes and audience.
func (idp *identityProvider) opaqueToken(t *testing.T, active bool, audience, subject string, scopes ...string) string {
	t.Helper()
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	now := time.Now()
	body, err := json.Marshal(map[string]any{
		"active": active, "token_type": "Bearer", "iss": idp.url, "aud": audience, "sub": subject,
		"client_id": "app", "scope": strings.Join(scopes, " "), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	require.NoError(t, err)
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.opaque[tok] = body
	return tok
}

func (idp *identityProvider) introspect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok { // RFC 6749 §2.3.1: form-encoded, then Basic
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	idp.mu.Lock()
	wantID, wantSecret := idp.clientID, idp.clientSecret
	idp.mu.Unlock()
	if !ok || wantID == "" || id != wantID || secret != wantSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	idp.mu.Lock()
	body, found := idp.opaque[r.PostForm.Get("token")]
	idp.mu.Unlock()
	if !found {
		body = []byte(`{"active":false}`)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

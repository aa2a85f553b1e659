package devissuer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
)

const (
	testIssuer   = "http://127.0.0.1:8080/dev"
	testAudience = "http://127.0.0.1:8080/mcp"
)

func open(t *testing.T, dir string) *Issuer {
	t.Helper()
	is, err := Open(dir, testIssuer, testAudience, Options{})
	require.NoError(t, err)
	return is
}

func verifier(t *testing.T, is *Issuer, client *http.Client, jwksURL string) *authn.JWTVerifier {
	t.Helper()
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: is.Issuer(), Resource: is.Audience(), JWKSURL: jwksURL, HTTPClient: client,
	})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return v
}

func segment(t *testing.T, tok string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestOpenCreatesPrivateKeyAndReusesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first := open(t, dir)
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(dir, KeyFile))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "key file mode")
		di, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), di.Mode().Perm(), "data directory mode")
	}
	// A second process (Load, as the token subcommand does) gets the same
	// key: its tokens verify against the first one's JWK Set.
	second, err := Load(dir, testIssuer, testAudience, Options{})
	require.NoError(t, err)
	assert.Equal(t, first.kid, second.kid)
	tok, err := second.Sign("alice", []string{"documents:read"}, time.Hour)
	require.NoError(t, err)
	v := verifier(t, first, first.Client(), first.JWKSURL())
	p, exp, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.WithinDuration(t, time.Now().Add(time.Hour), exp, time.Minute)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files left behind")
}

func TestLoadWithoutKey(t *testing.T) {
	_, err := Load(t.TempDir(), testIssuer, testAudience, Options{})
	assert.ErrorIs(t, err, ErrNoKey)
}

func TestRefusesKeyOthersCanRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := t.TempDir()
	open(t, dir)
	require.NoError(t, os.Chmod(filepath.Join(dir, KeyFile), 0o644))
	_, err := Load(dir, testIssuer, testAudience, Options{})
	assert.Error(t, err)
	_, err = Open(dir, testIssuer, testAudience, Options{})
	assert.Error(t, err, "Open must not replace or accept the exposed key")
}

func TestRefusesGarbageKeyFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, KeyFile), []byte("not a key"), 0o600))
	_, err := Open(dir, testIssuer, testAudience, Options{})
	assert.Error(t, err)
}

func TestConcurrentOpenAgreesOnOneKey(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	kids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			is, err := Open(dir, testIssuer, testAudience, Options{})
			if assert.NoError(t, err) {
				kids[i] = is.kid
			}
		})
	}
	wg.Wait()
	for _, k := range kids {
		assert.Equal(t, kids[0], k)
	}
}

func TestSignedTokenShape(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	is, err := Open(t.TempDir(), testIssuer, testAudience, Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := is.Sign("bob", []string{"documents:read", "profile"}, 30*time.Minute)
	require.NoError(t, err)
	h := segment(t, tok, 0)
	assert.Equal(t, map[string]any{"alg": "ES256", "kid": is.kid, "typ": "at+jwt"}, h)
	c := segment(t, tok, 1)
	assert.Equal(t, testIssuer, c["iss"])
	assert.Equal(t, testAudience, c["aud"])
	assert.Equal(t, "bob", c["sub"])
	assert.Equal(t, DefaultClientID, c["client_id"])
	assert.Equal(t, "documents:read profile", c["scope"])
	assert.Equal(t, float64(now.Unix()), c["iat"])
	assert.Equal(t, float64(now.Add(30*time.Minute).Unix()), c["exp"])
	assert.NotEmpty(t, c["jti"])
	other, err := is.Sign("bob", nil, time.Minute)
	require.NoError(t, err)
	assert.NotEqual(t, c["jti"], segment(t, other, 1)["jti"], "jti is random")
}

// A subject is bounded in UTF-16 code units, not bytes: 256 Cyrillic
// letters (512 bytes) are signed.
func TestSignNonASCIISubject(t *testing.T) {
	is := open(t, t.TempDir())
	for _, subject := range []string{strings.Repeat("д", 256), strings.Repeat("😀", 128)} {
		_, err := is.Sign(subject, nil, time.Hour)
		assert.NoError(t, err, "%d bytes", len(subject))
	}
}

func TestSignRejects(t *testing.T) {
	is := open(t, t.TempDir())
	for name, tc := range map[string]struct {
		subject string
		scopes  []string
		ttl     time.Duration
	}{
		"empty subject":   {"", nil, time.Hour},
		"control char":    {"al\nice", nil, time.Hour},
		"long subject":    {strings.Repeat("a", 257), nil, time.Hour},
		"long in UTF-16":  {strings.Repeat("😀", 129), nil, time.Hour}, // 258 code units
		"invalid UTF-8":   {"al\xffice", nil, time.Hour},
		"zero ttl":        {"alice", nil, 0},
		"ttl over max":    {"alice", nil, MaxTTL + time.Second},
		"scope with ws":   {"alice", []string{"a b"}, time.Hour},
		"scope with dq":   {"alice", []string{`a"`}, time.Hour},
		"empty scope":     {"alice", []string{""}, time.Hour},
		"negative ttl":    {"alice", nil, -time.Hour},
		"scope backslash": {"alice", []string{`a\b`}, time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := is.Sign(tc.subject, tc.scopes, tc.ttl)
			assert.Error(t, err)
		})
	}
}

func TestOpenRejectsBadIssuer(t *testing.T) {
	for _, iss := range []string{"", "127.0.0.1/dev", "ftp://h/dev", "http:///dev", "http://h/dev?x=1", "http://u@h/dev"} {
		_, err := Open(t.TempDir(), iss, testAudience, Options{})
		assert.Error(t, err, iss)
	}
	_, err := Open(t.TempDir(), testIssuer, "", Options{})
	assert.Error(t, err)
}

func TestHandlersOverRealHTTP(t *testing.T) {
	dir := t.TempDir()
	// The issuer URL must name the test server, so build it in two steps.
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	is, err := Open(dir, srv.URL+"/dev", srv.URL+"/mcp", Options{})
	require.NoError(t, err)
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	mux.Handle(is.MetadataPath(), is.MetadataHandler())

	// authn fetches the JWK Set over real HTTP (loopback http is allowed).
	v := verifier(t, is, nil, srv.URL+is.JWKSPath())
	tok, err := is.Sign("carol", []string{"documents:read"}, time.Hour)
	require.NoError(t, err)
	p, _, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, "carol", p.Subject)

	res, err := http.Get(srv.URL + is.MetadataPath())
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	var md map[string]any
	require.NoError(t, json.Unmarshal(body, &md))
	assert.Equal(t, srv.URL+"/dev", md["issuer"])
	assert.Equal(t, srv.URL+"/dev/jwks.json", md["jwks_uri"])

	res, err = http.Get(srv.URL + is.JWKSPath())
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, "application/jwk-set+json", res.Header.Get("Content-Type"))
	assert.NotContains(t, string(body), `"d"`, "the JWK Set holds no private key")

	res, err = http.Post(srv.URL+is.JWKSPath(), "text/plain", nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

func TestClientServesOnlyTheJWKS(t *testing.T) {
	is := open(t, t.TempDir())
	c := is.Client()
	res, err := c.Get(is.JWKSURL())
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(body), is.kid)
	for _, u := range []string{"http://127.0.0.1:8080/dev/other", "http://example.com/dev/jwks.json", "http://127.0.0.1:8080/.well-known/oauth-authorization-server/dev"} {
		_, err := c.Get(u)
		assert.ErrorIs(t, err, errNotLocal, u)
	}
	_, err = c.Post(is.JWKSURL(), "text/plain", strings.NewReader("x"))
	assert.ErrorIs(t, err, errNotLocal)
}

// New keeps its key in memory: its tokens verify with its own JWK Set,
// every New has a different key (a token of one is refused by the other's
// verifier), and it writes nothing to disk.
func TestNewKeepsAFreshKeyInMemory(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	before, err := os.ReadDir(wd)
	require.NoError(t, err)

	a, err := New(testIssuer, testAudience, Options{ClientID: "mount-example"})
	require.NoError(t, err)
	b, err := New(testIssuer, testAudience, Options{})
	require.NoError(t, err)
	assert.NotEqual(t, a.kid, b.kid, "a fresh key each time")

	tok, err := a.Sign("alice", []string{"notes:read"}, 8*time.Hour)
	require.NoError(t, err)
	p, _, err := verifier(t, a, a.Client(), a.JWKSURL()).Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, "mount-example", p.ClientID)
	_, _, err = verifier(t, b, b.Client(), b.JWKSURL()).Verify(context.Background(), tok)
	assert.Error(t, err, "another in-memory issuer's token")

	after, err := os.ReadDir(wd)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after), "no key file written")

	_, err = New("ftp://h/dev", testAudience, Options{})
	assert.Error(t, err, "the issuer URL is checked as for Open")
}

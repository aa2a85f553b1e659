package testissuer

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fetchJWKS(t *testing.T, is *Issuer) jwk.Set {
	t.Helper()
	resp, err := http.Get(is.JWKSURL())
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	set, err := jwk.Parse(body)
	require.NoError(t, err)
	return set
}

func TestTokensVerifyWithTheJWKS(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	is := Start(t, Options{Audience: "https://mcp.example.com", Now: func() time.Time { return now }})
	set := fetchJWKS(t, is)
	assert.Equal(t, 7, set.Len())
	for _, kid := range []string{KidRS256, KidPS256, KidES256, KidEdDSA} {
		tok := is.Token(t, Claims{Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}}, WithKey(kid))
		parsed, err := jwt.ParseString(tok, jwt.WithKeySet(set), jwt.WithValidate(true), jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
			jwt.WithIssuer(is.ID()), jwt.WithAudience("https://mcp.example.com"))
		require.NoError(t, err, kid)
		assert.Equal(t, "alice", parsed.Subject())
		assert.Equal(t, now.Add(time.Hour).Unix(), parsed.Expiration().Unix())
		scope, _ := parsed.Get("scope")
		assert.Equal(t, "a b", scope)
		msg, err := jws.Parse([]byte(tok))
		require.NoError(t, err)
		h := msg.Signatures()[0].ProtectedHeaders()
		assert.Equal(t, "at+jwt", h.Type())
		assert.Equal(t, kid, h.KeyID())
	}
	for _, kid := range []string{KidRSANoAlg, KidECNoAlg, KidEdDSANoAlg} {
		k, ok := set.LookupKeyID(kid)
		require.True(t, ok)
		assert.Empty(t, k.Algorithm().String(), kid)
	}
	assert.Equal(t, int64(1), is.JWKSFetches())
}

func TestClaimsAndOptions(t *testing.T) {
	is := Start(t, Options{})
	p, err := is.Payload(Claims{Subject: "s", Audience: []string{"x"}, AudienceArray: true, NotBefore: time.Unix(5, 0),
		Extra: map[string]any{"exp": nil, "custom": 1}})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(p, &m))
	assert.Equal(t, []any{"x"}, m["aud"])
	assert.NotContains(t, m, "exp")
	assert.Equal(t, float64(5), m["nbf"])
	assert.Equal(t, float64(1), m["custom"])
	assert.Equal(t, is.URL(), m["iss"])

	tok := is.Token(t, Claims{Subject: "s"}, WithType(""), WithHeader("jku", "https://evil"), WithAlg("PS256"))
	hdr, _, _ := strings.Cut(tok, ".")
	raw, err := b64dec(hdr)
	require.NoError(t, err)
	assert.JSONEq(t, `{"alg":"PS256","kid":"rs256","jku":"https://evil"}`, string(raw))

	_, err = is.Sign(Claims{}, WithKey("missing"))
	assert.Error(t, err)
}

func TestRawHelpers(t *testing.T) {
	none, err := Compact("none", nil, []byte(`{"alg":"none"}`), []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(none, "."))
	hs, err := Compact("HS256", []byte("secret"), []byte(`{"alg":"HS256"}`), []byte(`{}`))
	require.NoError(t, err)
	assert.Len(t, strings.Split(hs, "."), 3)
	js, err := ToJSON(hs, false, map[string]any{"sub": "admin"})
	require.NoError(t, err)
	assert.Contains(t, js, `"sub":"admin"`)
	assert.Contains(t, js, `"protected"`)
	js, err = ToJSON(hs, true, nil)
	require.NoError(t, err)
	assert.Contains(t, js, `"signatures"`)
	is := Start(t, Options{})
	pem, err := is.PublicKeyPEM(KidRS256)
	require.NoError(t, err)
	assert.Contains(t, string(pem), "BEGIN PUBLIC KEY")
	raw, err := is.SignRaw(KidES256, "", []byte(`{"x":1}`), []byte(`not json`))
	require.NoError(t, err)
	assert.Len(t, strings.Split(raw, "."), 3)
}

func TestHooks(t *testing.T) {
	is := Start(t, Options{UniqueKeys: true})
	get := func() (int, string) {
		resp, err := http.Get(is.JWKSURL())
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	is.SetJWKSHandler(Status(http.StatusServiceUnavailable))
	code, _ := get()
	assert.Equal(t, 503, code)
	is.SetJWKSHandler(Body([]byte("garbage")))
	_, body := get()
	assert.Equal(t, "garbage", body)
	is.SetJWKSHandler(Huge(100_000, true))
	_, body = get()
	assert.Len(t, body, 100_000)
	is.SetJWKSHandler(nil)

	is.Unpublish(KidRS256)
	require.NoError(t, is.AddKey("new", EC256, "", false))
	is.AddRawJWK(json.RawMessage(`{"kty":"oct","kid":"o","k":"AAAA"}`))
	_, body = get()
	assert.NotContains(t, body, `"rs256"`)
	assert.Contains(t, body, `"new"`)
	assert.Contains(t, body, `"oct"`)
	is.Publish(KidRS256)
	_, body = get()
	assert.Contains(t, body, `"rs256"`)
	assert.Equal(t, int64(5), is.JWKSFetches())

	release := make(chan struct{})
	is.SetJWKSHandler(is.Stall(release, nil))
	done := make(chan int)
	go func() { c, _ := get(); done <- c }()
	close(release)
	assert.Equal(t, 200, <-done)
}

func TestIntrospectionEndpoint(t *testing.T) {
	is := Start(t, Options{Audience: "https://r.example"})
	tok, err := is.Opaque(Claims{Subject: "bob", Scopes: []string{"x"}}, true)
	require.NoError(t, err)
	post := func(id, secret, token string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, is.IntrospectionURL(), strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(id, secret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	id, secret := is.IntrospectionCredentials()
	code, m := post(id, secret, tok)
	assert.Equal(t, 200, code)
	assert.Equal(t, true, m["active"])
	assert.Equal(t, "bob", m["sub"])
	assert.Equal(t, "https://r.example", m["aud"])
	_, m = post(id, secret, "unknown")
	assert.Equal(t, map[string]any{"active": false}, m)
	code, _ = post(id, "wrong", tok)
	assert.Equal(t, 401, code)
	assert.Equal(t, int64(3), is.Introspections())
}

func b64dec(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

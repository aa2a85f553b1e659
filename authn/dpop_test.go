package authn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/principal"
)

// A DPoP-bound token with a valid proof is accepted, for each proof key
// type, on every request: the token's verification is cached, the proof
// is checked each time (a second request needs a second proof).
func TestDPoPAccepted(t *testing.T) {
	for _, kt := range []testissuer.KeyType{testissuer.EC256, testissuer.Ed25519, testissuer.RSA} {
		d := newDPoPEnv(t, kt, nil)
		for i := range 3 {
			w := d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
			require.Equal(t, http.StatusOK, w.Code, "key type %d, request %d: %s", kt, i, w.Header().Values("WWW-Authenticate"))
			assert.Equal(t, "alice", w.Header().Get("X-Subject"))
			assert.Equal(t, d.jkt, w.Header().Get("X-Jkt"))
		}
		assert.Equal(t, 1, d.cache.Len(), "the token's verification is cached")
		// The scheme is case-insensitive (RFC 9110 §11.1).
		w := d.send(http.MethodGet, d.url, "dpop "+d.token, d.proof(t, http.MethodGet, nil))
		assert.Equal(t, http.StatusOK, w.Code)
	}
}

// The attack rows of RFC 9449 against a DPoP-allowed server whose keys
// come from a real JWK Set over HTTP. Each row is one request; a proof
// that fails is never remembered, so the jti of a failed proof can still
// be used once by a valid one (checked after the table).
func TestDPoPAttacks(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, nil)
	other, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	priv, err := d.key.PrivateJWK()
	require.NoError(t, err)
	otherCl := claims("alice", "read")
	otherJKT, err := other.Thumbprint()
	require.NoError(t, err)
	otherCl.DPoPThumbprint = otherJKT
	otherToken := d.is.Token(t, otherCl, testissuer.WithKey(testissuer.KidES256))
	replayed := d.proof(t, http.MethodPost, nil)
	require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, replayed).Code)
	sameJTI := d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.ID = "fixed-jti"; p.Time = d.clock.Now().Add(-seconds(1)) })
	require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, sameJTI).Code)
	hmacKey := []byte("x")
	hs, err := testissuer.Compact("HS256", hmacKey, []byte(`{"typ":"dpop+jwt","alg":"HS256","jwk":{"kty":"oct","k":"eA"}}`), []byte(`{}`))
	require.NoError(t, err)
	pub, err := d.key.PublicJWK()
	require.NoError(t, err)

	type row struct {
		name    string
		method  string
		target  string
		authz   string
		proofs  []string
		status  int
		scheme  string // the challenge scheme carrying the error
		errCode string
	}
	bad := func(name string, mod func(*testissuer.Proof)) row {
		return row{name: name, proofs: []string{d.proof(t, http.MethodPost, mod)}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"}
	}
	rows := []row{
		// Replay: the very same proof again, and another proof with the same jti.
		{name: "replayed proof", proofs: []string{replayed}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		bad("same jti, new proof", func(p *testissuer.Proof) { p.ID = "fixed-jti" }),
		// htm / htu: a proof for another request.
		bad("htm GET on a POST", func(p *testissuer.Proof) { p.Method = "GET" }),
		bad("htm lower case", func(p *testissuer.Proof) { p.Method = "post" }),
		bad("htu other path", func(p *testissuer.Proof) { p.URL = "https://mcp.example.com/other" }),
		bad("htu trailing slash", func(p *testissuer.Proof) { p.URL = "https://mcp.example.com/mcp/" }),
		bad("htu other host", func(p *testissuer.Proof) { p.URL = "https://evil.example/mcp" }),
		bad("htu http scheme", func(p *testissuer.Proof) { p.URL = "http://mcp.example.com/mcp" }),
		bad("htu other port", func(p *testissuer.Proof) { p.URL = "https://mcp.example.com:8443/mcp" }),
		bad("htu with userinfo", func(p *testissuer.Proof) { p.URL = "https://u@mcp.example.com/mcp" }),
		bad("htu relative", func(p *testissuer.Proof) { p.URL = "/mcp" }),
		// iat outside the window (60 s either way).
		bad("stale iat", func(p *testissuer.Proof) { p.Time = d.clock.Now().Add(-seconds(61)) }),
		bad("future iat", func(p *testissuer.Proof) { p.Time = d.clock.Now().Add(seconds(61)) }),
		bad("iat missing", func(p *testissuer.Proof) { p.Claims = map[string]any{"iat": nil} }),
		bad("iat a string", func(p *testissuer.Proof) { p.Claims = map[string]any{"iat": "1800000000"} }),
		// ath: missing, for another token, not base64url.
		bad("ath missing", func(p *testissuer.Proof) { p.Token = "" }),
		bad("ath of another token", func(p *testissuer.Proof) { p.Token = d.plain }),
		bad("ath padded", func(p *testissuer.Proof) { p.Claims = map[string]any{"ath": testissuer.ATH(d.token) + "="} }),
		// jwk: private members, symmetric, missing, mismatched alg.
		bad("jwk with private d", func(p *testissuer.Proof) { p.Header = map[string]any{"jwk": priv} }),
		bad("jwk with upper-case D", func(p *testissuer.Proof) {
			p.Header = map[string]any{"jwk": testissuer.WithMember(pub, "D", priv["d"])}
		}),
		bad("jwk missing", func(p *testissuer.Proof) { p.Header = map[string]any{"jwk": nil} }),
		bad("jwk oct", func(p *testissuer.Proof) {
			p.Header = map[string]any{"jwk": map[string]any{"kty": "oct", "k": "c2VjcmV0"}}
		}),
		bad("jwk alg differs", func(p *testissuer.Proof) {
			p.Header = map[string]any{"jwk": testissuer.WithMember(pub, "alg", "ES384")}
		}),
		bad("jwk use enc", func(p *testissuer.Proof) { p.Header = map[string]any{"jwk": testissuer.WithMember(pub, "use", "enc")} }),
		bad("jwk off-curve point", func(p *testissuer.Proof) { p.Header = map[string]any{"jwk": testissuer.WithMember(pub, "y", pub["x"])} }),
		bad("jwk of another key", func(p *testissuer.Proof) { other, _ := other.PublicJWK(); p.Header = map[string]any{"jwk": other} }),
		// alg: none, HMAC, unknown, another family than the key's.
		bad("alg none", func(p *testissuer.Proof) { p.Header = map[string]any{"alg": "none"} }),
		bad("alg HS256", func(p *testissuer.Proof) { p.Header = map[string]any{"alg": "HS256"} }),
		bad("alg unknown", func(p *testissuer.Proof) { p.Header = map[string]any{"alg": "ES256K"} }),
		bad("alg RS256 on an EC key", func(p *testissuer.Proof) { p.Header = map[string]any{"alg": "RS256"} }),
		{name: "HMAC proof with oct jwk", proofs: []string{hs}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		{name: "unsigned proof", proofs: []string{unsigned(t, d.proof(t, http.MethodPost, nil))}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		{name: "signature of another proof", proofs: []string{swapSignature(d.proof(t, http.MethodPost, nil), d.proof(t, http.MethodPost, nil))}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		// typ: absent, JWT, an access token's.
		bad("typ missing", func(p *testissuer.Proof) { p.Header = map[string]any{"typ": nil} }),
		bad("typ JWT", func(p *testissuer.Proof) { p.Header = map[string]any{"typ": "JWT"} }),
		bad("typ at+jwt", func(p *testissuer.Proof) { p.Header = map[string]any{"typ": "at+jwt"} }),
		// Key material named elsewhere: never fetched (jku, x5u) or trusted (x5c).
		bad("jku header", func(p *testissuer.Proof) { p.Header = map[string]any{"jku": d.attackerURL} }),
		bad("x5u header", func(p *testissuer.Proof) { p.Header = map[string]any{"x5u": d.attackerURL} }),
		bad("x5c header", func(p *testissuer.Proof) { p.Header = map[string]any{"x5c": []string{"MIIB"}} }),
		bad("crit header", func(p *testissuer.Proof) { p.Header = map[string]any{"crit": []string{"exp"}} }),
		// Claims of the wrong type or size.
		bad("jti missing", func(p *testissuer.Proof) { p.Claims = map[string]any{"jti": nil} }),
		bad("jti too long", func(p *testissuer.Proof) { p.ID = strings.Repeat("j", 257) }),
		bad("htm a number", func(p *testissuer.Proof) { p.Claims = map[string]any{"htm": 1} }),
		bad("htu missing", func(p *testissuer.Proof) { p.Claims = map[string]any{"htu": nil} }),
		// Headers: none, two (RFC 9449 §4.3 step 1), empty, oversized, not compact.
		{name: "no DPoP header", status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		{name: "two DPoP headers", proofs: []string{d.proof(t, http.MethodPost, nil), d.proof(t, http.MethodPost, nil)}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		{name: "empty DPoP header", proofs: []string{""}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		bad("oversized proof (9 KiB)", func(p *testissuer.Proof) { p.Claims = map[string]any{"pad": strings.Repeat("a", 9<<10)} }),
		{name: "flattened JSON proof", proofs: []string{toJSON(t, d.proof(t, http.MethodPost, nil))}, status: 401, scheme: "DPoP", errCode: "invalid_dpop_proof"},
		// Token and scheme: the key binding, downgrades.
		{name: "proof key is not cnf.jkt", authz: "DPoP " + otherToken, proofs: []string{d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = otherToken })}, status: 401, scheme: "DPoP", errCode: "invalid_token"},
		{name: "DPoP-bound token sent as Bearer", authz: "Bearer " + d.token, status: 401, scheme: "Bearer", errCode: "invalid_token"},
		{name: "DPoP-bound token as Bearer, with a valid proof", authz: "Bearer " + d.token, proofs: []string{d.proof(t, http.MethodPost, nil)}, status: 401, scheme: "Bearer", errCode: "invalid_token"},
		{name: "unbound token sent as DPoP", authz: "DPoP " + d.plain, proofs: []string{d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = d.plain })}, status: 401, scheme: "DPoP", errCode: "invalid_token"},
		{name: "forged token sent as DPoP", authz: "DPoP " + d.token[:len(d.token)-2] + "AA", proofs: []string{d.proof(t, http.MethodPost, nil)}, status: 401, scheme: "DPoP", errCode: "invalid_token"},
		{name: "DPoP scheme without token", authz: "DPoP ", proofs: []string{d.proof(t, http.MethodPost, nil)}, status: 400, scheme: "DPoP", errCode: "invalid_request"},
		{name: "DPoP scheme alone", authz: "DPoP", proofs: []string{d.proof(t, http.MethodPost, nil)}, status: 400, scheme: "DPoP", errCode: "invalid_request"},
		{name: "DPoP token with a space inside", authz: "DPoP " + d.token[:10] + " " + d.token[10:], proofs: []string{d.proof(t, http.MethodPost, nil)}, status: 400, scheme: "DPoP", errCode: "invalid_request"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			method, target, authz := http.MethodPost, d.url, "DPoP "+d.token
			if tc.method != "" {
				method = tc.method
			}
			if tc.target != "" {
				target = tc.target
			}
			if tc.authz != "" {
				authz = tc.authz
			}
			w := d.send(method, target, authz, tc.proofs...)
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, tc.errCode, challengeError(w, tc.scheme), "challenge %q", w.Header().Values("WWW-Authenticate"))
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			body := w.Body.String()
			assert.NotContains(t, body, d.token[:20])
			assert.NotContains(t, d.logs.String(), d.token[len(d.token)-20:], "token bytes in a log line")
		})
	}
	assert.Zero(t, d.attackerHits.Load(), "jku/x5u were dereferenced")
	// A failed proof is not remembered: a valid proof with the jti of one
	// that failed still passes once.
	failedJTI := d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.ID = "tried-before"; p.Method = "GET" })
	require.Equal(t, http.StatusUnauthorized, d.send(http.MethodPost, d.url, "DPoP "+d.token, failedJTI).Code)
	good := d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.ID = "tried-before" })
	assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, good).Code)
	t.Logf("DPoP attack rows: %d requests, all refused", len(rows))
}

// Mode required: Bearer is refused with a DPoP challenge only, whatever
// the token; a bearer-only token sent as DPoP is refused; a DPoP-bound one
// with a proof passes. Mode off: the DPoP scheme is another scheme
// (anonymous, the old challenge) and a DPoP-bound token is still refused
// as Bearer.
func TestDPoPModes(t *testing.T) {
	t.Run("required", func(t *testing.T) {
		d := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { o.Mode = dpop.Required })
		w := d.send(http.MethodPost, d.url, "Bearer "+d.plain)
		assert.Equal(t, http.StatusUnauthorized, w.Code)
		assert.Equal(t, []string{`DPoP error="invalid_token", error_description="The access token is invalid or expired", algs="ES256 EdDSA PS256 RS256", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"`},
			w.Header().Values("WWW-Authenticate"))
		w = d.send(http.MethodPost, d.url, "DPoP "+d.plain, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = d.plain }))
		assert.Equal(t, http.StatusUnauthorized, w.Code, "a Bearer-only token sent as DPoP")
		assert.Equal(t, "invalid_token", challengeError(w, "DPoP"))
		w = d.send(http.MethodPost, d.url, "")
		assert.Equal(t, []string{`DPoP algs="ES256 EdDSA PS256 RS256", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"`},
			w.Header().Values("WWW-Authenticate"))
		assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil)).Code)
		assert.Equal(t, dpop.Required, d.a.DPoPMode())
	})
	t.Run("allowed", func(t *testing.T) {
		d := newDPoPEnv(t, testissuer.EC256, nil)
		assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "Bearer "+d.plain).Code, "plain bearer tokens pass")
		w := d.send(http.MethodPost, d.url, "")
		assert.Equal(t, []string{
			`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"`,
			`DPoP algs="ES256 EdDSA PS256 RS256", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"`,
		}, w.Header().Values("WWW-Authenticate"))
	})
	t.Run("off", func(t *testing.T) {
		d := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { *o = dpop.Options{} })
		w := d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
		assert.Equal(t, http.StatusUnauthorized, w.Code, "DPoP is another scheme: no credentials")
		assert.Equal(t, []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="read"`}, w.Header().Values("WWW-Authenticate"))
		w = d.send(http.MethodPost, d.url, "Bearer "+d.token)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "a DPoP-bound token is never a bearer token")
		assert.Equal(t, "invalid_token", challengeError(w, "Bearer"))
		assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "Bearer "+d.plain).Code)
		assert.Nil(t, d.a.DPoPAlgorithms())
	})
}

// The same proof sent by many goroutines at once is accepted exactly once.
func TestDPoPReplayRace(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, nil)
	p := d.proof(t, http.MethodPost, nil)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if d.send(http.MethodPost, d.url, "DPoP "+d.token, p).Code == http.StatusOK {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), ok.Load())
}

// The replay cache is bounded: full of live proofs, it refuses new ones
// (503 and Retry-After, never admitting a proof unchecked); once its
// older generation expires, proofs pass again, and a flood never holds
// more than the bound. (Shares are off here, so that one caller can fill
// the cache: dpop_share_test.go has the shares.)
func TestDPoPReplayCacheBounded(t *testing.T) {
	d := newDPoPEnv(t, testissuer.Ed25519, func(o *dpop.Options) { o.MaxReplayEntries = 50; o.MaxReplayEntriesPerCaller = 50 })
	for i := range 50 {
		require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil)).Code, "proof %d", i)
	}
	w := d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
	assert.LessOrEqual(t, d.replayLen(), 50)
	// Two periods (2 × 2 × window) later, everything remembered has aged out.
	d.clock.Advance(2*(2*testProofWindow+seconds(1)) + seconds(1))
	for range 200 {
		d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
		assert.LessOrEqual(t, d.replayLen(), 50)
	}
	// A remembered proof is still refused as long as it could be accepted:
	// it is replayed just inside its window.
	d2 := newDPoPEnv(t, testissuer.EC256, nil)
	p := d2.proof(t, http.MethodPost, nil)
	require.Equal(t, http.StatusOK, d2.send(http.MethodPost, d2.url, "DPoP "+d2.token, p).Code)
	for range 6 {
		d2.clock.Advance(seconds(10))
		assert.Equal(t, "invalid_dpop_proof", challengeError(d2.send(http.MethodPost, d2.url, "DPoP "+d2.token, p), "DPoP"))
	}
}

// Server nonces (RFC 9449 §9): a proof without one gets use_dpop_nonce and
// a DPoP-Nonce; the retry with it passes; expired and forged nonces get
// use_dpop_nonce again; every 401 carries a fresh nonce.
func TestDPoPNonce(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { o.RequireNonce = true; o.NonceLifetime = 2 * minute })
	w := d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
	require.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"))
	assert.JSONEq(t, `{"error":"use_dpop_nonce"}`, w.Body.String())
	nonce := w.Header().Get("DPoP-Nonce")
	require.NotEmpty(t, nonce)
	assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Nonce = nonce })).Code)
	assert.NotEmpty(t, d.send(http.MethodPost, d.url, "").Header().Get("DPoP-Nonce"), "a 401 without credentials carries a nonce too")
	forged := nonce[:len(nonce)-2] + "AA"
	if forged == nonce {
		forged = nonce[:len(nonce)-2] + "AQ"
	}
	w = d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Nonce = forged }))
	assert.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"))
	d.clock.Advance(2*minute + seconds(1))
	w = d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Nonce = nonce }))
	assert.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"), "an expired nonce")
	assert.NotEqual(t, nonce, w.Header().Get("DPoP-Nonce"))
	// A nonce of another server's secret is not this one's.
	other := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { o.RequireNonce = true })
	foreign := other.send(http.MethodPost, other.url, "").Header().Get("DPoP-Nonce")
	w = d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Nonce = foreign }))
	assert.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"))
}

const minute = time.Minute

// htu is compared after RFC 3986 normalization; the external URL comes
// from BaseURL (behind a proxy that strips a prefix), never from Host.
func TestDPoPURL(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, nil)
	for _, htu := range []string{
		"https://MCP.Example.COM/mcp", "HTTPS://mcp.example.com:443/mcp", "https://mcp.example.com/%6Dcp",
		"https://mcp.example.com/a/../mcp", "https://mcp.example.com/./mcp", "https://mcp.example.com/mcp?x=1#f",
	} {
		w := d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.URL = htu }))
		assert.Equal(t, http.StatusOK, w.Code, htu)
	}
	// The request's own URL is normalized the same way.
	w := d.send(http.MethodPost, "https://mcp.example.com/%6dcp?q", "DPoP "+d.token, d.proof(t, http.MethodPost, nil))
	assert.Equal(t, http.StatusOK, w.Code)
	// Host spoofing: a proof made for evil.example, sent with Host: evil.example.
	r := d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.URL = "https://evil.example/mcp" })
	w = d.send(http.MethodPost, "https://evil.example/mcp", "DPoP "+d.token, r)
	assert.Equal(t, "invalid_dpop_proof", challengeError(w, "DPoP"))

	b := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { o.BaseURL = "https://public.example/prefix" })
	b.url = "https://public.example/prefix/mcp"
	w = b.send(http.MethodPost, "http://10.0.0.5:8080/mcp", "DPoP "+b.token, b.proof(t, http.MethodPost, nil))
	assert.Equal(t, http.StatusOK, w.Code, "behind a proxy")
	b.url = "http://10.0.0.5:8080/mcp"
	w = b.send(http.MethodPost, "http://10.0.0.5:8080/mcp", "DPoP "+b.token, b.proof(t, http.MethodPost, nil))
	assert.Equal(t, "invalid_dpop_proof", challengeError(w, "DPoP"), "the internal URL is not the external one")
}

// The key binding can come from introspection: the response's cnf.jkt.
func TestDPoPIntrospection(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, nil)
	id, secret := d.is.IntrospectionCredentials()
	iv, err := NewIntrospectionVerifier(IntrospectionOptions{Endpoint: d.is.IntrospectionURL(), ClientID: id, ClientSecret: secret, Resource: testResource, Now: d.clock.Now})
	require.NoError(t, err)
	a, err := NewAuthenticator(iv, Options{Resource: testResource, DPoP: dpop.Options{Mode: dpop.Allowed, Now: d.clock.Now}})
	require.NoError(t, err)
	d.a = a
	c := claims("alice", "read")
	c.DPoPThumbprint = d.jkt
	d.token, err = d.is.Opaque(c, true)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil)).Code)
	assert.Equal(t, "invalid_token", challengeError(d.send(http.MethodPost, d.url, "Bearer "+d.token), "Bearer"))
}

// cnf claims that cannot be read never make a bearer token.
func TestConfirmationClaim(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, nil)
	for name, cnf := range map[string]any{
		"string":     "abc",
		"array":      []string{"abc"},
		"jkt number": map[string]any{"jkt": 1},
		"jkt empty":  map[string]any{"jkt": ""},
		"jkt huge":   map[string]any{"jkt": strings.Repeat("A", 257)},
	} {
		c := claims("alice")
		c.Extra = map[string]any{"cnf": cnf}
		_, _, err := v.Verify(t.Context(), e.is.Token(t, c))
		assert.ErrorIs(t, err, ErrInvalidToken, name)
		assert.Equal(t, "cnf", rejectReason(err), name)
	}
	// A jkt that is no thumbprint leaves the token bound to no key: the
	// verifier reports it, the Authenticator refuses it in every scheme.
	a, err := NewAuthenticator(v, Options{Resource: testResource, DPoP: dpop.Options{Mode: dpop.Allowed, Now: e.clock.Now}})
	require.NoError(t, err)
	for _, jkt := range []string{"x", strings.Repeat("A", 42) + "=", strings.Repeat("A", 44)} {
		c := claims("alice")
		c.Extra = map[string]any{"cnf": map[string]any{"jkt": jkt}}
		tok := e.is.Token(t, c)
		p, _, err := v.Verify(t.Context(), tok)
		require.NoError(t, err)
		assert.Equal(t, jkt, p.DPoPThumbprint)
		for _, scheme := range []string{"Bearer ", "DPoP "} {
			r, _ := http.NewRequest(http.MethodPost, dpopURL, nil)
			r.Header.Set("Authorization", scheme+tok)
			r.Header.Set("DPoP", "a.b.c")
			_, err := a.Authenticate(r)
			assert.Error(t, err, "%s%q", scheme, jkt)
		}
	}
	c := claims("alice")
	c.Extra = map[string]any{"cnf": map[string]any{"x5t#S256": "abc"}}
	p, _, err := v.Verify(t.Context(), e.is.Token(t, c))
	require.NoError(t, err, "other confirmation methods are the TLS layer's")
	assert.Empty(t, p.DPoPThumbprint)
}

// A custom Verifier's thumbprint is checked like the others'.
func TestDPoPCustomVerifierShape(t *testing.T) {
	a, err := NewAuthenticator(VerifierFunc(func(_ context.Context, tok string) (principal.Principal, time.Time, error) {
		return principal.Principal{Subject: "u", Audience: testResource, DPoPThumbprint: "not a thumbprint"}, time.Time{}, nil
	}), Options{Resource: testResource})
	require.NoError(t, err)
	r, _ := http.NewRequest(http.MethodGet, dpopURL, nil)
	r.Header.Set("Authorization", "Bearer abc")
	_, err = a.Authenticate(r)
	assert.True(t, errors.Is(err, ErrInvalidToken))
}

func TestDPoPOptionsValidation(t *testing.T) {
	for name, o := range map[string]dpop.Options{
		"mode":               {Mode: 7},
		"HMAC alg":           {Mode: dpop.Allowed, Algorithms: []string{"HS256"}},
		"none alg":           {Mode: dpop.Allowed, Algorithms: []string{"none"}},
		"no algs":            {Mode: dpop.Allowed, Algorithms: []string{}},
		"window":             {Mode: dpop.Allowed, ProofWindow: -1},
		"window too large":   {Mode: dpop.Allowed, ProofWindow: 11 * minute},
		"base url http":      {Mode: dpop.Allowed, BaseURL: "http://public.example"},
		"base url query":     {Mode: dpop.Allowed, BaseURL: "https://public.example/?x"},
		"short secret":       {Mode: dpop.Allowed, RequireNonce: true, NonceSecret: []byte("short")},
		"secret unused":      {Mode: dpop.Allowed, NonceSecret: make([]byte, 32)},
		"negative replay":    {Mode: dpop.Allowed, MaxReplayEntries: -1},
		"negative share":     {Mode: dpop.Allowed, MaxReplayEntriesPerCaller: -1},
		"share over max":     {Mode: dpop.Allowed, MaxReplayEntries: 10, MaxReplayEntriesPerCaller: 11},
		"share over default": {Mode: dpop.Allowed, MaxReplayEntriesPerCaller: testMaxReplay + 1},
		"negative size":      {Mode: dpop.Allowed, MaxProofBytes: -1},
	} {
		_, err := NewAuthenticator(nil, Options{Resource: testResource, DPoP: o})
		assert.Error(t, err, name)
	}
}

func unsigned(t *testing.T, proof string) string {
	t.Helper()
	i := strings.LastIndexByte(proof, '.')
	return proof[:i+1]
}

func swapSignature(a, b string) string {
	return a[:strings.LastIndexByte(a, '.')] + b[strings.LastIndexByte(b, '.'):]
}

func toJSON(t *testing.T, proof string) string {
	t.Helper()
	s, err := testissuer.ToJSON(proof, false, nil)
	require.NoError(t, err)
	return s
}

// RFC 9728 metadata publishes the DPoP fields the Authenticator implies;
// symmetric algorithms cannot be published.
func TestDPoPMetadata(t *testing.T) {
	a, err := NewAuthenticator(nil, Options{Resource: testResource, DPoP: dpop.Options{Mode: dpop.Required, Algorithms: []string{"EdDSA", "ES256"}}})
	require.NoError(t, err)
	h, err := NewMetadataHandler(Metadata{Resource: testResource, AuthorizationServers: []string{"https://as.example"},
		DPoPSigningAlgorithms: a.DPoPAlgorithms(), DPoPBoundTokensRequired: a.DPoPMode() == dpop.Required})
	require.NoError(t, err)
	w := httptestRecorder(h, http.MethodGet, "/.well-known/oauth-protected-resource/mcp")
	assert.JSONEq(t, `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example"],"bearer_methods_supported":["header"],
		"dpop_signing_alg_values_supported":["ES256","EdDSA"],"dpop_bound_access_tokens_required":true}`, w)
	_, err = NewMetadataHandler(Metadata{Resource: testResource, AuthorizationServers: []string{"https://as.example"}, DPoPSigningAlgorithms: []string{"HS256"}})
	assert.Error(t, err)
	_, err = NewMetadataHandler(Metadata{Resource: testResource, AuthorizationServers: []string{"https://as.example"}, DPoPBoundTokensRequired: true})
	assert.Error(t, err)
}

func httptestRecorder(h http.Handler, method, target string) string {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w.Body.String()
}

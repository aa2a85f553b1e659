package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/authn/internal/jwks"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// fakeTimer drives the refresher: each wait is announced on asked and
// released by tick.
type fakeTimer struct {
	asked chan time.Duration
	ch    chan time.Time
}

func newFakeTimer() *fakeTimer {
	return &fakeTimer{asked: make(chan time.Duration, 64), ch: make(chan time.Time)}
}

func (f *fakeTimer) after(d time.Duration) <-chan time.Time {
	f.asked <- d
	return f.ch
}

// tick fires the pending wait and returns the next one, which the
// refresher asks for only after the fetch it started has completed.
func (f *fakeTimer) tick(t *testing.T) time.Duration {
	t.Helper()
	f.next(t)
	f.ch <- time.Time{}
	return f.next(t)
}

// next returns the duration of the refresher's next wait.
func (f *fakeTimer) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-f.asked:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("refresher did not wait again")
		return 0
	}
}

// peekNext puts a wait back after reading it (used before tick).
func (e *env) timedVerifier(t *testing.T, ctx context.Context, mod func(*JWTOptions)) (*JWTVerifier, *fakeTimer) {
	t.Helper()
	ft := newFakeTimer()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	v, err := newJWTVerifier(ctx, o, ft.after)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v, ft
}

func TestJWKSRefreshSchedule(t *testing.T) {
	e := newEnv(t)
	v, ft := e.timedVerifier(t, context.Background(), nil)
	tok := e.is.Token(t, claims("alice"))
	_, _, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, 15*time.Minute, ft.tick(t), "refresh interval after a success")
	assert.Equal(t, int64(2), e.is.JWKSFetches())

	// A16: failures back off (doubling, capped at the cooldown) and keep the keys.
	e.is.SetJWKSHandler(testissuer.Status(http.StatusInternalServerError))
	var waits []time.Duration
	for range 6 {
		ft.ch <- time.Time{}
		waits = append(waits, ft.next(t))
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}, waits)
	_, _, err = v.Verify(context.Background(), tok)
	assert.NoError(t, err, "previous keys kept")
	assert.Contains(t, e.logs.String(), "keeping the previous keys")

	e.is.SetJWKSHandler(nil)
	ft.ch <- time.Time{}
	assert.Equal(t, 15*time.Minute, ft.next(t), "back to the refresh interval")
}

// A16 / L2: the JWK Set is down at construction. Construction succeeds,
// requests get ErrUnavailable (503 + Retry-After, not 401), and the
// background retry recovers.
func TestJWKSDownAtStart(t *testing.T) {
	e := newEnv(t)
	e.is.SetJWKSHandler(testissuer.Status(http.StatusServiceUnavailable))
	v, ft := e.timedVerifier(t, context.Background(), nil)
	assert.Contains(t, e.logs.String(), "warm-up fetch failed")
	tok := e.is.Token(t, claims("alice"))

	_, _, err := v.Verify(context.Background(), tok)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.NotErrorIs(t, err, ErrInvalidToken)
	var ue *UnavailableError
	require.True(t, errors.As(err, &ue))
	assert.Positive(t, ue.RetryAfter)

	a, err := NewAuthenticator(v, Options{Resource: testResource})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	a.Handler(http.NotFoundHandler()).ServeHTTP(w, r)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
	assert.Empty(t, w.Header().Get("WWW-Authenticate"))

	// Within the cooldown, requests do not cause fetches.
	before := e.is.JWKSFetches()
	for range 10 {
		_, _, err = v.Verify(context.Background(), tok)
		assert.ErrorIs(t, err, ErrUnavailable)
	}
	assert.Equal(t, before, e.is.JWKSFetches())

	// Recovery by the background retry.
	e.is.SetJWKSHandler(nil)
	assert.Equal(t, 15*time.Minute, ft.tick(t))
	_, _, err = v.Verify(context.Background(), tok)
	assert.NoError(t, err)
}

// L2 variant: recovery on demand once the cooldown has passed, without the
// background retry.
func TestJWKSDownAtStartRecoversOnDemand(t *testing.T) {
	e := newEnv(t)
	e.is.SetJWKSHandler(testissuer.Status(http.StatusBadGateway))
	v, _ := e.timedVerifier(t, context.Background(), nil)
	tok := e.is.Token(t, claims("alice"))
	_, _, err := v.Verify(context.Background(), tok)
	require.ErrorIs(t, err, ErrUnavailable)
	e.is.SetJWKSHandler(nil)
	e.clock.Advance(30 * time.Second)
	_, _, err = v.Verify(context.Background(), tok)
	assert.NoError(t, err)
}

// L3: a slow JWK Set. Construction returns when its context ends; a
// request waits only until its own deadline; concurrent requests share one
// fetch; keys arriving later are used.
func TestJWKSSlow(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	e.is.SetJWKSHandler(e.is.Stall(release, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	v, _ := e.timedVerifier(t, ctx, func(o *JWTOptions) { o.FetchTimeout = time.Minute })
	assert.Contains(t, e.logs.String(), "did not finish in time")
	tok := e.is.Token(t, claims("alice"))

	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			_, _, errs[i] = v.Verify(ctx, tok)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.ErrorIs(t, err, ErrUnavailable)
	}
	assert.Equal(t, int64(1), e.is.JWKSFetches(), "one fetch in flight, shared")

	close(release)
	require.Eventually(t, func() bool {
		_, _, err := v.Verify(context.Background(), tok)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, int64(1), e.is.JWKSFetches())
}

// A16: garbage, errors, huge and slow-drip bodies, and a set whose keys were
// all removed: the fetch fails, memory stays bounded by MaxJWKSBytes, the
// previous keys stay in use.
func TestJWKSBadResponsesKeepKeys(t *testing.T) {
	cases := map[string]func(*testissuer.Issuer) http.Handler{
		"500":            func(*testissuer.Issuer) http.Handler { return testissuer.Status(500) },
		"404":            func(*testissuer.Issuer) http.Handler { return testissuer.Status(404) },
		"invalid JSON":   func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`{"keys":[`)) },
		"HTML":           func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`<html>oops</html>`)) },
		"keys removed":   func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`{"keys":[]}`)) },
		"no keys member": func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`{}`)) },
		"only unusable keys": func(*testissuer.Issuer) http.Handler {
			return testissuer.Body([]byte(`{"keys":[{"kty":"oct","kid":"x","k":"AAAA"}]}`))
		},
		"50 MiB streamed":     func(*testissuer.Issuer) http.Handler { return testissuer.Huge(50<<20, false) },
		"50 MiB with length":  func(*testissuer.Issuer) http.Handler { return testissuer.Huge(50<<20, true) },
		"slow drip":           func(is *testissuer.Issuer) http.Handler { return is.Drip(20 * time.Millisecond) },
		"too many keys (300)": func(*testissuer.Issuer) http.Handler { return testissuer.Body(manyKeys(300)) },
		"keys not an array":   func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`{"keys":{"kty":"RSA"}}`)) },
		"JSON null":           func(*testissuer.Issuer) http.Handler { return testissuer.Body([]byte(`null`)) },
		"empty body":          func(*testissuer.Issuer) http.Handler { return testissuer.Body(nil) },
		"redirect to http URL": func(*testissuer.Issuer) http.Handler {
			return http.RedirectHandler("http://example.com/jwks", http.StatusFound)
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			v, ft := e.timedVerifier(t, context.Background(), func(o *JWTOptions) { o.FetchTimeout = 300 * time.Millisecond })
			tok := e.is.Token(t, claims("alice"))
			_, _, err := v.Verify(context.Background(), tok)
			require.NoError(t, err)
			e.is.SetJWKSHandler(h(e.is))
			assert.Equal(t, 2*time.Second, ft.tick(t), "the fetch failed: retry soon")
			_, _, err = v.Verify(context.Background(), tok)
			assert.NoError(t, err, "previous keys kept")
		})
	}
}

func manyKeys(n int) []byte {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`{"kty":"oct","kid":"k%d","k":"AAAA"}`, i)
	}
	return []byte(`{"keys":[` + strings.Join(keys, ",") + `]}`)
}

// A16: a huge body is never read beyond the cap.
func TestJWKSBodyCap(t *testing.T) {
	var served int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for served < 50<<20 {
			n, err := w.Write(chunk)
			served += int64(n)
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ks := jwks.New(jwks.Config{URL: srv.URL, Client: srv.Client(), Timeout: 5 * time.Second, MaxBytes: 1 << 20,
		Refresh: time.Hour, Cooldown: time.Minute, Allowed: DefaultAlgorithms(), Now: time.Now, Log: discardLogger()})
	ks.Start()
	defer ks.Close()
	err := ks.Fetch()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too large")
}

// L5: key rotation. A new kid is fetched on first sight (after the
// cooldown); a removed kid stops working at the next refresh.
func TestJWKSRotation(t *testing.T) {
	e := newEnv(t)
	v, ft := e.timedVerifier(t, context.Background(), nil)
	old := e.is.Token(t, claims("alice"))
	_, _, err := v.Verify(context.Background(), old)
	require.NoError(t, err)

	require.NoError(t, e.is.AddKey("rot-2", testissuer.RSA, "RS256", true))
	fresh := e.is.Token(t, claims("alice"), testissuer.WithKey("rot-2"))
	e.clock.Advance(31 * time.Second)
	_, _, err = v.Verify(context.Background(), fresh)
	require.NoError(t, err, "new kid fetched on demand")
	assert.Equal(t, int64(2), e.is.JWKSFetches())

	e.is.Unpublish(testissuer.KidRS256)
	ft.tick(t) // periodic refresh
	_, _, err = v.Verify(context.Background(), old)
	assert.ErrorIs(t, err, ErrInvalidToken, "removed kid")
	assert.Equal(t, "kid", rejectReason(err))
	_, _, err = v.Verify(context.Background(), fresh)
	assert.NoError(t, err)
}

// A15 / L6: an unknown-kid storm. Over T simulated seconds, random kids
// cause at most ⌈T/cooldown⌉+1 fetches, and valid tokens keep working.
func TestUnknownKidStorm(t *testing.T) {
	e := newEnv(t)
	const cooldown = 30 * time.Second
	v := e.verifier(t, func(o *JWTOptions) { o.UnknownKeyCooldown = cooldown })
	valid := e.is.Token(t, claims("alice"))
	forged := make([]string, 16)
	for i := range forged {
		forged[i] = e.is.Token(t, claims("alice"), withHeader("kid", fmt.Sprintf("random-%d-%x", i, randBytes(4))))
	}
	start := e.is.JWKSFetches()
	const T = 10 * time.Minute
	requests, validOK := 0, 0
	for elapsed := time.Duration(0); elapsed < T; elapsed += time.Second {
		var wg sync.WaitGroup
		for _, tok := range forged {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := v.Verify(context.Background(), tok)
				assert.ErrorIs(t, err, ErrInvalidToken)
			}()
		}
		wg.Wait()
		requests += len(forged)
		if _, _, err := v.Verify(context.Background(), valid); err == nil {
			validOK++
		}
		e.clock.Advance(time.Second)
	}
	fetches := e.is.JWKSFetches() - start
	bound := int64((T+cooldown-1)/cooldown) + 1
	assert.LessOrEqual(t, fetches, bound)
	assert.Positive(t, fetches)
	assert.Equal(t, int(T/time.Second), validOK, "valid tokens unaffected")
	t.Logf("A15: %d unknown-kid requests over %v: %d fetches (bound %d)", requests, T, fetches, bound)
}

func TestCloseStopsGoroutines(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	defer close(release)
	v, err := NewJWTVerifier(context.Background(), e.opts())
	require.NoError(t, err)
	e.is.SetJWKSHandler(e.is.Stall(release, nil))
	e.clock.Advance(time.Minute)
	tok := e.is.Token(t, claims("a"), withHeader("kid", "new"))
	verified := make(chan error, 1)
	go func() { _, _, err := v.Verify(context.Background(), tok); verified <- err }()
	require.Eventually(t, func() bool { return e.is.JWKSFetches() == 2 }, 5*time.Second, time.Millisecond)
	require.Positive(t, keyStoreGoroutines())
	require.NoError(t, v.Close()) // cancels the stalled fetch
	require.NoError(t, v.Close()) // idempotent
	assert.ErrorIs(t, <-verified, ErrUnavailable, "the waiting request gives up")
	// Close waits for the goroutines' WaitGroup; a goroutine that has just
	// called Done may still be on its way out for a moment under load.
	assert.Eventually(t, func() bool { return keyStoreGoroutines() == 0 }, 5*time.Second, time.Millisecond, "goroutines left after Close")
	// Verify still works with the keys it has.
	_, _, err = v.Verify(context.Background(), e.is.Token(t, claims("alice")))
	assert.NoError(t, err)
}

func TestJWTOptionsValidation(t *testing.T) {
	e := newEnv(t)
	bad := map[string]func(*JWTOptions){
		"no issuer":            func(o *JWTOptions) { o.Issuer = "" },
		"no resource":          func(o *JWTOptions) { o.Resource = "" },
		"resource with query":  func(o *JWTOptions) { o.Resource = testResource + "?a=b" },
		"resource fragment":    func(o *JWTOptions) { o.Resource = testResource + "#x" },
		"resource http":        func(o *JWTOptions) { o.Resource = "http://mcp.example.com/mcp" },
		"no jwks url":          func(o *JWTOptions) { o.JWKSURL = "" },
		"jwks over http":       func(o *JWTOptions) { o.JWKSURL = "http://idp.example.com/jwks" },
		"jwks relative":        func(o *JWTOptions) { o.JWKSURL = "/jwks" },
		"jwks ftp":             func(o *JWTOptions) { o.JWKSURL = "ftp://127.0.0.1/jwks" },
		"negative leeway":      func(o *JWTOptions) { o.Leeway = -time.Second },
		"leeway over 5 min":    func(o *JWTOptions) { o.Leeway = 5*time.Minute + time.Second },
		"empty algorithms":     func(o *JWTOptions) { o.Algorithms = []string{} },
		"HS256":                func(o *JWTOptions) { o.Algorithms = []string{"RS256", "HS256"} },
		"negative cooldown":    func(o *JWTOptions) { o.UnknownKeyCooldown = -1 },
		"5 client id claims":   func(o *JWTOptions) { o.Claims.ClientID = []string{"a", "b", "c", "d", "e"} },
		"empty scope claim":    func(o *JWTOptions) { o.Claims.Scope = []string{""} },
		"jwks with userinfo":   func(o *JWTOptions) { o.JWKSURL = "https://u:p@idp.example.com/jwks" },
		"resource with quotes": func(o *JWTOptions) { o.Resource = `https://mcp.example.com/"x"` },
	}
	for name, mod := range bad {
		o := e.opts()
		mod(&o)
		v, err := NewJWTVerifier(context.Background(), o)
		assert.Error(t, err, name)
		assert.Nil(t, v, name)
	}
	for _, u := range []string{"http://127.0.0.1:1/jwks", "http://[::1]:1/jwks", "http://localhost:1/jwks", "https://idp.example.com/jwks"} {
		_, err := jose.ParseSecureURL("u", u, false)
		assert.NoError(t, err, u)
	}
	assert.Eventually(t, func() bool { return keyStoreGoroutines() == 0 }, 5*time.Second, time.Millisecond, "no goroutine is left by a failed construction")
}

func TestCheckRedirect(t *testing.T) {
	req := func(u string) *http.Request { r, _ := http.NewRequest("GET", u, nil); return r }
	assert.NoError(t, checkRedirect(req("https://idp.example.com/k"), nil))
	assert.NoError(t, checkRedirect(req("http://127.0.0.1/k"), nil))
	assert.Error(t, checkRedirect(req("http://idp.example.com/k"), nil))
	assert.Error(t, checkRedirect(req("https://idp.example.com/k"), make([]*http.Request, 3)))
}

// A4 and the key filter: only public signature keys of allowed types.
func TestParseJWKSFilter(t *testing.T) {
	rsaKey := func(bits int) *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		require.NoError(t, err)
		return k
	}
	ecKey := func(c elliptic.Curve) *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		require.NoError(t, err)
		return k
	}
	r2048 := rsaKey(2048)
	jwkOf := func(key any, kid string, set map[string]any) string {
		jk, err := jwk.FromRaw(key)
		require.NoError(t, err)
		if kid != "" {
			require.NoError(t, jk.Set(jwk.KeyIDKey, kid))
		}
		for k, v := range set {
			require.NoError(t, jk.Set(k, v))
		}
		b, err := json.Marshal(jk)
		require.NoError(t, err)
		return string(b)
	}
	keep := []string{
		jwkOf(&r2048.PublicKey, "rsa", nil),
		jwkOf(&r2048.PublicKey, "rsa-sig", map[string]any{"use": "sig", "alg": "PS256"}),
		jwkOf(&r2048.PublicKey, "rsa-ops", map[string]any{"key_ops": []string{"verify"}}),
		jwkOf(&ecKey(elliptic.P256()).PublicKey, "p256", map[string]any{"alg": "ES256"}),
		jwkOf(&r2048.PublicKey, "", nil), // no kid: kept under "", for tokens without kid only
	}
	drop := []string{
		`{"kty":"oct","kid":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0"}`,
		jwkOf(&r2048.PublicKey, "enc", map[string]any{"use": "enc"}),
		jwkOf(&r2048.PublicKey, "ops", map[string]any{"key_ops": []string{"encrypt"}}),
		jwkOf(&rsaKey(1024).PublicKey, "small", nil),
		jwkOf(r2048, "private", nil),
		jwkOf(&r2048.PublicKey, strings.Repeat("k", 300), nil),
		jwkOf(&r2048.PublicKey, "alg-es", map[string]any{"alg": "ES256"}),
		jwkOf(&r2048.PublicKey, "alg-hs", map[string]any{"alg": "HS256"}),
		jwkOf(&r2048.PublicKey, "alg-rs512", map[string]any{"alg": "RS512"}), // not in the allowlist
		jwkOf(&ecKey(elliptic.P384()).PublicKey, "p384", nil),                // ES384 not allowed
		jwkOf(&ecKey(elliptic.P256()).PublicKey, "p256-as-es384", map[string]any{"alg": "ES384"}),
		`{"kty":"EC","kid":"off-curve","crv":"P-256","x":"AQ","y":"AQ"}`,
		`{"kty":"OKP","kid":"x25519","crv":"X25519","x":"` + b64url(make([]byte, 32)) + `"}`,
		`{"kty":"OKP","kid":"ed-short","crv":"Ed25519","x":"AQID"}`,
		`{"kty":"RSA","kid":"broken","n":"!!","e":"AQAB"}`,
		`{"kty":"RSA","kid":"even-e","n":"` + b64url(r2048.N.Bytes()) + `","e":"Ag"}`,
		`"not an object"`,
		`{"kty":"EC","kid":"secp","crv":"secp256k1","x":"AQ","y":"AQ"}`,
	}
	doc := `{"keys":[` + strings.Join(append(append([]string{}, keep...), drop...), ",") + `]}`
	set, dropped, err := jwks.Parse([]byte(doc), DefaultAlgorithms())
	require.NoError(t, err)
	assert.Equal(t, len(drop), dropped)
	var kids []string
	for kid := range set {
		kids = append(kids, kid)
	}
	assert.ElementsMatch(t, []string{"rsa", "rsa-sig", "rsa-ops", "p256", ""}, kids)
	assert.Equal(t, "PS256", set["rsa-sig"][0].Alg)
	assert.Equal(t, "", set["rsa"][0].Alg)

	// ES384 allowed → the P-384 key without alg is kept.
	set, _, err = jwks.Parse([]byte(`{"keys":[`+jwkOf(&ecKey(elliptic.P384()).PublicKey, "p384", nil)+`]}`), []string{"ES384"})
	require.NoError(t, err)
	assert.Len(t, set, 1)
}

// retryAfterOf returns the Retry-After an Authenticator sends for err.
func retryAfterOf(t *testing.T, v Verifier, tok string) (int, string) {
	t.Helper()
	a, err := NewAuthenticator(v, Options{Resource: testResource})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })).ServeHTTP(w, r)
	return w.Code, w.Header().Get("Retry-After")
}

// Issue 21: the JWK Set goes down, the issuer rotates to a new key while
// it is down, and the JWK Set comes back. A client that waits the
// Retry-After it was given gets its token with the new kid accepted on its
// first retry after the JWK Set answers again: the request-triggered fetch
// is gated by the failure backoff (what Retry-After says), not by the
// 30-second unknown-kid cooldown, and the failure wakes the background
// refresher, which retries with that backoff instead of sleeping its
// 15-minute refresh interval. Still one fetch at a time, and none before
// Retry-After has passed.
func TestJWKSOutageThenRotatedKey(t *testing.T) {
	e := newEnv(t)
	const secret = "query-secret-value"
	v, ft := e.timedVerifier(t, context.Background(), func(o *JWTOptions) { o.JWKSURL += "?sig=" + secret })
	old := e.is.Token(t, claims("alice"))
	_, _, err := v.Verify(context.Background(), old)
	require.NoError(t, err)
	require.Equal(t, 15*time.Minute, ft.next(t), "the refresher sleeps its refresh interval")
	e.clock.Advance(time.Minute) // past the cooldown of the warm-up fetch

	// The JWK Set is down; the issuer signs with a new key meanwhile.
	e.is.SetJWKSHandler(testissuer.Status(http.StatusServiceUnavailable))
	require.NoError(t, e.is.AddKey("rotated-key-id", testissuer.RSA, "RS256", true))
	fresh := e.is.Token(t, claims("alice"), testissuer.WithKey("rotated-key-id"))
	fetches := e.is.JWKSFetches()
	code, retry := retryAfterOf(t, v, fresh)
	assert.Equal(t, http.StatusServiceUnavailable, code, "cannot check now, not invalid")
	assert.Equal(t, "2", retry)
	assert.Equal(t, fetches+1, e.is.JWKSFetches(), "the unknown kid caused one fetch")
	_, _, err = v.Verify(context.Background(), old)
	assert.NoError(t, err, "the previous keys stay in use")
	// The failure woke the refresher, which waits the backoff, not 15 min.
	assert.Equal(t, 2*time.Second, ft.next(t), "the refresher retries with the backoff")

	// Before Retry-After has passed: no fetch, and Retry-After counts down.
	e.clock.Advance(time.Second)
	code, retry = retryAfterOf(t, v, fresh)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "1", retry, "Retry-After tells the time left")
	assert.Equal(t, fetches+1, e.is.JWKSFetches(), "no fetch before Retry-After has passed")

	// The JWK Set answers again; the client retries after Retry-After.
	e.is.SetJWKSHandler(nil)
	e.clock.Advance(time.Second)
	code, _ = retryAfterOf(t, v, fresh)
	assert.Equal(t, http.StatusNoContent, code, "the rotated key is fetched on the first retry")
	assert.Equal(t, fetches+2, e.is.JWKSFetches())

	// The failure of the request-triggered fetch was logged, without the
	// key id or the JWK Set's URL.
	logs := e.logs.String()
	assert.Contains(t, logs, "authn: jwks: fetch for an unknown key id failed")
	assert.NotContains(t, logs, "rotated-key-id")
	assert.NotContains(t, logs, e.is.JWKSURL())
	assert.NotContains(t, logs, secret)
	assert.Contains(t, logs, "keys fetched again", "the recovery is logged too")
}

// Issue 21, the bound: while the JWK Set is down, a flood of tokens with
// random kids causes at most one fetch per failure backoff (1 s doubling up
// to the cooldown), and their failures are logged at most once per
// cooldown, without key ids. When it answers again, a real new key is
// accepted once the Retry-After the flood was given has passed.
func TestJWKSOutageUnknownKidFlood(t *testing.T) {
	e := newEnv(t)
	const cooldown = 30 * time.Second
	v, ft := e.timedVerifier(t, context.Background(), func(o *JWTOptions) { o.UnknownKeyCooldown = cooldown })
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the refresher is never ticked here: only requests fetch
		for {
			select {
			case <-ft.asked:
			case <-stop:
				return
			}
		}
	}()
	valid := e.is.Token(t, claims("alice"))
	forged := make([]string, 8)
	kids := make([]string, len(forged))
	for i := range forged {
		kids[i] = fmt.Sprintf("flood-kid-%d-%x", i, randBytes(4))
		forged[i] = e.is.Token(t, claims("alice"), withHeader("kid", kids[i]))
	}
	e.clock.Advance(time.Minute)
	e.is.SetJWKSHandler(testissuer.Status(http.StatusBadGateway))
	start := e.is.JWKSFetches()
	const T = 10 * time.Minute
	var last *UnavailableError
	for elapsed := time.Duration(0); elapsed < T; elapsed += time.Second {
		var wg sync.WaitGroup
		for _, tok := range forged {
			wg.Go(func() {
				_, _, err := v.Verify(context.Background(), tok)
				assert.ErrorIs(t, err, ErrUnavailable, "cannot check now")
			})
		}
		wg.Wait()
		_, _, err := v.Verify(context.Background(), valid)
		assert.NoError(t, err, "tokens of known keys keep working")
		_, _, err = v.Verify(context.Background(), forged[0])
		require.True(t, errors.As(err, &last))
		assert.LessOrEqual(t, last.RetryAfter, cooldown)
		e.clock.Advance(time.Second)
	}
	fetches := e.is.JWKSFetches() - start
	// 2+4+8+16 s of growing backoff, then one per cooldown.
	bound := int64(4 + (T+cooldown-1)/cooldown + 1)
	assert.LessOrEqual(t, fetches, bound)
	assert.Greater(t, fetches, int64(4+T/cooldown/2), "the flood retries: the gate opens after each backoff")
	logs := e.logs.String()
	lines := int64(strings.Count(logs, "fetch for an unknown key id failed"))
	assert.LessOrEqual(t, lines, int64((T+cooldown-1)/cooldown)+1, "logged at most once per cooldown")
	assert.Positive(t, lines)
	for _, kid := range kids {
		assert.NotContains(t, logs, kid)
	}
	t.Logf("%v of unknown kids during an outage: %d fetches (bound %d), %d log lines", T, fetches, bound, lines)

	// The JWK Set answers again, with a rotated key.
	require.NoError(t, e.is.AddKey("after-flood", testissuer.RSA, "RS256", true))
	e.is.SetJWKSHandler(nil)
	e.clock.Advance(last.RetryAfter)
	_, _, err := v.Verify(context.Background(), e.is.Token(t, claims("alice"), testissuer.WithKey("after-flood")))
	assert.NoError(t, err, "fetched once the Retry-After given has passed")
}

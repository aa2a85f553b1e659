package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingThrottle admits a remote address until it has been refused
// limit times, and counts what it was asked.
type countingThrottle struct {
	mu              sync.Mutex
	limit           int
	refused         map[string]int
	admits, charged int
}

func (c *countingThrottle) Admit(r *http.Request) (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.admits++
	if c.refused[r.RemoteAddr] >= c.limit {
		return false, 2500 * time.Millisecond
	}
	return true, 0
}

func (c *countingThrottle) chargedNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.charged
}

func (c *countingThrottle) Refused(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.charged++
	c.refused[r.RemoteAddr]++
}

// A Throttle is asked about credentials not verified lately, told about
// every refusal of admitted ones but those the server could not check
// now, and its "no" is a 429 with Retry-After; a token refused lately for
// a lasting reason costs no verification again (issues 19, 27).
func TestAuthenticateThrottle(t *testing.T) {
	var calls atomic.Int64
	counting := VerifierFunc(func(ctx context.Context, tok string) (principal.Principal, time.Time, error) {
		calls.Add(1)
		if strings.HasPrefix(tok, "forged") {
			return principal.Principal{}, time.Time{}, errSignature
		}
		return stubVerifier().Verify(ctx, tok)
	})
	th := &countingThrottle{limit: 3, refused: map[string]int{}}
	a, err := NewAuthenticator(counting, Options{Resource: testResource, Logger: discardLogger(), Throttle: th})
	require.NoError(t, err)
	h := a.Handler(okHandler)
	from := func(addr string, auth ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		r.RemoteAddr = addr
		for _, v := range auth {
			r.Header.Add("Authorization", v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	// No credentials: the throttle is not asked.
	assert.Equal(t, http.StatusUnauthorized, from("192.0.2.1:1").Code)
	assert.Zero(t, th.admits)
	// A new good token is admitted and charges nothing.
	assert.Equal(t, http.StatusOK, from("192.0.2.1:1", "Bearer good-alice").Code)
	assert.Equal(t, 1, th.admits)
	assert.Zero(t, th.charged)
	// Once verified, it is served without asking the throttle.
	assert.Equal(t, http.StatusOK, from("192.0.2.1:1", "Bearer good-alice").Code)
	assert.Equal(t, 1, th.admits)
	// A token that cannot be checked now is the server's fault: not charged.
	assert.Equal(t, http.StatusServiceUnavailable, from("192.0.2.1:1", "Bearer down").Code)
	assert.Zero(t, th.charged)

	// Attack: forged tokens and malformed headers are charged until the
	// address is throttled.
	for _, auth := range []string{"Bearer forged", "Bearer", "Bearer otheraud"} {
		assert.NotEqual(t, http.StatusOK, from("192.0.2.1:1", auth).Code, auth)
	}
	assert.Equal(t, 3, th.charged)
	before := calls.Load()
	for range 50 {
		w := from("192.0.2.1:1", "Bearer forged")
		require.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "3", w.Header().Get("Retry-After"), "2.5 s rounded up")
		assert.Equal(t, `{"error":"too_many_requests"}`, w.Body.String())
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	}
	assert.Equal(t, before, calls.Load(), "a token refused lately costs no verification")
	// New forged tokens from the throttled address are checked one at a
	// time in the throttled lane, and answered 429.
	for i := range 5 {
		assert.Equal(t, http.StatusTooManyRequests, from("192.0.2.1:1", fmt.Sprintf("Bearer forged-%d", i)).Code)
	}
	assert.Equal(t, before+5, calls.Load())
	assert.Equal(t, 3, th.charged, "throttled requests are not charged again")
	// The valid token from the throttled address is still served, and a
	// new valid one too (checked in the lane).
	assert.Equal(t, http.StatusOK, from("192.0.2.1:1", "Bearer good-alice").Code)
	assert.Equal(t, http.StatusOK, from("192.0.2.1:1", "Bearer good-dave").Code)
	// Another address is served; its good token verifies.
	assert.Equal(t, http.StatusOK, from("198.51.100.7:1", "Bearer good-bob").Code)
	// A principal from earlier middleware never meets the throttle.
	admits := th.admits
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "192.0.2.1:1"
	r.Header.Set("Authorization", "Bearer forged")
	_, err = a.Authenticate(withPrincipal(t, r, principal.Principal{Subject: "carol", Audience: testResource}))
	require.NoError(t, err)
	assert.Equal(t, admits, th.admits)
}

// Attack (issue 27): a client sending forged tokens from the same
// address as an honest caller (as every client does behind one proxy).
// The honest caller's requests — with a token verified before, and with
// fresh tokens never seen — are all served; the forger gets its burst of
// 401s and then 429s, and the checks of its new tokens run at most
// throttledChecks at a time. Before the change the honest caller got 429
// as soon as the address's bucket was empty.
func TestValidTokenNeverPaysForForged(t *testing.T) {
	e := newEnv(t)
	jv := e.verifier(t, nil)
	var inFlight, maxInFlight atomic.Int64
	watched := VerifierFunc(func(ctx context.Context, tok string) (principal.Principal, time.Time, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		return jv.Verify(ctx, tok)
	})
	th := &countingThrottle{limit: 5, refused: map[string]int{}}
	a, err := NewAuthenticator(NewCache(watched, CacheOptions{Now: e.clock.Now}),
		Options{Resource: testResource, Logger: discardLogger(), Throttle: th})
	require.NoError(t, err)
	h := a.Handler(okHandler)
	const proxy = "10.0.0.1:443" // everyone's address behind the proxy
	send := func(tok string) int {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		r.RemoteAddr = proxy
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	cached := e.is.Token(t, claims("alice", "read"))
	require.Equal(t, http.StatusOK, send(cached))
	// The forger: real kids, signatures that fail, each token new.
	base := e.is.Token(t, claims("mallory", "read"))
	var forgerCodes sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var forged atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tok := base[:len(base)-6] + fmt.Sprintf("%c%c%05d", 'A'+g, 'A'+i%26, i%100000)[:6]
				code := send(tok)
				forged.Add(1)
				v, _ := forgerCodes.LoadOrStore(code, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
		}()
	}
	// Let the forger empty the bucket first.
	for th.chargedNow() < th.limit {
		time.Sleep(time.Millisecond)
	}
	served, total := 0, 0
	for i := range 40 {
		tok := cached
		if i%2 == 1 { // a fresh token, never seen
			tok = e.is.Token(t, claims(fmt.Sprintf("user-%d", i), "read"))
		}
		total++
		if send(tok) == http.StatusOK {
			served++
		}
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, total, served, "the honest caller is served every time")
	codes := map[int]int64{}
	forgerCodes.Range(func(k, v any) bool { codes[k.(int)] = v.(*atomic.Int64).Load(); return true })
	// The burst: limit refusals, and up to three more admitted at once
	// by the four forging goroutines before their charges landed.
	burst := codes[http.StatusUnauthorized]
	assert.True(t, burst >= int64(th.limit) && burst <= int64(th.limit+3), "the forger's burst: %v", codes)
	assert.Equal(t, forged.Load()-burst, codes[http.StatusTooManyRequests], "then 429: %v", codes)
	assert.Zero(t, codes[http.StatusOK])
	assert.Equal(t, int(burst), th.chargedNow(), "only admitted refusals are charged")
	// Verifications: at most the lane's, plus the honest caller's own.
	assert.LessOrEqual(t, maxInFlight.Load(), int64(throttledChecks+1))
}

// RequireScopes grants a caller whose scopes came in claim order (issue
// 20: HasScopes binary-searched an unsorted slice and refused it).
func TestRequireScopesAnyOrder(t *testing.T) {
	a, err := NewAuthenticator(nil, Options{Resource: testResource, Logger: discardLogger()})
	require.NoError(t, err)
	h := a.RequireScopes("notes:read")(okHandler)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = withPrincipal(t, r, principal.Principal{Subject: "alice", Scopes: []string{"notes:write", "notes:read"}, Audience: testResource})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
}

// StatusOf is WriteError's decision: the same status for every refusal,
// DPoP's included, whatever the mode (observers report it; issue 20
// retired the endpoint's copy of this table).
func TestStatusOfIsWriteErrors(t *testing.T) {
	for _, mode := range []dpop.Mode{dpop.Off, dpop.Allowed, dpop.Required} {
		a, err := NewAuthenticator(nil, Options{Resource: testResource, Logger: discardLogger(), DPoP: dpop.Options{Mode: mode, RequireNonce: mode != dpop.Off}})
		require.NoError(t, err)
		for name, e := range map[string]error{
			"no credentials":     principal.ErrUnauthenticated,
			"invalid token":      ErrInvalidToken,
			"invalid request":    ErrInvalidRequest,
			"unavailable":        ErrUnavailable,
			"throttled":          &ThrottledError{RetryAfter: time.Second},
			"insufficient scope": &principal.ScopeError{Required: []string{"read"}},
			"invalid DPoP proof": dpop.ErrInvalidProof,
			"use DPoP nonce":     dpop.ErrUseNonce,
			"other":              errors.New("boom"),
		} {
			r := httptest.NewRequest(http.MethodPost, testResource, nil)
			r.Header.Set("Authorization", "DPoP abc")
			w := httptest.NewRecorder()
			a.WriteError(w, r, e)
			assert.Equal(t, w.Code, a.StatusOf(e), "%s, DPoP %v", name, mode)
		}
	}
}

// A DPoP nonce challenge refuses no credential: it comes only after the
// token verified and the proof's key proved to be the token's. An honest
// client meets one at its first request and at every nonce rotation; it
// is never charged to the address, and a token verified lately stays
// known-good through it (served without asking the Throttle).
func TestDPoPNonceChallengeIsNotCharged(t *testing.T) {
	d := newDPoPEnv(t, testissuer.EC256, func(o *dpop.Options) { o.RequireNonce = true; o.NonceLifetime = 2 * minute })
	th := &countingThrottle{limit: 1, refused: map[string]int{}}
	a, err := NewAuthenticator(d.cache, Options{Resource: testResource, Scopes: []string{"read"}, Logger: discardLogger(), Throttle: th,
		DPoP: dpop.Options{Mode: dpop.Allowed, RequireNonce: true, NonceLifetime: 2 * minute, Now: d.clock.Now}})
	require.NoError(t, err)
	d.a = a
	withNonce := func(nonce string) string {
		return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Nonce = nonce })
	}
	w := d.send(http.MethodPost, d.url, "DPoP "+d.token, withNonce(""))
	require.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"))
	nonce := w.Header().Get("DPoP-Nonce")
	require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, withNonce(nonce)).Code)
	admits := th.admits

	d.clock.Advance(2*minute + seconds(1)) // the nonce rotates
	w = d.send(http.MethodPost, d.url, "DPoP "+d.token, withNonce(nonce))
	require.Equal(t, "use_dpop_nonce", challengeError(w, "DPoP"))
	require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, withNonce(w.Header().Get("DPoP-Nonce"))).Code)
	assert.Zero(t, th.chargedNow(), "no nonce challenge charged")
	assert.Equal(t, admits, th.admits, "the token stayed known-good: the Throttle was not asked")
}

package authn

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// dpopCaller is one client of a dpopEnv: a proof key of its own and a
// token (from the env's real issuer) bound to it.
type dpopCaller struct {
	key   *testissuer.ProofKey
	token string
}

// newCaller mints a proof key and a token for sub and client bound to it.
func (d *dpopEnv) newCaller(t *testing.T, sub, client string) dpopCaller {
	t.Helper()
	k, err := testissuer.NewProofKey(testissuer.Ed25519)
	require.NoError(t, err)
	return d.callerWithKey(t, k, sub, client)
}

// callerWithKey mints a token for sub and client bound to the proof key k.
func (d *dpopEnv) callerWithKey(t *testing.T, k *testissuer.ProofKey, sub, client string) dpopCaller {
	t.Helper()
	jkt, err := k.Thumbprint()
	require.NoError(t, err)
	c := testissuer.Claims{Subject: sub, ClientID: client, Scopes: []string{"read"}, DPoPThumbprint: jkt}
	return dpopCaller{key: k, token: d.is.Token(t, c, testissuer.WithKey(testissuer.KidES256))}
}

// proofBy signs a fresh proof by c for a POST to the env's URL, now.
func (d *dpopEnv) proofBy(t *testing.T, c dpopCaller) string {
	t.Helper()
	s, err := c.key.Sign(testissuer.Proof{Method: http.MethodPost, URL: d.url, Token: c.token, Time: d.clock.Now()})
	require.NoError(t, err)
	return s
}

// sendBy sends proof with c's token.
func (d *dpopEnv) sendBy(c dpopCaller, proof string) *httptest.ResponseRecorder {
	return d.send(http.MethodPost, d.url, "DPoP "+c.token, proof)
}

// flood sends fresh proofs by c until one is refused (at most limit) and
// returns how many were accepted, the first proof, and the refusal.
func (d *dpopEnv) flood(t *testing.T, c dpopCaller, limit int) (accepted int, first string, refused *httptest.ResponseRecorder) {
	t.Helper()
	for range limit {
		p := d.proofBy(t, c)
		w := d.sendBy(c, p)
		if w.Code != http.StatusOK {
			return accepted, first, w
		}
		if first == "" {
			first = p
		}
		accepted++
	}
	return accepted, first, nil
}

// retryAfter returns the Retry-After of w in seconds (0 when absent).
func retryAfter(w *httptest.ResponseRecorder) int {
	n, _ := strconv.Atoi(w.Header().Get("Retry-After"))
	return n
}

const (
	shareMax    = 40
	shareEach   = 10
	sharePeriod = 2*testProofWindow + time.Second // the replay cache's rotation period
)

func shareOptions(o *dpop.Options) {
	o.MaxReplayEntries = shareMax
	o.MaxReplayEntriesPerCaller = shareEach
}

// One caller floods the replay cache: it is refused (503, Retry-After)
// once it holds its share, its replays are still refused as replays in
// both generations, and every other caller's fresh proofs are still
// remembered and accepted. A caller is an identity with its bound key:
// instances of one client with keys of their own (client-credentials
// tokens, whose subject is the client id) have shares of their own
// (issue 19), while other tokens bound to the flooder's key share its
// share. Before shares, the flooder filled the whole cache and every DPoP
// caller got 503.
func TestDPoPReplayShare(t *testing.T) {
	type who struct{ sub, client string }
	for _, tc := range []struct {
		name     string
		flooder  who
		refused  []who // other tokens of the flooder's identity bound to its key
		accepted []who // other identities, and the flooder's identity with other keys
	}{
		{
			name:    "subject",
			flooder: who{"mallory", "client-1"},
			// Attack: another token for the same key, or another client
			// of the same user with it, does not buy a new share.
			refused: []who{{"mallory", "client-1"}, {"mallory", "client-2"}},
			accepted: []who{{"alice", "client-1"}, {"bob", "client-1"}, {"", "client-1"}, {"", "mallory"},
				{"mallory", "client-1"}}, // a token of the AS bound to another key
		},
		{
			// Two instances of one client (oidc-provider's client
			// credentials: sub is the client id), each with its own key:
			// one at its share does not lock the other out.
			name:     "client credentials, two instances",
			flooder:  who{"svc-1", "svc-1"},
			refused:  []who{{"svc-1", "svc-1"}},
			accepted: []who{{"svc-1", "svc-1"}, {"svc-1", "svc-1"}, {"", "svc-2"}, {"alice", "client-1"}},
		},
		{
			name:     "client without subject",
			flooder:  who{"", "svc-1"},
			refused:  []who{{"", "svc-1"}},
			accepted: []who{{"svc-1", "svc-1"}, {"", "svc-1"}, {"", "svc-2"}, {"alice", "client-1"}},
		},
		{
			// A token with neither subject nor client id is charged to its
			// bound key: a new key needs a new token from the issuer.
			name:     "neither subject nor client",
			flooder:  who{"", ""},
			refused:  []who{{"", ""}},
			accepted: []who{{"", ""}, {"alice", "client-1"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDPoPEnv(t, testissuer.Ed25519, shareOptions)
			// The generation starts with a first proof, and the flood comes
			// late in it, so that its proofs are still within their window
			// after the next rotation.
			require.Equal(t, http.StatusOK, d.send(http.MethodPost, d.url, "DPoP "+d.token, d.proof(t, http.MethodPost, nil)).Code)
			d.clock.Advance(100 * time.Second)
			flooder := d.newCaller(t, tc.flooder.sub, tc.flooder.client)
			n, first, w := d.flood(t, flooder, shareMax+1)
			assert.Equal(t, shareEach, n, "the flooder is refused at its share")
			require.NotNil(t, w)
			assert.Equal(t, http.StatusServiceUnavailable, w.Code)
			// Its share frees when its proofs, all in the current
			// generation, are dropped: 21 s to the rotation, then a period.
			assert.Equal(t, 21+int(sharePeriod/time.Second), retryAfter(w))
			// Attack: a replay is a replay, share or not.
			assert.Equal(t, "invalid_dpop_proof", challengeError(d.sendBy(flooder, first), "DPoP"))
			for _, o := range tc.refused {
				c := d.callerWithKey(t, flooder.key, o.sub, o.client)
				assert.Equal(t, http.StatusServiceUnavailable, d.sendBy(c, d.proofBy(t, c)).Code, "%+v", o)
			}
			for _, o := range tc.accepted {
				c := d.newCaller(t, o.sub, o.client)
				for i := range 3 {
					assert.Equal(t, http.StatusOK, d.sendBy(c, d.proofBy(t, c)).Code, "%+v proof %d", o, i)
				}
			}
			// After the rotation the flood is in the older generation: its
			// replay is still refused, the flooder still holds its share.
			d.clock.Advance(30 * time.Second)
			assert.Equal(t, "invalid_dpop_proof", challengeError(d.sendBy(flooder, first), "DPoP"))
			w = d.sendBy(flooder, d.proofBy(t, flooder))
			assert.Equal(t, http.StatusServiceUnavailable, w.Code)
			assert.Equal(t, int(sharePeriod/time.Second)-9, retryAfter(w))
			c := d.newCaller(t, "carol", "client-1")
			assert.Equal(t, http.StatusOK, d.sendBy(c, d.proofBy(t, c)).Code)
			// One more period: the flood has aged out, the share is back.
			d.clock.Advance(sharePeriod)
			assert.Equal(t, http.StatusOK, d.sendBy(flooder, d.proofBy(t, flooder)).Code)
		})
	}
}

// Requests that fail before the proof is accepted charge nothing: the
// share is charged only after the token, its binding to the proof key and
// every other proof check passed. Each row floods past the share with
// alice's identity (where a token is involved); alice then still gets her
// whole share.
func TestDPoPReplayShareChargesOnlyAccepted(t *testing.T) {
	d := newDPoPEnv(t, testissuer.Ed25519, shareOptions)
	other, err := testissuer.NewProofKey(testissuer.Ed25519)
	require.NoError(t, err)
	expiredC := claims("alice", "read")
	expiredC.DPoPThumbprint = d.jkt
	expiredC.IssuedAt, expiredC.ExpiresAt = d.clock.Now().Add(-2*time.Hour), d.clock.Now().Add(-time.Hour)
	expired := d.is.Token(t, expiredC, testissuer.WithKey(testissuer.KidES256))
	forged := d.token[:len(d.token)-4] + "AAAA"
	sign := func(k *testissuer.ProofKey, p testissuer.Proof) string {
		s, err := k.Sign(p)
		require.NoError(t, err)
		return s
	}
	for _, tc := range []struct {
		name  string
		authz string
		proof func() string
	}{
		// Attack: proofs with no token at all.
		{"no token", "", func() string { return d.proof(t, http.MethodPost, nil) }},
		// Attack: a token whose signature does not verify.
		{"forged token", "DPoP " + forged, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = forged })
		}},
		// Attack: an expired token bound to the key.
		{"expired token", "DPoP " + expired, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = expired })
		}},
		// Attack: an unbound token presented as DPoP.
		{"unbound token", "DPoP " + d.plain, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = d.plain })
		}},
		// Attack: alice's token with proofs of a key it is not bound to
		// (free to mint: this must never charge alice).
		{"another key", "DPoP " + d.token, func() string {
			return sign(other, testissuer.Proof{Method: http.MethodPost, URL: d.url, Token: d.token, Time: d.clock.Now()})
		}},
		// Attack: proofs that fail their own checks.
		{"bad signature", "DPoP " + d.token, func() string {
			return swapSignature(d.proof(t, http.MethodPost, nil), d.proof(t, http.MethodGet, nil))
		}},
		{"wrong ath", "DPoP " + d.token, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Token = d.plain })
		}},
		{"wrong htm", "DPoP " + d.token, func() string { return d.proof(t, http.MethodGet, nil) }},
		{"wrong htu", "DPoP " + d.token, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.URL = "https://other.example/mcp" })
		}},
		{"stale iat", "DPoP " + d.token, func() string {
			return d.proof(t, http.MethodPost, func(p *testissuer.Proof) { p.Time = d.clock.Now().Add(-2 * testProofWindow) })
		}},
	} {
		for range shareEach + 5 {
			w := d.send(http.MethodPost, d.url, tc.authz, tc.proof())
			require.Equal(t, http.StatusUnauthorized, w.Code, tc.name)
		}
		proofs, callers := d.a.dpop.c.Len()
		assert.Zero(t, proofs, tc.name)
		assert.Zero(t, callers, tc.name)
	}
	alice := dpopCaller{key: d.key, token: d.token}
	n, _, _ := d.flood(t, alice, shareMax)
	assert.Equal(t, shareEach, n, "alice's share is whole")
}

// Many identities: memory stays within MaxReplayEntries proofs, and the
// per-caller counters within as many callers per generation, while each
// caller stays under its share; the cache then refuses everyone (503)
// rather than forget a live proof.
func TestDPoPReplayShareMemoryBound(t *testing.T) {
	d := newDPoPEnv(t, testissuer.Ed25519, shareOptions)
	for round := range 3 {
		full := 0
		for i := range 2 * shareMax {
			c := d.newCaller(t, "user-"+strconv.Itoa(round)+"-"+strconv.Itoa(i), "client-1")
			for range 2 {
				if w := d.sendBy(c, d.proofBy(t, c)); w.Code == http.StatusServiceUnavailable {
					full++
				} else {
					require.Equal(t, http.StatusOK, w.Code)
				}
				proofs, callers := d.a.dpop.c.Len()
				require.LessOrEqual(t, proofs, shareMax)
				require.LessOrEqual(t, callers, proofs)
			}
		}
		assert.Positive(t, full, "round %d: the cache filled and refused", round)
		d.clock.Advance(sharePeriod)
	}
}

// Several identities at once, under -race: each flooder is accepted
// exactly its share, each of its replays is refused, and the light callers
// are all accepted; the cache never holds more than its bound.
func TestDPoPReplayShareConcurrent(t *testing.T) {
	d := newDPoPEnv(t, testissuer.Ed25519, func(o *dpop.Options) {
		o.MaxReplayEntries = 5 * shareEach
		o.MaxReplayEntriesPerCaller = shareEach
	})
	type caller struct {
		c      dpopCaller
		proofs []string
		ok     atomic.Int32
	}
	var flooders, light []*caller
	for i := range 4 {
		f := &caller{c: d.newCaller(t, "flooder-"+strconv.Itoa(i), "client-1")}
		for range 3 * shareEach {
			f.proofs = append(f.proofs, d.proofBy(t, f.c))
		}
		f.proofs = append(f.proofs, f.proofs[:shareEach]...) // replays
		flooders = append(flooders, f)
	}
	for i := range 2 {
		l := &caller{c: d.newCaller(t, "light-"+strconv.Itoa(i), "client-1")}
		for range shareEach / 2 {
			l.proofs = append(l.proofs, d.proofBy(t, l.c))
		}
		light = append(light, l)
	}
	var wg sync.WaitGroup
	for _, c := range append(append([]*caller{}, flooders...), light...) {
		for _, p := range c.proofs {
			wg.Go(func() {
				if d.sendBy(c.c, p).Code == http.StatusOK {
					c.ok.Add(1)
				}
			})
		}
	}
	wg.Wait()
	for i, f := range flooders {
		assert.Equal(t, int32(shareEach), f.ok.Load(), "flooder %d", i)
	}
	for i, l := range light {
		assert.Equal(t, int32(shareEach/2), l.ok.Load(), "light caller %d", i)
	}
	assert.LessOrEqual(t, d.replayLen(), 5*shareEach)
}

// The refusal warnings are logged once a rotation period, not on every
// refused request: a flood must not flood the operator's log too.
func TestDPoPReplayWarningRateLimited(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		fill       func(d *dpopEnv, t *testing.T) dpopCaller // returns a caller that is now refused
	}{
		{"over share", "holds its share of the replay cache", func(d *dpopEnv, t *testing.T) dpopCaller {
			c := d.newCaller(t, "mallory", "client-1")
			d.flood(t, c, shareMax)
			return c
		}},
		{"full", "the replay cache is full", func(d *dpopEnv, t *testing.T) dpopCaller {
			for i := range shareMax / shareEach {
				d.flood(t, d.newCaller(t, "user-"+strconv.Itoa(i), "client-1"), shareEach)
			}
			return d.newCaller(t, "late", "client-1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDPoPEnv(t, testissuer.Ed25519, shareOptions)
			c := tc.fill(d, t)
			for range 20 {
				require.Equal(t, http.StatusServiceUnavailable, d.sendBy(c, d.proofBy(t, c)).Code)
			}
			assert.Equal(t, 1, strings.Count(d.logs.String(), tc.line))
			d.clock.Advance(sharePeriod / 2)
			require.Equal(t, http.StatusServiceUnavailable, d.sendBy(c, d.proofBy(t, c)).Code)
			assert.Equal(t, 1, strings.Count(d.logs.String(), tc.line), "still within the period")
			// A period after the first warning, the next refusal warns
			// again (the flood is refilled after the rotation).
			d.clock.Advance(sharePeriod/2 + time.Second)
			tc.fill(d, t)
			for range 5 {
				d.sendBy(c, d.proofBy(t, c))
			}
			assert.Equal(t, 2, strings.Count(d.logs.String(), tc.line))
		})
	}
}

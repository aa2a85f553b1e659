package authn

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noKid mints without the kid header (RFC 7515 §4.1.4: kid is optional).
var noKid = testissuer.WithHeader("kid", nil)

// A token without kid is verified when exactly one key of the issuer's set
// fits its alg (issue 37; before, every token without kid was refused
// with reason "kid"). The catalogue's A5 "kid missing" token — the
// issuer's own key, no kid — is genuine once the issuer publishes one key
// for RS256; every forged variant stays refused.
func TestKidlessTokenOneCandidate(t *testing.T) {
	e := newEnv(t)
	e.is.Unpublish(testissuer.KidRSANoAlg) // rs256 is now the only key for RS256 (ps256 names PS256)
	v := e.verifier(t, nil)
	ctx := context.Background()

	p, _, err := v.Verify(ctx, e.is.Token(t, claims("alice", "read"), noKid))
	require.NoError(t, err, "the issuer's own key, no kid")
	assert.Equal(t, "alice", p.Subject)
	p, _, err = v.Verify(ctx, e.is.Token(t, claims("bob"), noKid, testissuer.WithKey(testissuer.KidPS256)))
	require.NoError(t, err, "PS256: ps256 is the one key for it")
	assert.Equal(t, "bob", p.Subject)

	attacker, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	payload, err := e.is.Payload(claims("alice", "admin"))
	require.NoError(t, err)
	forge := func(alg string, key any, header string) string {
		tok, err := testissuer.Compact(alg, key, []byte(header), payload)
		require.NoError(t, err)
		return tok
	}
	pem, err := e.is.PublicKeyPEM(testissuer.KidRS256)
	require.NoError(t, err)
	rsKey, _ := e.is.Key(testissuer.KidRS256)
	for _, tc := range []struct {
		name, token, reason string
	}{
		{"attacker's key, no kid", forge("RS256", attacker, `{"alg":"RS256","typ":"at+jwt"}`), "signature"},
		{"HS256 with the public key as secret, no kid", forge("HS256", pem, `{"alg":"HS256","typ":"at+jwt"}`), "alg"},
		{"none, no kid", forge("none", nil, `{"alg":"none","typ":"at+jwt"}`), "malformed"},
		{"rs256's key under PS256 (ps256 is the one PS256 key)", forge("PS256", rsKey.Private, `{"alg":"PS256","typ":"at+jwt"}`), "signature"},
		{"empty kid is no missing kid", forge("RS256", rsKey.Private, `{"alg":"RS256","kid":"","typ":"at+jwt"}`), "kid"},
		{"kid null", forge("RS256", rsKey.Private, `{"alg":"RS256","kid":null,"typ":"at+jwt"}`), "header"},
		{"typ JWT without the option", forge("RS256", rsKey.Private, `{"alg":"RS256","typ":"JWT"}`), "typ"},
	} {
		_, _, err := v.Verify(ctx, tc.token)
		assert.ErrorIs(t, err, ErrInvalidToken, tc.name)
		assert.Equal(t, tc.reason, rejectReason(err), tc.name)
	}

	// Keys whose use or key_ops forbid verification are no candidates: an
	// RSA encryption key (use enc) and one whose key_ops say encrypt leave
	// rs256 the only key for RS256.
	e3 := newEnv(t)
	e3.is.Unpublish(testissuer.KidRSANoAlg)
	for _, extra := range []map[string]any{{"use": "enc"}, {"key_ops": []string{"encrypt"}}} {
		k, err := testissuer.GenerateKey(testissuer.RSA)
		require.NoError(t, err)
		jk, err := jwk.FromRaw(k.Public())
		require.NoError(t, err)
		for name, v := range extra {
			require.NoError(t, jk.Set(name, v))
		}
		raw, err := json.Marshal(jk)
		require.NoError(t, err)
		e3.is.AddRawJWK(raw)
	}
	v3 := e3.verifier(t, nil)
	_, _, err = v3.Verify(ctx, e3.is.Token(t, claims("erin"), noKid))
	require.NoError(t, err, "use enc and key_ops encrypt keys are not counted")

	// A JWK without kid is kept for tokens without kid only.
	priv, err := testissuer.GenerateKey(testissuer.Ed25519)
	require.NoError(t, err)
	jk, err := jwk.FromRaw(priv.Public())
	require.NoError(t, err)
	raw, err := json.Marshal(jk)
	require.NoError(t, err)
	e2 := newEnv(t)
	e2.is.Unpublish(testissuer.KidEdDSA, testissuer.KidEdDSANoAlg)
	e2.is.AddRawJWK(raw)
	v2 := e2.verifier(t, nil)
	p2, err := e2.is.Payload(claims("carol"))
	require.NoError(t, err)
	tok, err := testissuer.Compact("EdDSA", priv, []byte(`{"alg":"EdDSA","typ":"at+jwt"}`), p2)
	require.NoError(t, err)
	p, _, err = v2.Verify(ctx, tok)
	require.NoError(t, err, "the one EdDSA key, published without kid")
	assert.Equal(t, "carol", p.Subject)
	tok, err = testissuer.Compact("EdDSA", priv, []byte(`{"alg":"EdDSA","kid":"","typ":"at+jwt"}`), p2)
	require.NoError(t, err)
	_, _, err = v2.Verify(ctx, tok)
	assert.Equal(t, "kid", rejectReason(err), "an empty kid never selects the key without kid")
}

// Several keys fit the alg: the token is refused without trying any of
// them (the attacker's token gets the same refusal as the issuer's own),
// without a fetch, and the refusal log names the count and the alg —
// never a key id.
func TestKidlessTokenSeveralCandidates(t *testing.T) {
	e := newEnv(t) // rs256 and rsa-noalg both fit RS256
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	jv := e.verifier(t, nil)
	fetches := e.is.JWKSFetches()
	own := e.is.Token(t, claims("alice"), noKid)
	attacker, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	payload, err := e.is.Payload(claims("alice"))
	require.NoError(t, err)
	forged, err := testissuer.Compact("RS256", attacker, []byte(`{"alg":"RS256","typ":"at+jwt"}`), payload)
	require.NoError(t, err)
	for _, tok := range []string{own, forged} {
		_, _, err := jv.Verify(context.Background(), tok)
		assert.ErrorIs(t, err, ErrInvalidToken)
		assert.Equal(t, ErrInvalidToken.Error(), err.Error())
		assert.Equal(t, "kid_absent", rejectReason(err))
	}
	assert.Equal(t, fetches, e.is.JWKSFetches(), "several candidates cause no fetch")

	a, err := NewAuthenticator(jv, Options{Resource: testResource, Logger: log})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, testResource, nil)
	r.Header.Set("Authorization", "Bearer "+own)
	w := httptest.NewRecorder()
	a.Handler(okHandler).ServeHTTP(w, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	logs := buf.String()
	assert.Contains(t, logs, "reason=kid_absent")
	assert.Contains(t, logs, "token has no kid and the JWK Set holds 2 keys for RS256")
	assert.NotContains(t, logs, "rotation", "a missing kid is no rotation")
	for _, kid := range []string{testissuer.KidRS256, testissuer.KidRSANoAlg} {
		assert.NotContains(t, logs, kid)
	}
	assert.NotContains(t, logs, own[strings.LastIndexByte(own, '.')+1:])
}

// The one key that fitted was rotated away: the signature fails, the set
// is fetched again under the unknown-kid gate (once per cooldown), and the
// token verifies with the new key. Forged tokens without kid cause no more
// fetches than random kids do. A token whose alg no key fits also fetches
// (the issuer may have moved to another key type).
func TestKidlessTokenAfterRotation(t *testing.T) {
	e := newEnv(t)
	e.is.Unpublish(testissuer.KidRSANoAlg, testissuer.KidECNoAlg, testissuer.KidES256)
	v := e.verifier(t, nil)
	ctx := context.Background()
	_, _, err := v.Verify(ctx, e.is.Token(t, claims("alice"), noKid))
	require.NoError(t, err)

	require.NoError(t, e.is.AddKey("rot-2", testissuer.RSA, "RS256", true))
	e.is.Unpublish(testissuer.KidRS256)
	fresh := e.is.Token(t, claims("alice"), noKid, testissuer.WithKey("rot-2"))
	fetches := e.is.JWKSFetches()
	_, _, err = v.Verify(ctx, fresh)
	assert.Equal(t, "signature", rejectReason(err), "within the cooldown after the warm-up: no fetch")
	assert.Equal(t, fetches, e.is.JWKSFetches())

	e.clock.Advance(31 * time.Second)
	p, _, err := v.Verify(ctx, fresh)
	require.NoError(t, err, "the rotated key is fetched on the signature failure")
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, fetches+1, e.is.JWKSFetches())

	// A flood of forged tokens without kid: at most one fetch per cooldown.
	attacker, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	payload, err := e.is.Payload(claims("alice"))
	require.NoError(t, err)
	forged, err := testissuer.Compact("RS256", attacker, []byte(`{"alg":"RS256","typ":"at+jwt"}`), payload)
	require.NoError(t, err)
	fetches = e.is.JWKSFetches()
	for i := range 100 {
		if i%10 == 0 {
			e.clock.Advance(5 * time.Second)
		}
		_, _, err := v.Verify(ctx, forged)
		require.Equal(t, "signature", rejectReason(err))
	}
	assert.LessOrEqual(t, e.is.JWKSFetches()-fetches, int64(2), "50 s of forged tokens without kid: at most ⌈50/30⌉ fetches")
	_, _, err = v.Verify(ctx, fresh)
	require.NoError(t, err, "valid tokens unaffected")

	// No EC key at all: an ES256 token without kid is refused naming 0 keys,
	// and fetched for once the gate opens.
	es := e.is.Token(t, claims("dave"), noKid, testissuer.WithKey(testissuer.KidES256))
	e.clock.Advance(31 * time.Second)
	fetches = e.is.JWKSFetches()
	_, _, err = v.Verify(ctx, es)
	var ke *kidlessError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, 0, ke.n)
	assert.Equal(t, fetches+1, e.is.JWKSFetches(), "no candidate: one gated fetch")
	e.is.Publish(testissuer.KidES256)
	_, _, err = v.Verify(ctx, es)
	assert.Equal(t, "kid_absent", rejectReason(err), "the gate is closed for the cooldown")
	e.clock.Advance(31 * time.Second)
	p, _, err = v.Verify(ctx, es)
	require.NoError(t, err, "the new key type is fetched")
	assert.Equal(t, "dave", p.Subject)
}

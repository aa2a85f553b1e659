package dpopcheck

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/principal"
)

// sign signs a proof for a POST to dpopURL now, with header overrides.
func sign(t *testing.T, k *testissuer.ProofKey, header map[string]any) string {
	t.Helper()
	p, err := k.Sign(testissuer.Proof{Method: http.MethodPost, URL: dpopURL, Token: "tok", Time: time.Now(), Header: header})
	require.NoError(t, err)
	return p
}

// An RSA jwk whose n or e holds a line break (which Go's base64 decoder
// skips, even in strict mode) is the same key under another thumbprint:
// refused, so that each proof key has one thumbprint (RFC 7638 §3 takes
// the members as base64url, which has no line breaks).
func TestDPoPRSAKeyOneEncoding(t *testing.T) {
	k, err := testissuer.NewProofKey(testissuer.RSA)
	require.NoError(t, err)
	jkt, err := k.Thumbprint()
	require.NoError(t, err)
	pub, err := k.PublicJWK()
	require.NoError(t, err)
	n, e := pub["n"].(string), pub["e"].(string)
	good, err := parseProof(sign(t, k, nil), defaultMaxProofBytes, dpop.DefaultAlgorithms())
	require.NoError(t, err)
	assert.Equal(t, jkt, good.jkt)
	for name, jwk := range map[string]map[string]any{
		"n with LF":            testissuer.WithMember(pub, "n", n[:10]+"\n"+n[10:]),
		"n with CRLF":          testissuer.WithMember(pub, "n", n[:10]+"\r\n"+n[10:]),
		"e with LF":            testissuer.WithMember(pub, "e", e[:2]+"\n"+e[2:]),
		"n with CR at the end": testissuer.WithMember(pub, "n", n+"\r"),
	} {
		proof := sign(t, k, map[string]any{"jwk": jwk})
		_, err := parseProof(proof, defaultMaxProofBytes, dpop.DefaultAlgorithms())
		assert.ErrorIs(t, err, dpop.ErrInvalidProof, name)
		assert.Equal(t, errProofKey, err, name)
	}
}

// The share a proof is charged to: issuer-qualified, the subject's, else
// the client's, with the bound key, the kinds never meeting.
func TestDPoPReplayIdentity(t *testing.T) {
	c, err := New(dpop.Options{Mode: dpop.Allowed}, testResource, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	id := func(p principal.Principal) uint64 { return c.identity(&p) }
	const jktA, jktB = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
	alice := principal.Principal{Subject: "alice", ClientID: "c1", DPoPThumbprint: jktA}
	// The same share: another client of the same user with the same key.
	assert.Equal(t, id(alice), id(principal.Principal{Subject: "alice", ClientID: "c2", DPoPThumbprint: jktA}))
	for name, p := range map[string]principal.Principal{
		"another key of the user":   {Subject: "alice", ClientID: "c1", DPoPThumbprint: jktB},
		"another key of the client": {ClientID: "alice", DPoPThumbprint: jktB},
		"another subject":           {Subject: "bob", ClientID: "c1", DPoPThumbprint: jktA},
		"another issuer":            {Issuer: "https://b.example", Subject: "alice", ClientID: "c1", DPoPThumbprint: jktA},
		"the subject as a client":   {ClientID: "alice", DPoPThumbprint: jktA},
		"the subject as a key":      {DPoPThumbprint: "alice"},
		"issuer and subject joined": {Issuer: "https://a.example#", Subject: "alice"},
	} {
		assert.NotEqual(t, id(alice), id(p), name)
	}
	assert.NotEqual(t, id(principal.Principal{Issuer: "https://a.example#", Subject: "alice"}), id(principal.Principal{Issuer: "https://a.example", Subject: "#alice"}))
	assert.NotEqual(t, id(principal.Principal{ClientID: "c1", DPoPThumbprint: jktA}), id(principal.Principal{ClientID: "c1", DPoPThumbprint: jktB}))
	assert.NotEqual(t, id(principal.Principal{DPoPThumbprint: jktA}), id(principal.Principal{DPoPThumbprint: jktB}))
}

// Misuse is an error, never a panic (issue 28): a nil or zero Checker and
// a zero Proof answer errors.
func TestZeroValues(t *testing.T) {
	r, err := http.NewRequest(http.MethodPost, dpopURL, nil)
	require.NoError(t, err)
	p := &principal.Principal{Subject: "alice", DPoPThumbprint: "x"}
	for name, c := range map[string]*Checker{"nil": nil, "zero": {}} {
		_, err := c.ProofOf(r)
		assert.Error(t, err, name)
		assert.Error(t, c.Check(r, &Proof{}, "tok", p), name)
		assert.Equal(t, dpop.Off, c.Mode(), name)
		assert.Empty(t, c.Nonce(), name)
		n, callers := c.Len()
		assert.Zero(t, n+callers, name)
	}
	assert.Nil(t, (*Checker)(nil).Algorithms())
	c, err := New(dpop.Options{Mode: dpop.Allowed, RequireNonce: true}, testResource, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, c.Check(r, &Proof{}, "tok", p), dpop.ErrInvalidProof, "a zero Proof")
	assert.Error(t, c.Check(r, nil, "tok", p))
	assert.NotEmpty(t, c.Nonce())
	off, err := New(dpop.Options{}, testResource, nil)
	assert.NoError(t, err)
	assert.Nil(t, off, "dpop.Off makes no Checker")
}

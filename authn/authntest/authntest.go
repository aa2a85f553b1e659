// Package authntest is a token issuer for the tests of services protected
// by [authn]: it holds signing keys, serves their JWK Set over
// [net/http/httptest], and mints RFC 9068 access tokens for a resource —
// and DPoP proofs (RFC 9449) for tokens bound to a key — so a test of a
// JWT-protected endpoint is a few lines:
//
//	is := authntest.Start(t, authntest.Options{Resource: "https://mcp.example.com/mcp"})
//	v, err := authn.NewJWTVerifier(ctx, is.JWTOptions()) // as in production
//	req := httptest.NewRequest("POST", "/mcp", nil) // to the endpoint built on v
//	req.Header.Set("Authorization", "Bearer "+is.Token("alice", "docs:read"))
//
// Never use it outside tests: its keys live in memory and its JWK Set is
// served over plain http on 127.0.0.1. Issuers in one process share their
// signing keys (generated once, to keep tests fast); they differ in their
// issuer URL, which the verifier checks.
package authntest

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// Options configures an [Issuer]. Resource is required.
type Options struct {
	// Resource is the protected resource's canonical URI: the "aud" of
	// the tokens, and JWTOptions().Resource.
	Resource string
	// Issuer is the "iss" of the tokens. Empty means the JWK Set server's
	// URL (http://127.0.0.1:port).
	Issuer string
	// TTL is the tokens' lifetime. Zero means one hour.
	TTL time.Duration
	// Algorithm signs the tokens: ES256 (the default), RS256, PS256 or
	// EdDSA.
	Algorithm string
	// ClientID is the tokens' "client_id". Empty means "authntest-client".
	ClientID string
	// Now returns the current time for minting. Nil means time.Now.
	Now func() time.Time
}

// TokenOptions adjust one token; zero fields keep the Issuer's defaults.
type TokenOptions struct {
	// Scopes is the "scope" claim; nil means none.
	Scopes []string
	// ExpiresAt is "exp"; zero means now + TTL. A past time mints an
	// expired token.
	ExpiresAt time.Time
	// Issuer overrides "iss" (a token of another issuer).
	Issuer string
	// Audience overrides "aud" (a token for another resource).
	Audience string
	// Algorithm overrides Options.Algorithm.
	Algorithm string
	// ClientID overrides Options.ClientID.
	ClientID string
	// DPoP binds the token to the key (its thumbprint in cnf.jkt): it is
	// then accepted only with the DPoP scheme and a proof made with the
	// key ([DPoPKey.Authorize]).
	DPoP *DPoPKey
	// Claims are set last and override the above; a nil value removes
	// the claim.
	Claims map[string]any
}

// kids are the testissuer keys of the algorithms.
var kids = map[string]string{
	"ES256": testissuer.KidES256,
	"RS256": testissuer.KidRS256,
	"PS256": testissuer.KidPS256,
	"EdDSA": testissuer.KidEdDSA,
}

// Issuer is a test authorization server. Its methods are safe for
// concurrent use.
type Issuer struct {
	is       *testissuer.Issuer
	resource string
	clientID string
	alg      string
	now      func() time.Time
}

// errZero: an Issuer or DPoPKey not made by this package's constructors.
var errZero = errors.New("authntest: use New or Start (NewDPoPKey for a DPoPKey)")

// New starts an issuer. Call Close when done; in tests, [Start] does.
func New(opts Options) (*Issuer, error) {
	if opts.Resource == "" {
		return nil, errors.New("authntest: Options.Resource is required")
	}
	if opts.Algorithm == "" {
		opts.Algorithm = "ES256"
	}
	if _, ok := kids[opts.Algorithm]; !ok {
		return nil, fmt.Errorf("authntest: Options.Algorithm %q is not ES256, RS256, PS256 or EdDSA", opts.Algorithm)
	}
	if opts.TTL < 0 {
		return nil, errors.New("authntest: Options.TTL must not be negative")
	}
	if opts.ClientID == "" {
		opts.ClientID = "authntest-client"
	}
	is, err := testissuer.New(testissuer.Options{Issuer: opts.Issuer, Audience: opts.Resource, TTL: opts.TTL, Now: opts.Now})
	if err != nil {
		return nil, fmt.Errorf("authntest: %w", err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Issuer{is: is, resource: opts.Resource, clientID: opts.ClientID, alg: opts.Algorithm, now: now}, nil
}

// TB is the part of testing.TB that Start uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Start is New for tests: it fails t on error and closes the issuer when
// the test ends.
func Start(t TB, opts Options) *Issuer {
	t.Helper()
	is, err := New(opts)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	t.Cleanup(is.Close)
	return is
}

// Close stops the JWK Set server.
func (is *Issuer) Close() {
	if is != nil && is.is != nil {
		is.is.Close()
	}
}

// URL returns the issuer identifier: the tokens' "iss".
func (is *Issuer) URL() string {
	if is == nil || is.is == nil {
		return ""
	}
	return is.is.ID()
}

// JWKSURL returns the URL of the JWK Set.
func (is *Issuer) JWKSURL() string {
	if is == nil || is.is == nil {
		return ""
	}
	return is.is.JWKSURL()
}

// JWTOptions returns the options of an [authn.JWTVerifier] for this
// issuer's tokens: Issuer, Resource and JWKSURL, the rest zero.
func (is *Issuer) JWTOptions() authn.JWTOptions {
	if is == nil {
		return authn.JWTOptions{}
	}
	return authn.JWTOptions{Issuer: is.URL(), Resource: is.resource, JWKSURL: is.JWKSURL()}
}

// Token mints an access token for subject with the scopes given, for the
// resource, expiring after the TTL. It returns "" only if signing failed,
// which in-memory keys do not.
func (is *Issuer) Token(subject string, scopes ...string) string {
	tok, _ := is.TokenWith(subject, TokenOptions{Scopes: scopes})
	return tok
}

// TokenWith mints an access token for subject as o says.
func (is *Issuer) TokenWith(subject string, o TokenOptions) (string, error) {
	if is == nil || is.is == nil {
		return "", errZero
	}
	alg := is.alg
	if o.Algorithm != "" {
		alg = o.Algorithm
	}
	kid, ok := kids[alg]
	if !ok {
		return "", fmt.Errorf("authntest: TokenOptions.Algorithm %q is not ES256, RS256, PS256 or EdDSA", alg)
	}
	c := testissuer.Claims{Subject: subject, ClientID: is.clientID, Scopes: o.Scopes, Issuer: o.Issuer, ExpiresAt: o.ExpiresAt, Extra: o.Claims}
	if o.ClientID != "" {
		c.ClientID = o.ClientID
	}
	if o.Audience != "" {
		c.Audience = []string{o.Audience}
	}
	if !o.ExpiresAt.IsZero() && o.ExpiresAt.Before(is.now()) {
		c.IssuedAt = o.ExpiresAt.Add(-time.Hour)
	}
	if o.DPoP != nil {
		if o.DPoP.k == nil {
			return "", errZero
		}
		c.DPoPThumbprint = o.DPoP.jkt
	}
	tok, err := is.is.Sign(c, testissuer.WithKey(kid), testissuer.WithAlg(alg))
	if err != nil {
		return "", fmt.Errorf("authntest: %w", err)
	}
	return tok, nil
}

// Authorize sets r's Authorization header to a bearer token for subject
// with the scopes given.
func (is *Issuer) Authorize(r *http.Request, subject string, scopes ...string) error {
	tok, err := is.TokenWith(subject, TokenOptions{Scopes: scopes})
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// DPoPKey is a client's DPoP key (EC P-256, proofs signed ES256).
type DPoPKey struct {
	k   *testissuer.ProofKey
	jkt string
}

// NewDPoPKey generates a key.
func NewDPoPKey() (*DPoPKey, error) {
	k, err := testissuer.NewProofKey(testissuer.EC256)
	if err != nil {
		return nil, fmt.Errorf("authntest: %w", err)
	}
	jkt, err := k.Thumbprint()
	if err != nil {
		return nil, fmt.Errorf("authntest: %w", err)
	}
	return &DPoPKey{k: k, jkt: jkt}, nil
}

// Thumbprint returns the key's RFC 7638 thumbprint: a bound token's
// cnf.jkt.
func (k *DPoPKey) Thumbprint() string {
	if k == nil {
		return ""
	}
	return k.jkt
}

// Proof returns a fresh DPoP proof (new jti, iat now) for a request of
// method to url (the htu: the request URL as the client sees it, without
// query) presenting token; nonce is the server's DPoP-Nonce, or "".
func (k *DPoPKey) Proof(method, url, token, nonce string) (string, error) {
	if k == nil || k.k == nil {
		return "", errZero
	}
	p, err := k.k.Sign(testissuer.Proof{Method: method, URL: url, Token: token, Nonce: nonce})
	if err != nil {
		return "", fmt.Errorf("authntest: %w", err)
	}
	return p, nil
}

// Authorize sets r's Authorization header to "DPoP <token>" and its DPoP
// header to a fresh proof for r's method and URL (scheme, host and path)
// and token.
func (k *DPoPKey) Authorize(r *http.Request, token string) error {
	u := *r.URL
	u.RawQuery, u.Fragment = "", ""
	if u.Host == "" {
		u.Host = r.Host
	}
	if u.Scheme == "" {
		u.Scheme = "http"
		if r.TLS != nil {
			u.Scheme = "https"
		}
	}
	p, err := k.Proof(r.Method, u.String(), token, "")
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "DPoP "+token)
	r.Header.Set("DPoP", p)
	return nil
}

package testissuer

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Claims describes a token to mint. Zero fields get sensible defaults.
type Claims struct {
	Subject  string   // "sub"; omitted when empty
	ClientID string   // "client_id"; omitted when empty
	Scopes   []string // "scope", space-separated; omitted when nil
	// Audience is "aud"; nil means Options.Audience. One entry is encoded
	// as a string unless AudienceArray is set.
	Audience      []string
	AudienceArray bool
	Issuer        string    // "iss"; empty means the issuer's ID
	ExpiresAt     time.Time // "exp"; zero means now + TTL
	IssuedAt      time.Time // "iat"; zero means now
	NotBefore     time.Time // "nbf"; omitted when zero
	ID            string    // "jti"; empty means random
	// DPoPThumbprint binds the token to a DPoP key: "cnf": {"jkt": …}
	// (RFC 9449 §6.1); see [ProofKey.Thumbprint]. Omitted when empty.
	DPoPThumbprint string
	// Extra claims are set last and override the above; a nil value
	// removes the claim (for example "exp": nil mints a token without exp).
	Extra map[string]any
}

// SignOption adjusts the JOSE header or the key of a minted token.
type SignOption func(*signConfig)

type signConfig struct {
	kid    string
	alg    string
	typ    string
	header map[string]any
}

// WithKey signs with the key kid (default [KidRS256]); the header kid is kid.
func WithKey(kid string) SignOption { return func(c *signConfig) { c.kid = kid } }

// WithAlg sets the header alg and signs with that algorithm (default: the
// key's algorithm).
func WithAlg(alg string) SignOption { return func(c *signConfig) { c.alg = alg } }

// WithType sets the header typ (default "at+jwt"); "" omits it.
func WithType(typ string) SignOption { return func(c *signConfig) { c.typ = typ } }

// WithHeader sets a header parameter after the others (overriding alg,
// kid or typ in the header only: the signing key and algorithm stay); a
// nil value removes it.
func WithHeader(name string, value any) SignOption {
	return func(c *signConfig) {
		if c.header == nil {
			c.header = map[string]any{}
		}
		c.header[name] = value
	}
}

func (is *Issuer) claimsMap(c Claims) map[string]any {
	now := is.opts.Now()
	m := map[string]any{}
	m["iss"] = is.opts.Issuer
	if c.Issuer != "" {
		m["iss"] = c.Issuer
	}
	if c.Subject != "" {
		m["sub"] = c.Subject
	}
	if c.ClientID != "" {
		m["client_id"] = c.ClientID
	}
	if c.Scopes != nil {
		m["scope"] = strings.Join(c.Scopes, " ")
	}
	aud := c.Audience
	if aud == nil && is.opts.Audience != "" {
		aud = []string{is.opts.Audience}
	}
	switch {
	case len(aud) == 1 && !c.AudienceArray:
		m["aud"] = aud[0]
	case aud != nil:
		m["aud"] = aud
	}
	exp := c.ExpiresAt
	if exp.IsZero() {
		exp = now.Add(is.opts.TTL)
	}
	m["exp"] = exp.Unix()
	iat := c.IssuedAt
	if iat.IsZero() {
		iat = now
	}
	m["iat"] = iat.Unix()
	if !c.NotBefore.IsZero() {
		m["nbf"] = c.NotBefore.Unix()
	}
	jti := c.ID
	if jti == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		jti = base64.RawURLEncoding.EncodeToString(b[:])
	}
	m["jti"] = jti
	if c.DPoPThumbprint != "" {
		m["cnf"] = map[string]any{"jkt": c.DPoPThumbprint}
	}
	return m
}

// Payload returns the JSON claims Sign would use for c.
func (is *Issuer) Payload(c Claims) ([]byte, error) {
	m := is.claimsMap(c)
	for k, v := range c.Extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// Sign mints a compact at+jwt access token for c.
func (is *Issuer) Sign(c Claims, opts ...SignOption) (string, error) {
	cfg := signConfig{kid: KidRS256, typ: "at+jwt"}
	for _, o := range opts {
		o(&cfg)
	}
	k, ok := is.Key(cfg.kid)
	if !ok {
		return "", errUnknownKey
	}
	if cfg.alg == "" {
		cfg.alg = k.Alg
	}
	h := map[string]any{"alg": cfg.alg, "kid": cfg.kid}
	if cfg.typ != "" {
		h["typ"] = cfg.typ
	}
	for name, v := range cfg.header {
		if v == nil {
			delete(h, name)
		} else {
			h[name] = v
		}
	}
	header, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	payload, err := is.Payload(c)
	if err != nil {
		return "", err
	}
	return Compact(cfg.alg, k.Private, header, payload)
}

// Token is Sign for tests: it fails t on error.
func (is *Issuer) Token(t TB, c Claims, opts ...SignOption) string {
	t.Helper()
	tok, err := is.Sign(c, opts...)
	if err != nil {
		t.Fatalf("testissuer: sign: %v", err)
	}
	return tok
}

// SignRaw signs exactly header and payload (any bytes) with the issuer's
// key kid using alg ("" means the key's algorithm).
func (is *Issuer) SignRaw(kid, alg string, header, payload []byte) (string, error) {
	k, ok := is.Key(kid)
	if !ok {
		return "", errUnknownKey
	}
	if alg == "" {
		alg = k.Alg
	}
	return Compact(alg, k.Private, header, payload)
}

// Compact builds a compact JWS from exact header and payload bytes, signed
// with key under alg by jwx's signer for alg: an HMAC alg takes a []byte
// key (for RS256→HS256 confusion, pass the public key's PEM). alg "none"
// or a nil key gives an empty signature.
func Compact(alg string, key any, header, payload []byte) (string, error) {
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	if alg == "none" || key == nil {
		return input + ".", nil
	}
	signer, err := jws.NewSigner(jwa.SignatureAlgorithm(alg))
	if err != nil {
		return "", err
	}
	sig, err := signer.Sign([]byte(input), key)
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// ToJSON re-serializes a compact JWS as flattened JWS JSON (general JSON
// with a "signatures" array when general is set) and adds the extra
// top-level members: the claim-injection attack of jwx v2's lenient
// parser.
func ToJSON(compact string, general bool, extra map[string]any) (string, error) {
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return "", errors.New("testissuer: not a compact JWS")
	}
	m := map[string]any{}
	for k, v := range extra {
		m[k] = v
	}
	m["payload"] = parts[1]
	if general {
		m["signatures"] = []map[string]string{{"protected": parts[0], "signature": parts[2]}}
	} else {
		m["protected"], m["signature"] = parts[0], parts[2]
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// PublicKeyPEM returns the PKIX PEM of key kid's public key (what an
// attacker would use as an HMAC secret).
func (is *Issuer) PublicKeyPEM(kid string) ([]byte, error) {
	k, ok := is.Key(kid)
	if !ok {
		return nil, errUnknownKey
	}
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

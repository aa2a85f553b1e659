package testissuer

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
)

// ProofKey is a client's DPoP key (RFC 9449): it signs proofs and has a
// thumbprint to bind tokens to ([Claims.DPoPThumbprint]).
type ProofKey struct {
	Type    KeyType
	Alg     string // the proof algorithm: RS256, ES256 or EdDSA by type
	Private crypto.Signer
}

// NewProofKey generates a DPoP key of type t.
func NewProofKey(t KeyType) (*ProofKey, error) {
	priv, err := GenerateKey(t)
	if err != nil {
		return nil, err
	}
	return &ProofKey{Type: t, Alg: defaultAlg(t), Private: priv}, nil
}

// PublicJWK returns the public JWK as a map (what a proof's "jwk" header
// carries), computed by jwx.
func (k *ProofKey) PublicJWK() (map[string]any, error) { return jwkMap(k.Private.Public()) }

// jwkMap returns the JWK of a raw key as a map, as jwx encodes it.
func jwkMap(raw any) (map[string]any, error) {
	jk, err := jwk.FromRaw(raw)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(jk)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// WithMember returns a copy of the JWK jwk with member name set to v (a
// proof key's jwk with one member changed, to see it refused); jwk itself
// is left as it is.
func WithMember(jwk map[string]any, name string, v any) map[string]any {
	out := maps.Clone(jwk)
	if out == nil {
		out = map[string]any{}
	}
	out[name] = v
	return out
}

// PrivateJWK returns the whole JWK, private members included (what a
// careless client would put in a proof).
func (k *ProofKey) PrivateJWK() (map[string]any, error) { return jwkMap(k.Private) }

// Thumbprint returns the RFC 7638 SHA-256 thumbprint of the public key,
// base64url, as jwx computes it (an implementation independent of the
// kit's).
func (k *ProofKey) Thumbprint() (string, error) {
	jk, err := jwk.FromRaw(k.Private.Public())
	if err != nil {
		return "", err
	}
	sum, err := jk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// Proof describes a DPoP proof to sign. Zero fields get defaults.
type Proof struct {
	Method string    // "htm"
	URL    string    // "htu"
	Token  string    // the access token: "ath" is its hash; omitted when empty
	Time   time.Time // "iat"; zero means time.Now
	ID     string    // "jti"; empty means random
	Nonce  string    // "nonce"; omitted when empty
	// Header and Claims are set last and override the above; a nil value
	// removes the member (for example "typ": nil).
	Header map[string]any
	Claims map[string]any
	// Alg signs with another algorithm than the key's (the header says it
	// too, unless Header overrides alg).
	Alg string
}

// ATH returns the "ath" of token: base64url(SHA-256(token)).
func ATH(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Sign returns the compact proof JWT.
func (k *ProofKey) Sign(p Proof) (string, error) {
	pub, err := k.PublicJWK()
	if err != nil {
		return "", err
	}
	alg := k.Alg
	if p.Alg != "" {
		alg = p.Alg
	}
	h := map[string]any{"typ": "dpop+jwt", "alg": alg, "jwk": pub}
	for name, v := range p.Header {
		if v == nil {
			delete(h, name)
		} else {
			h[name] = v
		}
	}
	iat := p.Time
	if iat.IsZero() {
		iat = time.Now()
	}
	jti := p.ID
	if jti == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		jti = base64.RawURLEncoding.EncodeToString(b[:])
	}
	c := map[string]any{"htm": p.Method, "htu": p.URL, "iat": iat.Unix(), "jti": jti}
	if p.Token != "" {
		c["ath"] = ATH(p.Token)
	}
	if p.Nonce != "" {
		c["nonce"] = p.Nonce
	}
	for name, v := range p.Claims {
		if v == nil {
			delete(c, name)
		} else {
			c[name] = v
		}
	}
	header, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return Compact(alg, k.Private, header, payload)
}

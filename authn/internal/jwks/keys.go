package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"slices"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
)

// Key is one usable verification key from the JWKS.
type Key struct {
	Alg string         // the JWK's "alg", or "" when it had none
	Fam jose.KeyFamily // what it can verify
	Key any            // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// fits reports whether the key may verify a token whose header says alg:
// the algorithm's family must be the key's, and a key that names its
// algorithm is used with that algorithm only.
func (k Key) Fits(alg string) bool {
	return jose.FamilyOf(alg) == k.Fam && (k.Alg == "" || k.Alg == alg)
}

const (
	maxJWKSKeys   = 256
	MaxKeyIDBytes = 256
)

// Set maps key ids to the usable keys with that id. Keys published
// without a kid are held under "": only a token without kid can use them
// (see Fitting).
type Set map[string][]Key

// Fitting returns how many keys of the set, whatever their kid, fit alg,
// and the first of them: a token without kid is verified only when
// exactly one key fits (RFC 7515 §4.1.4 makes kid optional; with several
// candidates the token is refused without trying any).
func (s Set) Fitting(alg string) (int, Key) {
	n, first := 0, Key{}
	for _, keys := range s {
		for _, k := range keys {
			if k.Fits(alg) {
				if n == 0 {
					first = k
				}
				n++
			}
		}
	}
	return n, first
}

// Parse decodes a JWK Set and keeps only the keys this verifier may use:
// public signature keys (use absent or "sig", key_ops absent or containing
// "verify") of type RSA (2048–8192 bits), EC P-256/384/521 or OKP Ed25519,
// with a kid of at most 256 bytes (or none), and with an "alg" that is allowed and fits the key
// when one is given; a key with no alg must fit at least one allowed
// algorithm. A key without kid is kept under "" (only a token without kid
// can select it). Symmetric ("oct") keys, encryption keys and private keys are
// dropped. It returns the number of entries dropped.
func Parse(body []byte, allowed []string) (Set, int, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, 0, errors.New("authn: jwks: not a JWK Set document")
	}
	if doc.Keys == nil || len(doc.Keys) > maxJWKSKeys {
		return nil, 0, errors.New("authn: jwks: missing keys or too many keys")
	}
	set := make(Set, len(doc.Keys))
	dropped := 0
	for _, raw := range doc.Keys {
		kid, pk, ok := usableKey(raw, allowed)
		if !ok {
			dropped++
			continue
		}
		set[kid] = append(set[kid], pk)
	}
	return set, dropped, nil
}

func usableKey(raw []byte, allowed []string) (string, Key, bool) {
	k, err := jwk.ParseKey(raw)
	if err != nil || !signatureKey(k) {
		return "", Key{}, false
	}
	kid := k.KeyID()
	if len(kid) > MaxKeyIDBytes {
		return "", Key{}, false
	}
	pk, ok := publicOf(k)
	if !ok {
		return "", Key{}, false
	}
	if a := k.Algorithm().String(); a != "" {
		if !slices.Contains(allowed, a) || jose.FamilyOf(a) != pk.Fam {
			return "", Key{}, false
		}
		pk.Alg = a
	} else if !slices.ContainsFunc(allowed, func(a string) bool { return jose.FamilyOf(a) == pk.Fam }) {
		return "", Key{}, false
	}
	return kid, pk, true
}

// signatureKey: use absent or "sig", key_ops absent or containing
// "verify", and no private material (oct keys, and private keys
// published by mistake).
func signatureKey(k jwk.Key) bool {
	if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
		return false
	}
	if ops := k.KeyOps(); len(ops) > 0 && !slices.Contains(ops, jwk.KeyOpVerify) {
		return false
	}
	priv, err := jwk.IsPrivateKey(k)
	return err == nil && !priv
}

// publicOf returns the public key of k: RSA of 2048–8192 bits with a
// small odd exponent, EC P-256/384/521 on its curve, or OKP Ed25519.
func publicOf(k jwk.Key) (Key, bool) {
	switch k := k.(type) {
	case jwk.RSAPublicKey:
		var raw rsa.PublicKey
		if k.Raw(&raw) != nil || raw.N == nil {
			return Key{}, false
		}
		if bits := raw.N.BitLen(); bits < jose.MinRSABits || bits > jose.MaxRSABits || raw.E < 3 || raw.E%2 == 0 {
			return Key{}, false
		}
		return Key{Fam: jose.FamRSA, Key: &raw}, true
	case jwk.ECDSAPublicKey:
		return ecPublic(k)
	case jwk.OKPPublicKey:
		var raw ed25519.PublicKey
		if k.Crv() != jwa.Ed25519 || k.Raw(&raw) != nil || len(raw) != ed25519.PublicKeySize {
			return Key{}, false
		}
		return Key{Fam: jose.FamEd25519, Key: raw}, true
	}
	return Key{}, false // oct, private keys, other curves
}

// ecPublic returns an EC key of P-256/384/521: the coordinates, each
// exactly the curve's size, as an uncompressed point, whose parsing
// refuses a point that is not on the curve.
func ecPublic(k jwk.ECDSAPublicKey) (Key, bool) {
	var curve elliptic.Curve
	var pk Key
	switch k.Crv() {
	case jwa.P256:
		curve, pk.Fam = elliptic.P256(), jose.FamP256
	case jwa.P384:
		curve, pk.Fam = elliptic.P384(), jose.FamP384
	case jwa.P521:
		curve, pk.Fam = elliptic.P521(), jose.FamP521
	default:
		return Key{}, false
	}
	size := (curve.Params().BitSize + 7) / 8
	x, y := k.X(), k.Y()
	if len(x) != size || len(y) != size {
		return Key{}, false
	}
	raw, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
	if err != nil {
		return Key{}, false
	}
	pk.Key = raw
	return pk, true
}

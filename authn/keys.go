package authn

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"slices"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// DefaultAlgorithms are the signature algorithms a [JWTVerifier] accepts
// when [JWTOptions.Algorithms] is nil.
func DefaultAlgorithms() []string { return []string{"RS256", "PS256", "ES256", "EdDSA"} }

func checkAlgorithms(algs []string) ([]string, error) {
	if algs == nil {
		return DefaultAlgorithms(), nil
	}
	return jose.CheckAlgorithms(algs)
}

// publicKey is one usable verification key from the JWKS.
type publicKey struct {
	alg string         // the JWK's "alg", or "" when it had none
	fam jose.KeyFamily // what it can verify
	key any            // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// fits reports whether the key may verify a token whose header says alg:
// the algorithm's family must be the key's, and a key that names its
// algorithm is used with that algorithm only.
func (k publicKey) fits(alg string) bool {
	return jose.FamilyOf(alg) == k.fam && (k.alg == "" || k.alg == alg)
}

const (
	maxJWKSKeys   = 256
	maxKeyIDBytes = 256
)

// keySet maps key ids to the usable keys with that id.
type keySet map[string][]publicKey

// parseJWKS decodes a JWK Set and keeps only the keys this verifier may use:
// public signature keys (use absent or "sig", key_ops absent or containing
// "verify") of type RSA (2048–8192 bits), EC P-256/384/521 or OKP Ed25519,
// with a non-empty kid, and with an "alg" that is allowed and fits the key
// when one is given; a key with no alg must fit at least one allowed
// algorithm. Symmetric ("oct") keys, encryption keys and private keys are
// dropped. It returns the number of entries dropped.
func parseJWKS(body []byte, allowed []string) (keySet, int, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, 0, errors.New("authn: jwks: not a JWK Set document")
	}
	if doc.Keys == nil || len(doc.Keys) > maxJWKSKeys {
		return nil, 0, errors.New("authn: jwks: missing keys or too many keys")
	}
	set := make(keySet, len(doc.Keys))
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

func usableKey(raw []byte, allowed []string) (string, publicKey, bool) {
	k, err := jwk.ParseKey(raw)
	if err != nil {
		return "", publicKey{}, false
	}
	kid := k.KeyID()
	if kid == "" || len(kid) > maxKeyIDBytes {
		return "", publicKey{}, false
	}
	if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
		return "", publicKey{}, false
	}
	if ops := k.KeyOps(); len(ops) > 0 && !slices.Contains(ops, jwk.KeyOpVerify) {
		return "", publicKey{}, false
	}
	if priv, err := jwk.IsPrivateKey(k); err != nil || priv {
		return "", publicKey{}, false // oct keys, and private keys published by mistake
	}
	var pk publicKey
	switch k := k.(type) {
	case jwk.RSAPublicKey:
		var raw rsa.PublicKey
		if k.Raw(&raw) != nil || raw.N == nil {
			return "", publicKey{}, false
		}
		if bits := raw.N.BitLen(); bits < jose.MinRSABits || bits > jose.MaxRSABits || raw.E < 3 || raw.E%2 == 0 {
			return "", publicKey{}, false
		}
		pk = publicKey{fam: jose.FamRSA, key: &raw}
	case jwk.ECDSAPublicKey:
		var curve elliptic.Curve
		switch k.Crv() {
		case jwa.P256:
			curve, pk.fam = elliptic.P256(), jose.FamP256
		case jwa.P384:
			curve, pk.fam = elliptic.P384(), jose.FamP384
		case jwa.P521:
			curve, pk.fam = elliptic.P521(), jose.FamP521
		default:
			return "", publicKey{}, false
		}
		// The coordinates, each exactly the curve's size, as an uncompressed
		// point: parsing it refuses a point that is not on the curve.
		size := (curve.Params().BitSize + 7) / 8
		x, y := k.X(), k.Y()
		if len(x) != size || len(y) != size {
			return "", publicKey{}, false
		}
		raw, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", publicKey{}, false
		}
		pk.key = raw
	case jwk.OKPPublicKey:
		if k.Crv() != jwa.Ed25519 {
			return "", publicKey{}, false
		}
		var raw ed25519.PublicKey
		if k.Raw(&raw) != nil || len(raw) != ed25519.PublicKeySize {
			return "", publicKey{}, false
		}
		pk = publicKey{fam: jose.FamEd25519, key: raw}
	default: // oct, private keys, other curves
		return "", publicKey{}, false
	}
	if a := k.Algorithm().String(); a != "" {
		if !slices.Contains(allowed, a) || jose.FamilyOf(a) != pk.fam {
			return "", publicKey{}, false
		}
		pk.alg = a
	} else if !slices.ContainsFunc(allowed, func(a string) bool { return jose.FamilyOf(a) == pk.fam }) {
		return "", publicKey{}, false
	}
	return kid, pk, true
}

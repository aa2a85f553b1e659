package testissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// KeyType is the type of a signing key.
type KeyType int

const (
	// RSA is a 2048-bit RSA key (RS256, PS256, ...).
	RSA KeyType = iota
	// EC256 is an EC P-256 key (ES256).
	EC256
	// Ed25519 is an OKP Ed25519 key (EdDSA).
	Ed25519
)

// Key ids of the default keys. The JWK of a "-noalg" key has no "alg".
const (
	KidRS256      = "rs256"       // RSA-2048, JWK alg RS256; the default signing key
	KidPS256      = "ps256"       // RSA-2048, JWK alg PS256
	KidRSANoAlg   = "rsa-noalg"   // RSA-2048, no alg: signs RS256 by default
	KidES256      = "es256"       // EC P-256, JWK alg ES256
	KidECNoAlg    = "ec-noalg"    // EC P-256, no alg: signs ES256
	KidEdDSA      = "eddsa"       // Ed25519, JWK alg EdDSA
	KidEdDSANoAlg = "eddsa-noalg" // Ed25519, no alg: signs EdDSA
)

// Key is one signing key of the issuer.
type Key struct {
	ID      string
	Type    KeyType
	Alg     string        // the algorithm it signs with by default
	InJWK   bool          // whether the JWK carries "alg"
	Private crypto.Signer // *rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey
}

// Public returns the public key.
func (k *Key) Public() crypto.PublicKey { return k.Private.Public() }

// JWK returns the public JWK of the key as JSON, with kid, use "sig" and,
// when InJWK, alg.
func (k *Key) JWK() (json.RawMessage, error) {
	jk, err := jwk.FromRaw(k.Public())
	if err != nil {
		return nil, err
	}
	if err := jk.Set(jwk.KeyIDKey, k.ID); err != nil {
		return nil, err
	}
	if err := jk.Set(jwk.KeyUsageKey, "sig"); err != nil {
		return nil, err
	}
	if k.InJWK {
		if err := jk.Set(jwk.AlgorithmKey, jwa.SignatureAlgorithm(k.Alg)); err != nil {
			return nil, err
		}
	}
	return json.Marshal(jk)
}

// GenerateKey makes a fresh private key of the given type.
func GenerateKey(t KeyType) (crypto.Signer, error) {
	switch t {
	case RSA:
		return rsa.GenerateKey(rand.Reader, 2048)
	case EC256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case Ed25519:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	}
	return nil, errors.New("testissuer: unknown key type")
}

func defaultAlg(t KeyType) string {
	switch t {
	case RSA:
		return "RS256"
	case EC256:
		return "ES256"
	default:
		return "EdDSA"
	}
}

// sharedKeys are the default keys shared by issuers without UniqueKeys.
var (
	sharedOnce sync.Once
	sharedKeys []*Key
	sharedErr  error
)

func defaultKeys(unique bool) ([]*Key, error) {
	if !unique {
		sharedOnce.Do(func() { sharedKeys, sharedErr = generateDefaultKeys() })
		if sharedErr != nil {
			return nil, sharedErr
		}
		out := make([]*Key, len(sharedKeys))
		for i, k := range sharedKeys {
			c := *k
			out[i] = &c
		}
		return out, nil
	}
	return generateDefaultKeys()
}

func generateDefaultKeys() ([]*Key, error) {
	specs := []struct {
		id    string
		t     KeyType
		alg   string
		inJWK bool
	}{
		{KidRS256, RSA, "RS256", true},
		{KidPS256, RSA, "PS256", true},
		{KidRSANoAlg, RSA, "RS256", false},
		{KidES256, EC256, "ES256", true},
		{KidECNoAlg, EC256, "ES256", false},
		{KidEdDSA, Ed25519, "EdDSA", true},
		{KidEdDSANoAlg, Ed25519, "EdDSA", false},
	}
	keys := make([]*Key, 0, len(specs))
	for _, s := range specs {
		priv, err := GenerateKey(s.t)
		if err != nil {
			return nil, fmt.Errorf("testissuer: generating %s: %w", s.id, err)
		}
		keys = append(keys, &Key{ID: s.id, Type: s.t, Alg: s.alg, InJWK: s.inJWK, Private: priv})
	}
	return keys, nil
}

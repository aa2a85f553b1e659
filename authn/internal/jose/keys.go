package jose

import (
	"errors"
	"fmt"
	"slices"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// KeyFamily is what a public key can verify: each algorithm fits exactly one
// family, so a key is never used with an algorithm of another type or curve
// (RFC 8725 §3.1).
type KeyFamily uint8

// The key families; FamNone is no family (an algorithm never verified).
const (
	FamNone KeyFamily = iota
	FamRSA
	FamP256
	FamP384
	FamP521
	FamEd25519
)

// FamilyOf returns the key family an algorithm needs; FamNone for an
// algorithm this package never verifies (none, HS*, ES256K, ...).
func FamilyOf(alg string) KeyFamily {
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		return FamRSA
	case "ES256":
		return FamP256
	case "ES384":
		return FamP384
	case "ES512":
		return FamP521
	case "EdDSA":
		return FamEd25519
	}
	return FamNone
}

// The RSA key sizes accepted, in bits.
const (
	MinRSABits = 2048
	MaxRSABits = 8192
)

// CheckAlgorithms validates an allowlist of signature algorithms (at
// least one, each of a family [FamilyOf] knows) and returns it sorted,
// without duplicates. A nil list is the caller's to default.
func CheckAlgorithms(algs []string) ([]string, error) {
	if len(algs) == 0 {
		return nil, errors.New("authn: at least one algorithm is required")
	}
	out := slices.Clone(algs)
	for _, a := range out {
		if FamilyOf(a) == FamNone {
			return nil, fmt.Errorf("authn: algorithm %q is not supported (RS*, PS*, ES256/384/512, EdDSA only)", a)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Contains reports whether list holds s.
func Contains(list []string, s string) bool { return slices.Contains(list, s) }

// Verifiers returns jwx's signature verifier for each algorithm of an
// allowlist [CheckAlgorithms] returned, by algorithm name. jwx only checks
// signatures with them: the algorithm and the key are always the caller's.
func Verifiers(allowed []string) (map[string]jws.Verifier, error) {
	out := make(map[string]jws.Verifier, len(allowed))
	for _, a := range allowed {
		vf, err := jws.NewVerifier(jwa.SignatureAlgorithm(a))
		if err != nil {
			return nil, fmt.Errorf("authn: no verifier for %s", a)
		}
		out[a] = vf
	}
	return out, nil
}

package jose

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
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

// TypedNil reports whether v is a non-nil interface value holding a nil
// pointer, func, map, slice, channel or interface: what authn's
// constructors refuse (misuse is an error, never a panic).
func TypedNil(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

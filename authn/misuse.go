package authn

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/nilness"
)

// Misuse is an error, never a panic (issue 28): constructors refuse nil
// interface values that hold a nil pointer (a "typed nil"), and the
// methods of a zero value or a nil pointer of an exported type answer
// with a misuseError (a 500, logged at ERROR with its text) instead of
// dereferencing what a constructor would have set.

// misuseError is a programming mistake of the service, not of the
// caller: [StatusOf] makes it 500 and WriteError logs its fixed text.
type misuseError struct{ msg string }

func (e *misuseError) Error() string { return e.msg }

var (
	errAuthenticatorZero = &misuseError{"authn: Authenticator not made by NewAuthenticator"}
	errCacheZero         = &misuseError{"authn: Cache not made by NewCache (or made with a nil Verifier)"}
	errJWTZero           = &misuseError{"authn: JWTVerifier not made by NewJWTVerifier"}
	errIntrospectionZero = &misuseError{"authn: IntrospectionVerifier not made by NewIntrospectionVerifier"}
	errMultiZero         = &misuseError{"authn: MultiIssuerVerifier not made by NewMultiIssuerVerifier"}
	errNilVerifierFunc   = &misuseError{"authn: nil VerifierFunc"}
)

// kitVerifier is a Verifier of this package: it says whether its
// constructor made it, and the resource its principals carry.
type kitVerifier interface {
	verifierResource() (resource string, ok bool)
}

func (v *JWTVerifier) verifierResource() (string, bool) {
	if v == nil || v.keys == nil {
		return "", false
	}
	return v.rules.resource, true
}

func (iv *IntrospectionVerifier) verifierResource() (string, bool) {
	if iv == nil || iv.client == nil {
		return "", false
	}
	return iv.rules.resource, true
}

func (m *MultiIssuerVerifier) verifierResource() (string, bool) {
	if m == nil || m.byIssuer == nil {
		return "", false
	}
	return m.resource, true
}

// verifierResource is the resource of the Verifier behind the cache, ""
// when it is not one of this package's.
func (c *Cache) verifierResource() (string, bool) {
	if c == nil || c.m == nil || c.v == nil || nilness.Is(c.v) {
		return "", false
	}
	if kv, ok := c.v.(kitVerifier); ok {
		return kv.verifierResource()
	}
	return "", true
}

// checkVerifier is NewAuthenticator's check of v against opts.Resource:
// no typed nil, made by its constructor, and for this package's
// verifiers the same resource (issue 29: given twice, a mismatch refused
// every token silently).
func checkVerifier(v Verifier, resource string) error {
	if err := nilness.Refuse("authn", "NewAuthenticator's Verifier", v); err != nil {
		return err
	}
	kv, ok := v.(kitVerifier)
	if !ok {
		return nil
	}
	r, ok := kv.verifierResource()
	switch {
	case !ok:
		return fmt.Errorf("authn: NewAuthenticator's Verifier (%T) was not made by its constructor", v)
	case r != "" && r != resource:
		return fmt.Errorf("authn: the Verifier's resource %q differs from Options.Resource %q: every token would be refused (give both the same URI; an issuer that names the resource otherwise in \"aud\" says so in JWTOptions.Audience)", r, resource)
	}
	return nil
}

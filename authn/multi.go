package authn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// MultiIssuerOptions configures a [MultiIssuerVerifier]: the issuers it
// trusts, each with its own JWK Set or introspection endpoint, audience,
// claim names, algorithms and limits.
type MultiIssuerOptions struct {
	// Resource is this server's canonical resource URI, the principals'
	// Audience. Each issuer's Resource must be empty (it is filled in) or
	// equal to it; an issuer that names this resource otherwise in "aud"
	// says so in its Audience.
	Resource string

	// JWT lists the issuers of JWT access tokens (RFC 9068). Each Issuer
	// must be an https URL (http for loopback hosts) without query or
	// fragment, and all issuers must differ.
	JWT []JWTOptions

	// Introspection lists the issuers whose tokens are checked by RFC 7662
	// introspection. Issuer is required for each. A token in the JWT
	// compact form goes to the introspection issuer its "iss" names.
	Introspection []IntrospectionOptions

	// OpaqueIssuer names the one introspection issuer that receives tokens
	// which are not JWTs: an opaque token does not say who issued it, and
	// trying several endpoints would send one authorization server's
	// token to another. Empty means opaque tokens are refused.
	OpaqueIssuer string
}

// MultiIssuerVerifier verifies tokens of several authorization servers. A
// JWT's issuer is read from its payload first, strictly (one "iss"
// member, a string; duplicates and case variants refuse the token) and
// before any key is tried; the token then goes to that issuer's verifier
// alone, which checks it completely (its own keys, audience, claim names
// and algorithms, and "iss" again). One issuer's keys are never tried on
// another's token, and a token naming an issuer that is not trusted is
// refused without any request. Principals carry Issuer, so that
// [principal.Principal.Key] keeps equal subjects of different issuers apart. It is
// safe for concurrent use; put a [Cache] in front of it. Call Close to
// stop the JWK Set refreshers.
type MultiIssuerVerifier struct {
	byIssuer map[string]Verifier
	resource string
	opaque   Verifier
	opaqueIs string
	issuers  []string
	jwts     []*JWTVerifier
	maxToken int
}

var errMultiZero = &misuseError{"authn: MultiIssuerVerifier not made by NewMultiIssuerVerifier"}

func (m *MultiIssuerVerifier) verifierResource() (string, bool) {
	if m == nil || m.byIssuer == nil {
		return "", false
	}
	return m.resource, true
}

var _ Verifier = (*MultiIssuerVerifier)(nil)

// NewMultiIssuerVerifier validates opts, builds one verifier per issuer
// (each JWT verifier fetches its JWK Set as [NewJWTVerifier] does, waiting
// at most until ctx is done) and returns the verifier.
func NewMultiIssuerVerifier(ctx context.Context, opts MultiIssuerOptions) (*MultiIssuerVerifier, error) {
	if _, err := jose.ParseSecureURL("MultiIssuerOptions.Resource", opts.Resource, true); err != nil {
		return nil, err
	}
	if len(opts.JWT)+len(opts.Introspection) == 0 {
		return nil, errors.New("authn: MultiIssuerOptions needs at least one issuer")
	}
	m := &MultiIssuerVerifier{byIssuer: map[string]Verifier{}, resource: opts.Resource}
	ok := false
	defer func() {
		if !ok {
			_ = m.Close()
		}
	}()
	add := func(iss string, maxTok int, v Verifier) error {
		if _, err := jose.ParseSecureURL("issuer "+fmt.Sprintf("%q", iss), iss, true); err != nil {
			return err
		}
		if _, dup := m.byIssuer[iss]; dup {
			return fmt.Errorf("authn: issuer %q is configured twice", iss)
		}
		m.byIssuer[iss] = v
		m.issuers = append(m.issuers, iss)
		n, _ := maxTokenBytes(maxTok)
		m.maxToken = max(m.maxToken, n)
		return nil
	}
	for _, o := range opts.JWT {
		if err := m.addJWT(ctx, o, opts.Resource, add); err != nil {
			return nil, err
		}
	}
	for _, o := range opts.Introspection {
		if err := m.addIntrospection(o, opts, add); err != nil {
			return nil, err
		}
	}
	if opts.OpaqueIssuer != "" && m.opaque == nil {
		return nil, fmt.Errorf("authn: MultiIssuerOptions.OpaqueIssuer %q is not one of the introspection issuers", opts.OpaqueIssuer)
	}
	ok = true
	return m, nil
}

// addJWT builds the verifier of one JWT issuer and adds it with add.
func (m *MultiIssuerVerifier) addJWT(ctx context.Context, o JWTOptions, resource string, add func(string, int, Verifier) error) error {
	if o.Resource == "" {
		o.Resource = resource
	} else if o.Resource != resource {
		return fmt.Errorf("authn: issuer %q: Resource differs from MultiIssuerOptions.Resource (use Audience)", o.Issuer)
	}
	if _, err := jose.ParseSecureURL("issuer", o.Issuer, true); err != nil {
		return err
	}
	if _, dup := m.byIssuer[o.Issuer]; dup {
		return fmt.Errorf("authn: issuer %q is configured twice", o.Issuer)
	}
	v, err := NewJWTVerifier(ctx, o)
	if err != nil {
		return fmt.Errorf("authn: issuer %q: %w", o.Issuer, err)
	}
	m.jwts = append(m.jwts, v)
	return add(o.Issuer, o.MaxTokenBytes, v)
}

// addIntrospection builds the verifier of one introspection issuer and
// adds it with add; it is the opaque tokens' when opts says so.
func (m *MultiIssuerVerifier) addIntrospection(o IntrospectionOptions, opts MultiIssuerOptions, add func(string, int, Verifier) error) error {
	if o.Issuer == "" {
		return errors.New("authn: MultiIssuerOptions.Introspection: Issuer is required for each issuer")
	}
	if o.Resource == "" {
		o.Resource = opts.Resource
	} else if o.Resource != opts.Resource {
		return fmt.Errorf("authn: issuer %q: Resource differs from MultiIssuerOptions.Resource (use Audience)", o.Issuer)
	}
	v, err := NewIntrospectionVerifier(o)
	if err != nil {
		return fmt.Errorf("authn: issuer %q: %w", o.Issuer, err)
	}
	if err := add(o.Issuer, o.MaxTokenBytes, v); err != nil {
		return err
	}
	if o.Issuer == opts.OpaqueIssuer {
		m.opaque, m.opaqueIs = v, o.Issuer
	}
	return nil
}

// Issuers returns the trusted issuers in configuration order: the
// authorization_servers of the resource metadata.
func (m *MultiIssuerVerifier) Issuers() []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.issuers)
}

// Verify routes the token to its issuer's verifier and returns the
// principal with Issuer set. Every failure is [ErrInvalidToken] (or the
// issuer's [ErrUnavailable]).
func (m *MultiIssuerVerifier) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	if m == nil || m.byIssuer == nil {
		return principal.Principal{}, time.Time{}, errMultiZero
	}
	var v Verifier
	iss, isJWT, err := issuerOf(token, m.maxToken)
	switch {
	case err != nil:
		return principal.Principal{}, time.Time{}, err
	case isJWT:
		v = m.byIssuer[iss]
	default:
		v, iss = m.opaque, m.opaqueIs
	}
	if v == nil {
		return principal.Principal{}, time.Time{}, errUnknownIssuer
	}
	p, exp, err := v.Verify(ctx, token)
	if err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	p.Issuer = iss
	return p, exp, nil
}

// issuerOf reads the "iss" of a token in the JWT compact form, without
// verifying anything: the payload is decoded strictly and read with the
// strict JSON engine. isJWT is false for a token of another shape
// (opaque); a compact token whose payload is no JSON object with one
// string "iss" is refused.
func issuerOf(token string, maxTok int) (iss string, isJWT bool, err error) {
	if len(token) > maxTok {
		return "", false, errMalformed
	}
	d1, d2, ok := jose.SplitCompact(token, maxTok)
	if !ok {
		return "", false, nil
	}
	payload, err := jose.DecodeSegment(nil, []byte(token[d1+1:d2]))
	if err != nil {
		return "", true, errMalformed
	}
	var v jsonstrict.Value
	if err := tokenJSON.Members(payload, func(name []byte, val jsonstrict.Value) bool {
		if string(name) == "iss" {
			v = val
		}
		return true
	}); err != nil {
		return "", true, errClaims
	}
	s, ok := v.Str()
	if !ok || s == "" {
		return "", true, errIssuer
	}
	return s, true, nil
}

// Close stops the JWK Set refreshers of the JWT issuers.
func (m *MultiIssuerVerifier) Close() error {
	if m == nil {
		return nil
	}
	for _, v := range m.jwts {
		_ = v.Close()
	}
	return nil
}

package authn

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/authn/internal/jwks"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/lestrrat-go/jwx/v2/jws"
)

// JWTOptions configures a [JWTVerifier]. Issuer, Resource and JWKSURL are
// required; every other zero value is a safe default.
type JWTOptions struct {
	// Issuer is the authorization server's issuer identifier. The token's
	// "iss" must equal it exactly (no normalization, RFC 9068 §4).
	Issuer string

	// Resource is this server's canonical resource URI (RFC 8707, the
	// RFC 9728 "resource"). The token's "aud" must be this string or an
	// array containing it.
	Resource string

	// Audience is the "aud" value this issuer uses for this resource,
	// when it is not Resource itself (an issuer that names APIs by an
	// identifier such as "api://mcp"). Empty means Resource. The
	// principal's Audience is Resource in either case.
	Audience string

	// JWKSURL is where the issuer publishes its JWK Set. It must use https;
	// http is accepted only for loopback hosts (127.0.0.0/8, ::1,
	// localhost), for development and tests.
	JWKSURL string

	// Algorithms is the allowlist of signature algorithms. Nil means
	// [DefaultAlgorithms] (RS256, PS256, ES256, EdDSA). Allowed values:
	// RS256/384/512, PS256/384/512, ES256/384/512, EdDSA. "none" and HMAC
	// algorithms are never accepted.
	Algorithms []string

	// AllowPlainJWTType also admits tokens whose "typ" header is "JWT" or
	// absent. By default only "at+jwt" / "application/at+jwt" (RFC 9068) is
	// accepted, which keeps ID tokens and other JWTs from the same issuer
	// out. Set it only for an issuer that cannot type its access tokens, and
	// make sure the audience check alone separates them: this weakens
	// RFC 8725 §3.11 explicit typing. A warning is logged at construction.
	AllowPlainJWTType bool

	// Leeway is the clock skew tolerated for exp, nbf and iat. Zero means
	// 60 s; it must not be negative or exceed 5 minutes.
	Leeway time.Duration

	// Claims names the claims for the principal's fields; the zero value
	// means sub / client_id then azp / scope then scp.
	Claims ClaimNames

	// HTTPClient fetches the JWK Set. Nil means a client with FetchTimeout
	// that follows at most 3 redirects, each to an https (or loopback) URL.
	// Every fetch is bounded by FetchTimeout and MaxJWKSBytes in any case.
	HTTPClient *http.Client

	// FetchTimeout bounds one JWK Set fetch, body included. Zero means 5 s.
	FetchTimeout time.Duration

	// MaxJWKSBytes caps the JWK Set document. Zero means 1 MiB.
	MaxJWKSBytes int64

	// RefreshInterval is how often the keys are re-fetched. Zero means
	// 15 minutes.
	RefreshInterval time.Duration

	// UnknownKeyCooldown is the minimum time between two fetches caused by
	// tokens with an unknown kid (or without kid, when the one key that fits
	// does not verify or none fits), so random kids cannot cause a storm of
	// fetches. After a failed fetch they wait the failure backoff instead
	// (1 s doubling up to UnknownKeyCooldown), which Retry-After reports.
	// Zero means 30 s.
	UnknownKeyCooldown time.Duration

	// MaxTokenBytes bounds the token; a longer one is rejected before it
	// is examined. Zero means DefaultMaxTokenBytes (16 KiB).
	MaxTokenBytes int

	// Logger receives warnings (JWK Set unreachable, AllowPlainJWTType) and
	// debug details. It never receives token bytes or key ids. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// JWTVerifier verifies JWT access tokens (RFC 9068) signed by one issuer
// whose keys it fetches from a JWK Set. It is safe for concurrent use.
// Call Close to stop its background refresh.
type JWTVerifier struct {
	maxToken  int
	allowed   []string
	verifiers map[string]jws.Verifier
	plainTyp  bool
	rules     claimRules
	keys      *jwks.Store
	now       func() time.Time
}

var errJWTZero = &misuseError{"authn: JWTVerifier not made by NewJWTVerifier"}

func (v *JWTVerifier) verifierResource() (string, bool) {
	if v == nil || v.keys == nil {
		return "", false
	}
	return v.rules.resource, true
}

var _ Verifier = (*JWTVerifier)(nil)

// NewJWTVerifier validates opts, fetches the JWK Set once (waiting at most
// until ctx is done) and starts refreshing it in the background. An
// unreachable JWK Set does not fail construction: it is logged, retried in
// the background, and until keys arrive Verify returns [ErrUnavailable].
func NewJWTVerifier(ctx context.Context, opts JWTOptions) (*JWTVerifier, error) {
	return newJWTVerifier(ctx, opts, nil)
}

func newJWTVerifier(ctx context.Context, opts JWTOptions, after func(time.Duration) <-chan time.Time) (*JWTVerifier, error) {
	if opts.Issuer == "" {
		return nil, errors.New("authn: JWTOptions.Issuer is required")
	}
	if _, err := jose.ParseSecureURL("JWTOptions.Resource", opts.Resource, true); err != nil {
		return nil, err
	}
	if _, err := jose.ParseSecureURL("JWTOptions.JWKSURL", opts.JWKSURL, false); err != nil {
		return nil, err
	}
	allowed, err := checkAlgorithms(opts.Algorithms)
	if err != nil {
		return nil, err
	}
	rules, err := newClaimRules(opts.Claims, opts.Issuer, opts.Resource, opts.Leeway, false)
	if err != nil {
		return nil, err
	}
	if err := rules.setAudience(opts.Audience); err != nil {
		return nil, err
	}
	maxTok, err := maxTokenBytes(opts.MaxTokenBytes)
	if err != nil {
		return nil, err
	}
	verifiers, err := jose.Verifiers(allowed)
	if err != nil {
		return nil, err
	}
	v := &JWTVerifier{
		maxToken:  maxTok,
		allowed:   allowed,
		verifiers: verifiers,
		plainTyp:  opts.AllowPlainJWTType,
		rules:     rules,
		now:       opts.Now,
	}
	if v.now == nil {
		v.now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.AllowPlainJWTType {
		log.Warn("authn: AllowPlainJWTType is set: tokens typed JWT or untyped are accepted; only the audience check keeps ID tokens and other JWTs of this issuer out")
	}
	timeout := durationOr(opts.FetchTimeout, 5*time.Second)
	for _, d := range []time.Duration{opts.FetchTimeout, opts.RefreshInterval, opts.UnknownKeyCooldown} {
		if d < 0 {
			return nil, errors.New("authn: durations in JWTOptions must not be negative")
		}
	}
	if opts.MaxJWKSBytes < 0 {
		return nil, errors.New("authn: JWTOptions.MaxJWKSBytes must not be negative")
	}
	c := jwks.Config{URL: opts.JWKSURL, Client: opts.HTTPClient, Timeout: timeout, MaxBytes: opts.MaxJWKSBytes,
		Refresh: durationOr(opts.RefreshInterval, 15*time.Minute), Cooldown: durationOr(opts.UnknownKeyCooldown, 30*time.Second),
		Allowed: allowed, Now: v.now, Log: log, After: after}
	if c.MaxBytes == 0 {
		c.MaxBytes = 1 << 20
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: timeout, CheckRedirect: checkRedirect}
	}
	ks := jwks.New(c)
	ks.Start()
	v.keys = ks
	ks.WarmUp(ctx)
	return v, nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 {
		return errors.New("authn: too many redirects")
	}
	if req.URL.Scheme != "https" && !(req.URL.Scheme == "http" && jose.IsLoopbackHost(req.URL.Hostname())) {
		return errors.New("authn: redirect to a non-https URL")
	}
	return nil
}

// Close stops the background refresh and waits for it. Verify keeps working
// with the keys already fetched.
func (v *JWTVerifier) Close() error {
	if v == nil || v.keys == nil {
		return nil
	}
	v.keys.Close()
	return nil
}

// DefaultMaxTokenBytes is the longest token accepted when an options
// struct's MaxTokenBytes is zero: 16 KiB, room for issuers that put many
// group claims in their tokens. (HTTP servers must accept headers that long;
// mcphttp.NewServer allows 32 KiB.)
const DefaultMaxTokenBytes = 16 << 10

// maxTokenBytes returns n, or the default for zero; negative is an error.
func maxTokenBytes(n int) (int, error) {
	switch {
	case n < 0:
		return 0, errors.New("authn: MaxTokenBytes must not be negative")
	case n == 0:
		return DefaultMaxTokenBytes, nil
	}
	return n, nil
}

// Verify checks a compact JWS access token and returns its principal and
// expiry. Every failure is [ErrInvalidToken], except "cannot check now"
// ([ErrUnavailable]: no keys yet, or ctx ended while the keys were being
// fetched).
//
// Order: shape (length, three base64url segments, before any decoding),
// header (strict JSON, allowlisted alg, typ, kid, no crit/jku/jwk/x5u/x5c/
// b64), key (by kid; without kid, the issuer's one key that fits the
// header alg, never one of several; its type and alg must fit the header
// alg), signature
// (jws verifier for that one alg and key), claims (strict JSON decoded by
// this package, never by jwx).
func (v *JWTVerifier) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	if v == nil || v.keys == nil {
		return principal.Principal{}, time.Time{}, errJWTZero
	}
	d1, d2, ok := jose.SplitCompact(token, v.maxToken)
	if !ok {
		return principal.Principal{}, time.Time{}, errMalformed
	}
	tb := []byte(token) // one copy; every segment below is a slice of it
	var hbuf [256]byte
	hdr, err := jose.DecodeSegment(hbuf[:0], tb[:d1])
	if err != nil {
		return principal.Principal{}, time.Time{}, errMalformed
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	if !jose.Contains(v.allowed, h.alg) {
		return principal.Principal{}, time.Time{}, errAlg
	}
	if !v.typeOK(h) {
		return principal.Principal{}, time.Time{}, errType
	}
	var key jwks.Key
	var set *jwks.Set // the set the key came from, for a token without kid
	if h.hasKid {
		if key, err = v.keyByID(ctx, h); err != nil {
			return principal.Principal{}, time.Time{}, err
		}
	} else if set, key, err = v.onlyKey(ctx, h.alg); err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	var sbuf [512]byte
	sig, err := jose.DecodeSegment(sbuf[:0], tb[d2+1:])
	if err != nil {
		return principal.Principal{}, time.Time{}, errMalformed
	}
	if err := v.verifiers[h.alg].Verify(tb[:d2], sig, key.Key); err != nil {
		if h.hasKid {
			return principal.Principal{}, time.Time{}, errSignature
		}
		// Without kid a rotation cannot be seen in the header: the one key
		// that fitted may be the previous one. Fetch under the unknown-kid
		// gate, and try once more if the set changed.
		newer := v.keys.Refetch(ctx, set)
		if newer == nil {
			return principal.Principal{}, time.Time{}, errSignature
		}
		if key, err = onlyFitting(newer, h.alg); err != nil {
			return principal.Principal{}, time.Time{}, err
		}
		if err := v.verifiers[h.alg].Verify(tb[:d2], sig, key.Key); err != nil {
			return principal.Principal{}, time.Time{}, errSignature
		}
	}
	payload, err := jose.DecodeSegment(nil, tb[d1+1:d2])
	if err != nil {
		return principal.Principal{}, time.Time{}, errMalformed
	}
	var cv claimValues
	if err := v.rules.read(payload, &cv); err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	return v.rules.check(&cv, v.now())
}

// keyByID returns the key of the token's kid that fits its alg.
func (v *JWTVerifier) keyByID(ctx context.Context, h header) (jwks.Key, error) {
	if h.kid == "" || len(h.kid) > jwks.MaxKeyIDBytes {
		return jwks.Key{}, errKeyID
	}
	keys, err := v.keys.Lookup(ctx, h.kid)
	if err != nil {
		return jwks.Key{}, keyError(err)
	}
	for _, k := range keys {
		if k.Fits(h.alg) {
			return k, nil
		}
	}
	return jwks.Key{}, errAlg
}

// onlyKey returns the one key of the issuer's set that fits alg, for a
// token without kid, and the set it came from. When none fits, the set is
// fetched again under the unknown-kid gate (the issuer may have rotated to
// another key type); several candidates refuse the token without trying
// any of them.
func (v *JWTVerifier) onlyKey(ctx context.Context, alg string) (*jwks.Set, jwks.Key, error) {
	set, err := v.keys.Current(ctx)
	if err != nil {
		return nil, jwks.Key{}, keyError(err)
	}
	if n, _ := set.Fitting(alg); n == 0 {
		if newer := v.keys.Refetch(ctx, set); newer != nil {
			set = newer
		}
	}
	key, err := onlyFitting(set, alg)
	return set, key, err
}

// onlyFitting returns the one key of set that fits alg, or the refusal
// naming how many fit.
func onlyFitting(set *jwks.Set, alg string) (jwks.Key, error) {
	n, key := set.Fitting(alg)
	if n != 1 {
		return jwks.Key{}, &kidlessError{n: n, alg: alg}
	}
	return key, nil
}

// keyError is the verifier's error for a key lookup's: an unknown kid
// refuses the token, keys that cannot be fetched now are ErrUnavailable.
func keyError(err error) error {
	var ue *jwks.UnavailableError
	if errors.As(err, &ue) {
		return &UnavailableError{RetryAfter: ue.RetryAfter}
	}
	return errKeyID
}

// typeOK applies RFC 9068 §4 step 1: typ is at+jwt, compared
// case-insensitively with an optional "application/" prefix.
func (v *JWTVerifier) typeOK(h header) bool {
	t := h.typ
	if len(t) > len("application/") && strings.EqualFold(t[:len("application/")], "application/") {
		t = t[len("application/"):]
	}
	if strings.EqualFold(t, "at+jwt") {
		return true
	}
	return v.plainTyp && (!h.hasTyp || strings.EqualFold(t, "jwt"))
}

// DefaultAlgorithms are the signature algorithms a [JWTVerifier] accepts
// when [JWTOptions.Algorithms] is nil.
func DefaultAlgorithms() []string { return []string{"RS256", "PS256", "ES256", "EdDSA"} }

// checkAlgorithms is JWTOptions.Algorithms checked, the defaults for nil.
func checkAlgorithms(algs []string) ([]string, error) {
	if algs == nil {
		return DefaultAlgorithms(), nil
	}
	return jose.CheckAlgorithms(algs)
}

// The JOSE header. Nothing here trusts jwx: the token's shape is checked
// before any decoding (Verify), and the header that decides the algorithm
// and key is the one parseHeader reads.

// header holds the JOSE header parameters the verifier acts on.
type header struct {
	alg, kid, typ string
	hasKid        bool // kid present (an empty kid is refused; an absent one selects the issuer's only key for alg)
	hasTyp        bool
}

// parseHeader decodes the protected header strictly. alg, kid and typ must
// be strings when present. Parameters that would make the verifier fetch
// or trust key material named by the token (jku, jwk, x5u, x5c), change how
// the payload is signed (b64, RFC 7797), demand extensions (crit) or belong
// to JWE (enc, zip) reject the token; other parameters are ignored.
func parseHeader(data []byte) (header, error) {
	var h header
	var bad error
	err := tokenJSON.Members(data, func(name []byte, v jsonstrict.Value) bool {
		var ok bool
		switch string(name) {
		case "alg":
			h.alg, ok = v.Str()
		case "kid":
			h.kid, ok = v.Str()
			h.hasKid = true
		case "typ":
			h.typ, ok = v.Str()
			h.hasTyp = true
		case "crit", "jku", "jwk", "x5u", "x5c", "b64", "enc", "zip":
			ok = false
		default:
			ok = true
		}
		if !ok {
			bad = errBadHeader
		}
		return ok
	})
	if bad != nil {
		return header{}, bad
	}
	if err != nil {
		return header{}, errMalformed
	}
	if h.alg == "" {
		return header{}, errAlg
	}
	return h, nil
}

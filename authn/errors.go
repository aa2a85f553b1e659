package authn

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/internal/refusal"
	"github.com/mcpkit/mcpkit/principal"
)

// Sentinel errors. Callers branch on them with errors.Is; [Authenticator.WriteError]
// maps them to responses. Their text is fixed and carries no request data.
var (
	// ErrInvalidToken means the token was malformed, forged, expired, issued
	// for another resource or otherwise unacceptable: 401 invalid_token. Every
	// such failure is this one error, so a caller learns nothing about which
	// check failed.
	ErrInvalidToken = errors.New("authn: invalid token")

	// ErrInvalidRequest means the request itself was malformed: several
	// Authorization headers, an oversized header, a token in the query string
	// or form body, a header that breaks RFC 6750 §2.1: 400 invalid_request.
	ErrInvalidRequest = errors.New("authn: invalid request")

	// ErrUnavailable means the token cannot be checked now (no signing keys
	// yet, introspection endpoint down): 503 with Retry-After, never 401.
	ErrUnavailable = errors.New("authn: cannot check token now")

	// ErrThrottled means the request's remote address had too many
	// credentials refused lately (see [Throttle]): 429 with Retry-After,
	// before its credentials are checked.
	ErrThrottled = errors.New("authn: too many refused credentials")
)

// UnavailableError is a [ErrUnavailable] that suggests when to retry.
// A zero RetryAfter lets [Authenticator.WriteError] choose.
type UnavailableError struct {
	RetryAfter time.Duration
}

func (e *UnavailableError) Error() string { return ErrUnavailable.Error() }

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ThrottledError is an [ErrThrottled] that says when to retry.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string { return ErrThrottled.Error() }

// Is reports whether target is [ErrThrottled].
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// tokenError is an ErrInvalidToken that remembers, for debug logs and tests
// only, which check failed. Its text is always the text of ErrInvalidToken.
type tokenError struct{ reason string }

func (e *tokenError) Error() string        { return ErrInvalidToken.Error() }
func (e *tokenError) Is(target error) bool { return target == ErrInvalidToken }

// kidlessError refuses a token without kid whose alg does not select
// exactly one key of the issuer's JWK Set. Its hint names how many keys
// fit and the alg (an allowed one): never a key id.
type kidlessError struct {
	n   int
	alg string
}

func (e *kidlessError) Error() string        { return ErrInvalidToken.Error() }
func (e *kidlessError) Is(target error) bool { return target == ErrInvalidToken }

// hint is the refusal log's hint for this token.
func (e *kidlessError) hint() string {
	return fmt.Sprintf("token has no kid and the JWK Set holds %d keys for %s (a token without kid is verified only when exactly one key fits its alg)", e.n, e.alg)
}

// rejectReason returns the fixed classification of err for debug logs:
// never token bytes, never a key id.
func rejectReason(err error) string {
	var te *tokenError
	var ke *kidlessError
	var rr interface{ Reason() string } // authn/dpop's proof errors
	var me *misuseError
	switch {
	case errors.As(err, &me):
		return "misuse"
	case errors.Is(err, principal.ErrInsufficientScope):
		return "insufficient_scope"
	case errors.As(err, &te):
		return te.reason
	case errors.As(err, &ke):
		return "kid_absent"
	case errors.Is(err, dpop.ErrInvalidProof) && errors.As(err, &rr) && refusal.Hint(rr.Reason()) != "":
		// Only authn/dpop's proof errors: a Verifier's own error with a
		// Reason method must not put its text in the log (nor grow the
		// log's per-reason groups without bound).
		return rr.Reason()
	case errors.Is(err, dpop.ErrUseNonce):
		return "dpop_nonce"
	case errors.Is(err, ErrInvalidToken):
		return "invalid_token"
	case errors.Is(err, ErrInvalidRequest):
		return "invalid_request"
	case errors.Is(err, principal.ErrUnauthenticated):
		return "no_credentials"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrThrottled):
		return "throttled"
	default:
		return "other"
	}
}

// The reasons a token is rejected. They are unexported values shared by all
// verifiers; only their reason text differs, never their Error text.
var (
	errMalformed     = &tokenError{"malformed"}            // length, segments, base64, JSON shape
	errBadHeader     = &tokenError{"header"}               // forbidden or ill-typed header parameter
	errAlg           = &tokenError{"alg"}                  // alg not allowed or does not fit the key
	errType          = &tokenError{"typ"}                  // typ is not at+jwt
	errKeyID         = &tokenError{"kid"}                  // kid empty, too long, or unknown
	errSignature     = &tokenError{"signature"}            // signature does not verify
	errClaims        = &tokenError{"claims"}               // claim of the wrong type, duplicate, bad UTF-8
	errIssuer        = &tokenError{"iss"}                  // issuer mismatch or absent
	errAudience      = &tokenError{"aud"}                  // audience mismatch or absent
	errExpired       = &tokenError{"exp"}                  // expired or exp absent
	errNotYet        = &tokenError{"nbf"}                  // nbf or iat in the future
	errSubject       = &tokenError{"sub"}                  // subject missing or breaks the rules
	errClientID      = &tokenError{"client_id"}            // client id breaks the rules
	errScope         = &tokenError{"scope"}                // scope value breaks RFC 6749 §3.3
	errInactive      = &tokenError{"inactive"}             // introspection said active=false
	errVerifierShape = &tokenError{"verifier_result"}      // a custom Verifier returned an unusable principal.Principal
	errConfirmation  = &tokenError{"cnf"}                  // cnf is not an object, or its jkt is no thumbprint
	errBoundAsBearer = &tokenError{"dpop_bound_as_bearer"} // a DPoP-bound token sent with the Bearer scheme
	errUnboundAsDPoP = &tokenError{"unbound_as_dpop"}      // a token without cnf.jkt sent with the DPoP scheme
	errBearerRefused = &tokenError{"bearer_refused"}       // Bearer scheme while DPoP is required
	errUnknownIssuer = &tokenError{"issuer_unknown"}       // no trusted issuer has the token's iss
	errKeyBinding    = &tokenError{"dpop_key_binding"}     // the DPoP proof's key is not the token's cnf.jkt (RFC 9449 §7.1)
)

// joinScopes renders scopes space-separated.
func joinScopes(scopes []string) string { return strings.Join(scopes, " ") }

// Misuse is an error, never a panic (issue 28): constructors refuse nil
// interface values that hold a nil pointer (a "typed nil"), and the
// methods of a zero value or a nil pointer of an exported type answer
// with a misuseError (a 500, logged at ERROR with its text) instead of
// dereferencing what a constructor would have set.

// misuseError is a programming mistake of the service, not of the
// caller: [StatusOf] makes it 500 and WriteError logs its fixed text.
type misuseError struct{ msg string }

func (e *misuseError) Error() string { return e.msg }

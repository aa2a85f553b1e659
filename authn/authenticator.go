package authn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/internal/refusal"
	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/principal"
)

// Options configures an [Authenticator]. Resource is required.
type Options struct {
	// Resource is this server's canonical resource URI (see [Metadata]).
	// The resource_metadata of every challenge is [MetadataURL](Resource),
	// and verified principals must carry it as their Audience.
	Resource string

	// Scopes is the scope hint of 401 challenges (MCP: the scopes a client
	// should request). Each must be an RFC 6749 scope-token. Nil means no
	// scope attribute.
	Scopes []string

	// MaxTokenBytes bounds the bearer token of a request; a longer one is
	// refused as invalid_request (400) before it is examined. Zero means
	// DefaultMaxTokenBytes (16 KiB). Give the verifier (JWTOptions,
	// IntrospectionOptions) at least the same limit.
	MaxTokenBytes int

	// Logger receives why credentials are refused: at INFO, per reason
	// (audience, issuer, expiry, typ, algorithm, signature, scope, DPoP,
	// ...: a fixed classification and a hint, never token bytes or key
	// ids), the first refusal of a reason in a minute at once and the
	// count of the others when the minute ends; at DEBUG, a line per
	// refusal. Requests without credentials are not refusals. Nil means
	// slog.Default().
	Logger *slog.Logger

	// DPoP accepts sender-constrained tokens (RFC 9449). The zero value
	// is off: Bearer only, with exactly the challenges of a Bearer-only
	// server (a DPoP-bound token is refused as a bearer token in every
	// mode). See [dpop.Options].
	DPoP dpop.Options

	// Throttle limits the work of refusing credentials per remote
	// address (signature checks, introspection calls): see [Throttle]. A
	// *ratelimit.Limiter (package mcphttp/ratelimit) with a Refused rate
	// is one. Nil means none:
	// every token offered is checked.
	Throttle Throttle
}

// Throttle limits how many refused credentials a remote address may
// present: the guard that keeps a flood of forged tokens from costing a
// signature check each, without making a valid token pay for them (a
// caller behind the same proxy as a forger shares its address).
//
// Authenticate never asks about a request without credentials, nor about
// a token it verified lately (those are served whatever the address's
// bucket says). For other credentials it asks Admit, and tells Refused
// about each one it refuses while admitted, except those it could not
// check now ([ErrUnavailable]). When Admit says no, a credential refused
// without work (malformed, or a token refused lately for a lasting
// reason) is answered [ErrThrottled]; a new token is still checked, but
// in a lane shared by all throttled addresses that runs one check at a
// time (a bounded number waiting, each a bounded time): a valid one is
// served, an invalid one answered [ErrThrottled]. So a forging client
// costs at most one check at a time, and an honest caller at its address
// is still served.
//
// Implementations key by the remote address (the address a trusted proxy
// vouches for), never by anything in the credentials, so that one
// address's failures never limit another's callers, and must be safe for
// concurrent use and quick.
type Throttle interface {
	// Admit reports whether r's credentials may be refused now at no
	// cost to others; when not, retry is how long until they may.
	Admit(r *http.Request) (ok bool, retry time.Duration)
	// Refused records that r's credentials were refused.
	Refused(r *http.Request)
}

// Authenticator authenticates requests with bearer tokens. Authenticate is
// the decision; Handler, Optional and RequireScopes are the glue;
// WriteError is the one place mapping errors to responses. It is safe for
// concurrent use.
type Authenticator struct {
	v        Verifier
	maxToken int
	resource string
	scopes   []string // Options.Scopes, for Metadata
	log      *slog.Logger

	// Pre-rendered WWW-Authenticate values.
	chNoCreds, chInvalidToken, chInvalidRequest string
	metadataURL                                 string

	dpop     *dpopSide      // nil when DPoP is off
	throttle *throttleState // nil: no Throttle
	refusals *refusal.Log
}

// errAuthenticatorZero answers the methods of an Authenticator its
// constructor did not make.
var errAuthenticatorZero = &misuseError{"authn: Authenticator not made by NewAuthenticator"}

// NewAuthenticator returns an Authenticator that verifies tokens with v.
//
// A nil v makes an Authenticator for a service whose own middleware
// authenticates and stores the principal.Principal with [principal.NewContext]: it verifies
// nothing itself, takes the principal from the request context, and still
// writes the challenges (so clients learn the resource metadata). A
// request without a principal is then anonymous when it offers no token,
// and [ErrInvalidToken] when it offers one: a token the service's
// middleware did not accept is never downgraded to anonymous.
//
// NewAuthenticator refuses, with an error naming it, a v or an option
// (Throttle, DPoP.ReplayStore) that is an interface holding a nil
// pointer, and a verifier of this package (a [JWTVerifier],
// [IntrospectionVerifier] or [MultiIssuerVerifier], or a [Cache] in front
// of one) not made by its constructor or made for another resource than
// Options.Resource: the error names both URIs.
func NewAuthenticator(v Verifier, opts Options) (*Authenticator, error) {
	mdURL, err := MetadataURL(opts.Resource)
	if err != nil {
		return nil, err
	}
	if err := checkVerifier(v, opts.Resource); err != nil {
		return nil, err
	}
	if err := nilness.Refuse("authn", "Options.Throttle", opts.Throttle); err != nil {
		return nil, err
	}
	if !validParamValue("resource_metadata", mdURL) {
		return nil, errors.New("authn: resource metadata URL cannot be used in a challenge")
	}
	for _, s := range opts.Scopes {
		if !principal.ValidScope(s) {
			return nil, fmt.Errorf("authn: Options.Scopes: invalid scope %q", s)
		}
	}
	scope := joinScopes(opts.Scopes)
	maxTok, err := maxTokenBytes(opts.MaxTokenBytes)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{v: v, maxToken: maxTok, resource: opts.Resource, scopes: slices.Clone(opts.Scopes), log: opts.Logger, metadataURL: mdURL}
	if opts.Throttle != nil {
		a.throttle = newThrottleState(opts.Throttle)
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.refusals = refusal.NewLog(a.log, refusalLogInterval, refusal.Hint)
	md := authParam{"resource_metadata", mdURL}
	a.chNoCreds = challenge(md, authParam{"scope", scope})
	a.chInvalidToken = challenge(authParam{"error", "invalid_token"}, authParam{"error_description", descInvalidToken}, md, authParam{"scope", scope})
	a.chInvalidRequest = challenge(authParam{"error", "invalid_request"}, authParam{"error_description", descInvalidRequest}, md)
	if a.dpop, err = newDPoPSide(opts.DPoP, opts.Resource, a.log, md, scope); err != nil {
		return nil, err
	}
	return a, nil
}

// Authenticate returns the principal of r. When an earlier middleware
// already put one in the request context ([principal.NewContext]: this
// Authenticator's Handler or Optional, or the service's own), that one is
// returned and nothing is verified again. Otherwise Authenticate extracts
// the bearer token (see [BearerToken]) and verifies it; the principal's
// Expires is the token's expiry.
//
// With DPoP on (Options.DPoP), "Authorization: DPoP <token>" is accepted
// too, with exactly one DPoP proof header checked on every request (see
// [dpop.Options]; the Verifier, and so a [Cache], sees only the token): the
// proof is consumed, so call Authenticate once per request (Handler and
// Optional store the principal in the context for everything after them).
// In every mode a DPoP-bound token presented as Bearer is refused, and a
// token presented as DPoP must be bound to the proof's key.
//
// It returns [principal.ErrUnauthenticated] when the request offers no token,
// [ErrInvalidRequest], [ErrInvalidToken], [dpop.ErrInvalidProof],
// [dpop.ErrUseNonce], [ErrUnavailable], or another error from the Verifier. A principal whose Audience is not this
// resource, or whose Subject breaks the rules of [principal.Principal], is rejected
// as [ErrInvalidToken] whatever the Verifier said.
func (a *Authenticator) Authenticate(r *http.Request) (principal.Principal, error) {
	if !a.usable() {
		return principal.Principal{}, errAuthenticatorZero
	}
	if p, ok := principal.FromContext(r.Context()); ok {
		return p, nil
	}
	scheme, tok, err := credentials(r, a.maxToken, a.dpop != nil)
	if err == principal.ErrUnauthenticated {
		return principal.Principal{}, err
	}
	if a.throttle == nil {
		return a.check(r, scheme, tok, err)
	}
	return a.authenticateThrottled(r, scheme, tok, err)
}

// check is Authenticate for the credentials r offers: tok in scheme, or
// err when they could not be read.
func (a *Authenticator) check(r *http.Request, scheme authScheme, tok string, err error) (principal.Principal, error) {
	if err != nil {
		return principal.Principal{}, err
	}
	if a.v == nil {
		return principal.Principal{}, ErrInvalidToken // the service's middleware did not accept it
	}
	if a.dpop != nil {
		return a.checkDPoP(r, scheme, tok) // dpop.go
	}
	return a.checkBearer(r, tok)
}

// checkBearer is the bearer path: the token verified, its principal
// checked, and a DPoP-bound token refused (RFC 9449 §7.2: no downgrade).
func (a *Authenticator) checkBearer(r *http.Request, tok string) (principal.Principal, error) {
	p, err := a.verifyToken(r, tok)
	if err != nil {
		return principal.Principal{}, err
	}
	if p.DPoPThumbprint != "" {
		return principal.Principal{}, errBoundAsBearer
	}
	return p, nil
}

// verifyToken asks the Verifier and checks the principal it returns: its
// Audience must be this resource and it must obey the rules of
// principal.Principal. Expires is the token's expiry.
func (a *Authenticator) verifyToken(r *http.Request, tok string) (principal.Principal, error) {
	p, exp, err := a.v.Verify(r.Context(), tok)
	if err != nil {
		return principal.Principal{}, err
	}
	if p, err = principal.New(p); err != nil || p.Audience != a.resource {
		return principal.Principal{}, errVerifierShape
	}
	p.Expires = exp
	return p, nil
}

// DPoPMode returns the Authenticator's DPoP mode.
func (a *Authenticator) DPoPMode() dpop.Mode {
	if a == nil || a.dpop == nil {
		return dpop.Off
	}
	return a.dpop.c.Mode()
}

// DPoPAlgorithms returns the proof algorithms accepted, sorted, for the
// metadata's DPoPSigningAlgorithms; nil when DPoP is off.
func (a *Authenticator) DPoPAlgorithms() []string {
	if a == nil || a.dpop == nil {
		return nil
	}
	return a.dpop.c.Algorithms()
}

// Handler requires a valid token: it answers errors with [Authenticator.WriteError] and
// otherwise calls next with the principal in the request context (see
// [principal.FromContext]) and the response marked private ([SetPrivate]).
func (a *Authenticator) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err != nil {
			a.WriteError(w, r, err)
			return
		}
		ctx, err := principal.NewContext(r.Context(), p)
		if err != nil { // never: Authenticate's principals obey the rules
			a.WriteError(w, r, ErrInvalidToken)
			return
		}
		SetPrivate(w.Header())
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Optional lets anonymous requests through without a principal (with
// Vary: Authorization), and authenticated ones with their principal, like
// Handler. A request that offers a token which fails is still answered
// with an error: an invalid token is never downgraded to anonymous.
func (a *Authenticator) Optional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		switch {
		case err == nil:
			ctx, err := principal.NewContext(r.Context(), p)
			if err != nil { // never: Authenticate's principals obey the rules
				a.WriteError(w, r, ErrInvalidToken)
				return
			}
			SetPrivate(w.Header())
			next.ServeHTTP(w, r.WithContext(ctx))
		case errors.Is(err, principal.ErrUnauthenticated):
			httpheader.AppendVary(w.Header(), "Authorization")
			next.ServeHTTP(w, r)
		default:
			a.WriteError(w, r, err)
		}
	})
}

// RequireScopes returns middleware, to be placed after Handler or
// Optional, that answers 403 insufficient_scope (naming every scope in
// scopes) unless the request's principal has all of them, and 401 when
// there is no principal. Invalid scope names make every request fail with
// 500 (and an error log line at construction) rather than pass.
func (a *Authenticator) RequireScopes(scopes ...string) func(http.Handler) http.Handler {
	required := normalizeScopes(slices.Clone(scopes))
	valid := true
	for _, s := range required {
		if !principal.ValidScope(s) {
			valid = false
		}
	}
	if !valid && a.usable() {
		a.log.Error("authn: RequireScopes: invalid scope name; every request will fail")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !valid {
				a.WriteError(w, r, errors.New("authn: invalid required scope"))
				return
			}
			p, ok := principal.FromContext(r.Context())
			if !ok {
				a.WriteError(w, r, principal.ErrUnauthenticated)
				return
			}
			if !p.HasScopes(required...) {
				a.WriteError(w, r, &principal.ScopeError{Required: required})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Fixed response bodies: never internal text.
var (
	bodyInvalidToken   = []byte(`{"error":"invalid_token"}`)
	bodyNoCreds        = []byte(`{"error":"unauthorized"}`)
	bodyInvalidRequest = []byte(`{"error":"invalid_request"}`)
	bodyScope          = []byte(`{"error":"insufficient_scope"}`)
	bodyUnavailable    = []byte(`{"error":"temporarily_unavailable"}`)
	bodyInternal       = []byte(`{"error":"server_error"}`)
	bodyInvalidProof   = []byte(`{"error":"invalid_dpop_proof"}`)
	bodyUseNonce       = []byte(`{"error":"use_dpop_nonce"}`)
	bodyThrottled      = []byte(`{"error":"too_many_requests"}`)
)

// retryAfterSeconds is a Retry-After value: d in whole seconds, rounded
// up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(max((d+time.Second-1)/time.Second, 1)), 10)
}

const defaultRetryAfter = 5 * time.Second

// StatusOf returns the HTTP status [Authenticator.WriteError] answers err
// with: the decision of its table, for observers that report refusals.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, principal.ErrInsufficientScope):
		return http.StatusForbidden
	case errors.Is(err, principal.ErrUnauthenticated), errors.Is(err, dpop.ErrUseNonce),
		errors.Is(err, dpop.ErrInvalidProof), errors.Is(err, ErrInvalidToken):
		return http.StatusUnauthorized
	case errors.Is(err, ErrInvalidRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrThrottled):
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// StatusOf is the package's [StatusOf]: the status WriteError answers
// err with.
func (a *Authenticator) StatusOf(err error) int { return StatusOf(err) }

// WriteError is the one mapping of authentication errors to responses:
//
//	principal.ErrUnauthenticated   401  WWW-Authenticate: Bearer resource_metadata="…", scope="…"
//	ErrInvalidToken    401  Bearer error="invalid_token", error_description="…", resource_metadata="…", scope="…"
//	ErrInvalidRequest  400  Bearer error="invalid_request", error_description="…", resource_metadata="…"
//	*ScopeError        403  Bearer error="insufficient_scope", scope="<all required>", resource_metadata="…", error_description="…"
//	ErrUnavailable     503  Retry-After (from *UnavailableError, else 5 s)
//	ErrThrottled       429  Retry-After (from *ThrottledError, else 1 s)
//	anything else      500
//
// With DPoP on: a request without credentials gets the Bearer challenge
// and a `DPoP algs="…", resource_metadata="…", scope="…"` one (only the
// DPoP one when DPoP is required); errors about a request that used the
// DPoP scheme (any request, when required) are DPoP challenges with the
// same error codes and algs; and
//
//	dpop.ErrInvalidProof 401  DPoP error="invalid_dpop_proof", error_description="…", algs="…", resource_metadata="…"
//	dpop.ErrUseNonce     401  DPoP error="use_dpop_nonce", …, and DPoP-Nonce
//
// With nonces required, every 401 carries a fresh DPoP-Nonce.
//
// Every error response carries Cache-Control: no-store and Vary: Authorization. The
// body is a small fixed JSON object; error text, token bytes and key ids
// never appear in a response. Scopes of a *ScopeError that break RFC 6750's
// character rules are left out of the challenge.
func (a *Authenticator) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if !a.usable() {
		writeMisuse(w, r, errAuthenticatorZero)
		return
	}
	h := w.Header()
	status, body := a.errorResponse(h, r, err)
	if status == http.StatusUnauthorized && a.dpop != nil {
		a.dpop.setNonce(h)
	}
	a.logRefusal(r.Context(), status, err)
	h.Set("Cache-Control", "no-store")
	httpheader.AppendVary(h, "Authorization")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorResponse sets the challenge or Retry-After of err in h and
// returns the status and body that answer it (WriteError's table).
func (a *Authenticator) errorResponse(h http.Header, r *http.Request, err error) (int, []byte) {
	var se *principal.ScopeError
	if a.dpop != nil {
		if status, body, ok := a.dpopErrorResponse(h, r, err); ok {
			return status, body
		}
	}
	switch {
	case errors.As(err, &se):
		h.Set("WWW-Authenticate", challenge(a.scopeChallenge(se)...))
		return http.StatusForbidden, bodyScope
	case errors.Is(err, principal.ErrUnauthenticated):
		a.setChallenges(h, a.chNoCreds)
		return http.StatusUnauthorized, bodyNoCreds
	case errors.Is(err, ErrInvalidToken), errors.Is(err, dpop.ErrInvalidProof), errors.Is(err, dpop.ErrUseNonce):
		a.setChallenges(h, a.chInvalidToken)
		return http.StatusUnauthorized, bodyInvalidToken
	case errors.Is(err, ErrInvalidRequest):
		h.Set("WWW-Authenticate", a.chInvalidRequest)
		return http.StatusBadRequest, bodyInvalidRequest
	case errors.Is(err, ErrUnavailable):
		retry := defaultRetryAfter
		if ue := (*UnavailableError)(nil); errors.As(err, &ue) && ue.RetryAfter > 0 {
			retry = ue.RetryAfter
		}
		h.Set("Retry-After", retryAfterSeconds(retry))
		return http.StatusServiceUnavailable, bodyUnavailable
	case errors.Is(err, ErrThrottled):
		retry := time.Second
		if te := (*ThrottledError)(nil); errors.As(err, &te) && te.RetryAfter > 0 {
			retry = te.RetryAfter
		}
		h.Set("Retry-After", retryAfterSeconds(retry))
		return http.StatusTooManyRequests, bodyThrottled
	}
	return http.StatusInternalServerError, bodyInternal
}

// scopeChallenge is the parameters of an insufficient_scope challenge.
func (a *Authenticator) scopeChallenge(se *principal.ScopeError) []authParam {
	return []authParam{
		{"error", "insufficient_scope"},
		{"scope", joinValidScopes(se.Required)},
		{"resource_metadata", a.metadataURL},
		{"error_description", descScope}}
}

// logRefusal logs a refusal answered with status: at INFO aggregated by
// reason (refusallog.go), at DEBUG each one, at ERROR a 500.
func (a *Authenticator) logRefusal(ctx context.Context, status int, err error) {
	reason := rejectReason(err)
	if status != http.StatusInternalServerError && reason != "no_credentials" && reason != "unavailable" {
		hint := ""
		if ke := (*kidlessError)(nil); errors.As(err, &ke) {
			hint = ke.hint()
		}
		a.refusals.RefusedHint(ctx, reason, status, hint)
	}
	if !a.log.Enabled(ctx, slog.LevelDebug) && status != http.StatusInternalServerError {
		return
	}
	level := slog.LevelDebug
	if status == http.StatusInternalServerError {
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.Int("status", status), slog.String("reason", reason)}
	var me *misuseError
	if errors.As(err, &me) { // a fixed text about the service's setup
		attrs = append(attrs, slog.String("error", me.msg))
	}
	a.log.LogAttrs(ctx, level, "authn: request not authenticated", attrs...)
}

// setChallenges sets the Bearer challenge given and, with DPoP on, the
// DPoP one beside it (RFC 9449 §7.1: a client learns both schemes and the
// proof algorithms); with DPoP required, only the DPoP one.
func (a *Authenticator) setChallenges(h http.Header, bearer string) {
	if a.dpop == nil {
		h.Set("WWW-Authenticate", bearer)
		return
	}
	a.dpop.setChallenges(h, bearer)
}

// usable reports whether a was made by NewAuthenticator.
func (a *Authenticator) usable() bool { return a != nil && a.log != nil }

// writeMisuse answers 500 for an Authenticator that was not made by
// NewAuthenticator, and says so in the log.
func writeMisuse(w http.ResponseWriter, r *http.Request, err error) {
	slog.Default().LogAttrs(r.Context(), slog.LevelError, err.Error())
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(bodyInternal)
}

func joinValidScopes(scopes []string) string {
	valid := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if principal.ValidScope(s) {
			valid = append(valid, s)
		}
	}
	return joinScopes(normalizeScopes(valid))
}

// SetPrivate marks a response to an authenticated request as private:
// Cache-Control: private, max-age=0 and Vary: Authorization, so no shared
// cache stores it or serves it to another caller (RFC 9111 §3.5).
func SetPrivate(h http.Header) { httpheader.SetPrivate(h) }

// kitVerifier is a Verifier of this package: it says whether its
// constructor made it, and the resource its principals carry.
type kitVerifier interface {
	verifierResource() (resource string, ok bool)
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

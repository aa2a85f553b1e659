package dpop

import (
	"encoding/base64"
	"errors"
	"time"
)

// Sentinel errors. Their text is fixed and carries no request data;
// authn.Authenticator.WriteError maps them to responses.
var (
	// ErrInvalidProof means the request's DPoP proof is missing,
	// repeated, malformed, oversized, badly signed, made for another
	// method or URL, stale, for another token, or replayed: 401 with a
	// DPoP error="invalid_dpop_proof" challenge. It is one error with one
	// text whatever failed.
	ErrInvalidProof = errors.New("authn: invalid DPoP proof")

	// ErrUseNonce means Options.RequireNonce is set and the proof carries
	// no valid server nonce: 401 with a DPoP error="use_dpop_nonce"
	// challenge and a fresh DPoP-Nonce header; the client retries with it
	// (RFC 9449 §9).
	ErrUseNonce = errors.New("authn: DPoP nonce required")

	// ErrKeyMismatch means the proof's key is not the one the token is
	// bound to (its cnf.jkt): the token is refused as invalid_token
	// (RFC 9449 §7.1).
	ErrKeyMismatch = errors.New("authn: DPoP proof key is not the token's")

	// ErrReplayed is what a [ReplayStore] answers for a proof it
	// remembers already: a replay, refused as invalid_dpop_proof.
	ErrReplayed = errors.New("authn: DPoP proof replayed")

	// ErrUnavailable means a proof cannot be checked now (the replay
	// memory is full, the caller holds its share, or the ReplayStore
	// cannot answer): 503 with Retry-After, never accepted unremembered.
	ErrUnavailable = errors.New("authn: cannot check DPoP proof now")
)

// UnavailableError is an [ErrUnavailable] that says when to retry: what a
// [ReplayStore] answers when it will not remember a proof now.
type UnavailableError struct {
	RetryAfter time.Duration
}

func (e *UnavailableError) Error() string { return ErrUnavailable.Error() }

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// proofError is an ErrInvalidProof that remembers, for logs and tests
// only, which check failed. Reason makes it a reason-carrying error
// authn's logs read (a fixed classification, never request data).
type proofError struct{ reason string }

func (e *proofError) Error() string        { return ErrInvalidProof.Error() }
func (e *proofError) Is(target error) bool { return target == ErrInvalidProof }
func (e *proofError) Reason() string       { return e.reason }

// The reasons a proof is rejected (see proofError).
var (
	errProofHeaders   = &proofError{"dpop_headers"}   // no DPoP header, or several
	errProofMalformed = &proofError{"dpop_malformed"} // size, segments, base64, JSON
	errProofType      = &proofError{"dpop_typ"}       // typ is not dpop+jwt
	errProofAlg       = &proofError{"dpop_alg"}       // alg not allowed, or does not fit the jwk
	errProofHeader    = &proofError{"dpop_header"}    // forbidden or ill-typed header parameter
	errProofKey       = &proofError{"dpop_jwk"}       // jwk missing, private, malformed, weak
	errProofClaims    = &proofError{"dpop_claims"}    // a claim missing or of the wrong type
	errProofSignature = &proofError{"dpop_signature"} // signature does not verify with the jwk
	errProofMethod    = &proofError{"dpop_htm"}       // htm is not the request method
	errProofURL       = &proofError{"dpop_htu"}       // htu is not the request URL
	errProofTime      = &proofError{"dpop_iat"}       // iat outside the window
	errProofATH       = &proofError{"dpop_ath"}       // ath is not the token's hash
	errProofReplay    = &proofError{"dpop_replay"}    // jti seen before
)

// b64 is strict base64url without padding.
var b64 = base64.RawURLEncoding.Strict()

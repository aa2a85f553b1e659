package dpop

import (
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

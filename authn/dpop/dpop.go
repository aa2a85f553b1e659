package dpop

import (
	"context"
	"time"
)

// Mode says whether an authn.Authenticator accepts DPoP (RFC 9449)
// sender-constrained tokens. The zero value is Off.
type Mode uint8

const (
	// Off: only the Bearer scheme. "Authorization: DPoP …" is another
	// scheme, as if absent. A DPoP-bound token (one whose "cnf" names a
	// key, RFC 9449 §6) is still refused as a bearer token: presenting it
	// without a proof would make the binding worthless.
	Off Mode = iota
	// Allowed: both schemes. DPoP-bound tokens need the DPoP scheme
	// and a valid proof on every request; plain bearer tokens are accepted
	// with the Bearer scheme.
	Allowed
	// Required: only the DPoP scheme with a DPoP-bound token and a
	// valid proof; every Bearer request is refused (invalid_token).
	Required
)

// String returns "off", "allowed" or "required".
func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case Allowed:
		return "allowed"
	case Required:
		return "required"
	}
	return "invalid"
}

// Options configures DPoP in [Options]. The zero value is DPoP off.
type Options struct {
	// Mode turns DPoP on. The zero value, Off, keeps the Bearer-only
	// behaviour (the challenges are exactly those without DPoP).
	Mode Mode

	// Algorithms is the allowlist of proof signature algorithms, published
	// in the challenges' algs and meant for the metadata's
	// dpop_signing_alg_values_supported. Nil means
	// [DefaultAlgorithms] (ES256, EdDSA, PS256, RS256). Only
	// asymmetric algorithms can be configured: RS*, PS*, ES256/384/512,
	// EdDSA.
	Algorithms []string

	// ProofWindow is how far a proof's iat may be from the server's clock,
	// before or after. Zero means 60 s; at most 10 minutes. A proof's jti
	// is remembered for twice the window, so it cannot be used twice.
	ProofWindow time.Duration

	// BaseURL is the scheme and authority (and path prefix, if a proxy
	// strips one) that clients use to reach this server: a proof's htu
	// must equal BaseURL followed by the request's path, after RFC 3986
	// normalization (RFC 9449 §4.3). Empty means the origin of
	// Options.Resource, which is already the external URL. The request's
	// Host header is never used: a proof made for another server must not
	// become valid here by a spoofed Host.
	BaseURL string

	// RequireNonce makes every proof carry a nonce this server issued
	// (RFC 9449 §9): a proof without one, or with an expired one, is
	// answered 401 use_dpop_nonce with a fresh DPoP-Nonce header, and the
	// client retries. Nonces bound how far ahead a client can make proofs.
	RequireNonce bool

	// NonceLifetime is how long an issued nonce is accepted. Zero means
	// 5 minutes; at most an hour.
	NonceLifetime time.Duration

	// NonceSecret keys the nonces (an HMAC over their issue time), so the
	// instances of a fleet accept each other's: at least 32 random bytes,
	// shared by them. Nil means a random key per process (a client that
	// moves to another instance is told to retry with a new nonce).
	NonceSecret []byte

	// MaxReplayEntries bounds the proofs remembered for replay detection
	// (in memory, per process). Zero means 100 000: at most about 9.5 MB
	// with the per-caller counters (both generations grown to the bound,
	// every proof another caller's; 4.7 MB for the proofs alone, about 95
	// and 47 bytes a proof). When it is full of live entries, new proofs are
	// refused with 503 and Retry-After rather than admitted unchecked.
	// Proofs are remembered per process: behind a load balancer without
	// affinity, a proof replayed to another instance is detected only by
	// that instance's own memory; use nonces, short windows, or affinity.
	MaxReplayEntries int

	// MaxReplayEntriesPerCaller is each caller's share of MaxReplayEntries,
	// so that no caller can fill the memory and lock the others out: a
	// caller holding its share gets 503 and Retry-After (when its oldest
	// proofs age out) for its new proofs, while everyone else's are still
	// remembered and accepted. A caller is the token's identity together
	// with the key the token is bound to (cnf.jkt): its issuer and
	// subject, else its issuer and client id, and the key. A proof's key
	// must be the token's, so an attacker cannot multiply shares by
	// minting proof keys, while instances of one client holding tokens
	// bound to keys of their own have shares of their own. Only a proof
	// that passed every other check, with its token, counts. A proof stays remembered between two and four
	// ProofWindows, so a caller can make about MaxReplayEntriesPerCaller /
	// (4 × ProofWindow) proofs a second, sustained, and its share at once.
	// Zero means MaxReplayEntries / 50 (2 000 by default: 8 proofs a
	// second with the default window, and 50 callers at their share to
	// fill the memory); at most MaxReplayEntries, which turns shares off.
	MaxReplayEntriesPerCaller int

	// ReplayStore remembers the accepted proofs. Nil means this
	// process's memory (bounded by MaxReplayEntries, with per-caller
	// shares). Instances of a fleet that share one (a Redis one, say) make
	// the replay protection the resource's: a proof accepted by one
	// instance is refused by every other. A store that cannot answer
	// refuses the proof (503, fail closed), never accepts it unremembered.
	ReplayStore ReplayStore

	// MaxProofBytes bounds the DPoP header; a longer proof is refused
	// (invalid_dpop_proof) before it is decoded. Zero means 8 KiB.
	MaxProofBytes int

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// DefaultAlgorithms are the proof algorithms accepted when
// [Options.Algorithms] is nil.
func DefaultAlgorithms() []string { return []string{"ES256", "EdDSA", "PS256", "RS256"} }

// ReplayStore remembers the DPoP proofs an authn.Authenticator accepted, so
// that none is accepted twice (RFC 9449 §11.1), across the processes that
// share it (Options.ReplayStore). Implementations must be safe for
// concurrent use and answer in one round trip, atomically: of two
// processes remembering the same proof at once, exactly one succeeds.
type ReplayStore interface {
	// Remember records proof — an opaque digest of the proof's key and
	// jti, unique to one proof — charged to caller (an opaque digest of
	// the identity and its bound key: the share it counts against) until
	// expires, after which the proof could not be accepted anyway. It
	// returns ErrReplayed when proof is remembered already, an
	// *UnavailableError (with RetryAfter) when it will not remember it
	// now (full, or the caller at its share), and any other error when it
	// cannot answer: every error refuses the proof.
	Remember(ctx context.Context, proof, caller string, expires time.Time) error
}

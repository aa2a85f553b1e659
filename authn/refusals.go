package authn

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/internal/refusal"
	"github.com/mcpkit/mcpkit/principal"
)

// How an Authenticator with a Throttle keeps a valid token from paying for
// forged ones (issue 27). The Throttle's bucket is per remote address, and
// behind a proxy many callers share one address, so the bucket must limit
// only the work of refusing, never the serving of a valid token:
//
//   - A token this Authenticator verified lately (its digest is in the
//     known-good memory, until the token's expiry or at most
//     knownGoodTTL) is checked without asking the Throttle at all: a
//     caller holding a valid token is served whatever its address's bucket
//     says. Checking it is the work of serving (and a Cache makes it a map
//     lookup).
//   - Every other credential asks Throttle.Admit. Credentials refused
//     cheaply — a malformed header, or a token refused lately for a reason
//     that does not change with time (its digest is in the known-refused
//     memory for knownRefusedTTL) — are refused at once.
//   - A new token from an address whose bucket is empty is not refused
//     unchecked, since it may be an honest caller's fresh token: its
//     check waits for the throttled lane, which runs at most
//     throttledChecks checks at a time for all throttled addresses
//     together (at most maxThrottledWaiters waiting, each at most
//     maxThrottledWait). So what a forging client can cost is bounded by
//     the lane — one signature check or introspection call at a time,
//     not one per request — while an honest token that verifies there is
//     served.
//   - Each refusal of an admitted credential is charged to the address
//     (Throttle.Refused), but a DPoP nonce challenge and a check the
//     server could not make refuse no credential and are not; while
//     its bucket is empty a refusal is answered 429 with the Throttle's
//     Retry-After, as before, and not charged again.
//
// What remains shared: a client flooding from the same address with more
// concurrent requests than the lane admits waiters can make another
// caller's *fresh* token from that address wait, or at worst get 429 for
// one request; tokens already verified are never affected. Keying the
// Throttle by the real client address behind trusted proxies keeps that
// to the flooding client itself.
const (
	refusalLogInterval  = time.Minute // the INFO lines of refusal reasons are aggregated over it
	knownGoodTTL        = 10 * time.Minute
	maxKnownGood        = 16384
	knownRefusedTTL     = 30 * time.Second
	maxKnownRefused     = 4096
	throttledChecks     = 1
	maxThrottledWaiters = 64
	maxThrottledWait    = 2 * time.Second
)

// throttleState is what an Authenticator with a Throttle keeps.
type throttleState struct {
	t       Throttle
	good    *refusal.Memory
	refused *refusal.Memory
	lane    *refusal.Lane
	now     func() time.Time
}

func newThrottleState(t Throttle) *throttleState {
	return &throttleState{t: t, good: refusal.NewMemory(maxKnownGood), refused: refusal.NewMemory(maxKnownRefused),
		lane: refusal.NewLane(throttledChecks, maxThrottledWaiters, maxThrottledWait), now: time.Now}
}

// lasting reports whether a refusal holds for knownRefusedTTL whatever
// happens meanwhile: refusals about the token itself, not about keys that
// may yet be published (kid), a time yet to come (nbf), the scheme or the
// proof of one request, or a verifier that did not say why.
func lasting(err error) bool {
	var te *tokenError
	if !errors.As(err, &te) {
		return false
	}
	switch te {
	case errMalformed, errBadHeader, errAlg, errType, errSignature, errClaims, errIssuer, errAudience,
		errExpired, errSubject, errClientID, errScope, errInactive, errVerifierShape, errConfirmation,
		errUnknownIssuer:
		return true
	}
	return false
}

// notCharged reports the failures that refuse no credential: the
// server's own (ErrUnavailable), and a DPoP nonce challenge, which comes
// only after the token verified and the proof's key proved to be the
// token's, so an honest client meets it at every nonce rotation.
func notCharged(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, dpop.ErrUseNonce)
}

// authenticateThrottled is Authenticate with a Throttle: see the comment
// at the top of this file.
func (a *Authenticator) authenticateThrottled(r *http.Request, scheme authScheme, tok string, err error) (principal.Principal, error) {
	th := a.throttle
	now := th.now()
	var key [sha256.Size]byte
	if err == nil {
		key = digest(tok)
		if _, ok := th.good.Get(key, now); ok {
			p, err := a.check(r, scheme, tok, nil)
			if err != nil && !notCharged(err) {
				th.good.Forget(key)
				th.t.Refused(r)
			}
			return p, err
		}
	}
	admitted, retry := th.t.Admit(r)
	refuse := func(err error) (principal.Principal, error) {
		if !admitted { // the bucket is empty already: not charged again
			return principal.Principal{}, &ThrottledError{RetryAfter: retry}
		}
		th.t.Refused(r)
		return principal.Principal{}, err
	}
	if err != nil { // the credentials could not be read: cheap to refuse
		return refuse(err)
	}
	if e, ok := th.refused.Get(key, now); ok {
		return refuse(e.Err)
	}
	if !admitted {
		if !th.lane.Enter(r.Context()) {
			return principal.Principal{}, &ThrottledError{RetryAfter: retry}
		}
		defer th.lane.Leave()
	}
	p, err := a.check(r, scheme, tok, nil)
	switch {
	case err == nil:
		until := now.Add(knownGoodTTL)
		if !p.Expires.IsZero() && p.Expires.Before(until) {
			until = p.Expires
		}
		th.good.Put(key, refusal.Entry{Until: until}, now)
		return p, nil
	case notCharged(err):
		return p, err
	case lasting(err):
		th.refused.Put(key, refusal.Entry{Until: now.Add(knownRefusedTTL), Err: err}, now)
	}
	return refuse(err)
}

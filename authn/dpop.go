package authn

// The DPoP side of an Authenticator (RFC 9449): the proof checker of
// authn/dpop, the DPoP challenges, and the DPoP path of a request. The
// bearer path (authenticator.go) reads without it: an Authenticator with
// DPoP off has a nil dpopSide and never enters this file.

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/internal/dpopcheck"
	"github.com/mcpkit/mcpkit/principal"
)

// dpopSide is the DPoP half of an Authenticator: nil when DPoP is off.
type dpopSide struct {
	c    *dpopcheck.Checker
	algs string // space-separated, for challenges
	// Pre-rendered challenges.
	noCreds, invalidToken, invalidRequest, invalidProof, useNonce string
}

// newDPoPSide returns the DPoP side of o, or nil when o.Mode is Off; md
// and scope are the Authenticator's resource_metadata and scope hint.
func newDPoPSide(o dpop.Options, resource string, log *slog.Logger, md authParam, scope string) (*dpopSide, error) {
	c, err := dpopcheck.New(o, resource, log)
	if err != nil || c == nil {
		return nil, err
	}
	d := &dpopSide{c: c, algs: strings.Join(c.Algorithms(), " ")}
	algs := authParam{"algs", d.algs}
	d.noCreds = dpopChallenge(algs, md, authParam{"scope", scope})
	d.invalidToken = dpopChallenge(authParam{"error", "invalid_token"}, authParam{"error_description", descInvalidToken}, algs, md, authParam{"scope", scope})
	d.invalidRequest = dpopChallenge(authParam{"error", "invalid_request"}, authParam{"error_description", descInvalidRequest}, algs, md)
	d.invalidProof = dpopChallenge(authParam{"error", "invalid_dpop_proof"}, authParam{"error_description", descDPoPProof}, algs, md)
	d.useNonce = dpopChallenge(authParam{"error", "use_dpop_nonce"}, authParam{"error_description", descDPoPNonce}, algs, md)
	return d, nil
}

func (d *dpopSide) required() bool { return d.c.Mode() == dpop.Required }

// checkDPoP is check with DPoP on. A Bearer request takes the bearer path
// (refused when DPoP is required); a DPoP request needs its one proof,
// then a token bound to the proof's key. The token's verification may
// come from a Cache; the proof is checked on every request, and never
// cached.
func (a *Authenticator) checkDPoP(r *http.Request, scheme authScheme, tok string) (principal.Principal, error) {
	if scheme == schemeBearer {
		if a.dpop.required() {
			return principal.Principal{}, errBearerRefused
		}
		return a.checkBearer(r, tok)
	}
	proof, err := a.dpop.c.ProofOf(r)
	if err != nil {
		return principal.Principal{}, err
	}
	p, err := a.verifyToken(r, tok)
	if err != nil {
		return principal.Principal{}, err
	}
	if p.DPoPThumbprint == "" {
		return principal.Principal{}, errUnboundAsDPoP
	}
	if err := a.dpop.c.Check(r, proof, tok, &p); err != nil {
		return principal.Principal{}, dpopError(err)
	}
	return p, nil
}

// dpopError is the Authenticator's error for a proof check's: a proof
// whose key is not the token's refuses the token; a proof that cannot be
// checked now is ErrUnavailable.
func dpopError(err error) error {
	var ue *dpop.UnavailableError
	switch {
	case errors.Is(err, dpop.ErrKeyMismatch):
		return errKeyBinding
	case errors.As(err, &ue):
		return &UnavailableError{RetryAfter: ue.RetryAfter}
	case errors.Is(err, dpop.ErrUnavailable):
		return &UnavailableError{RetryAfter: time.Second}
	}
	return err
}

// errorResponse is WriteError's table for what DPoP changes: an error
// about a request that used the DPoP scheme (any request, when DPoP is
// required) is a DPoP challenge, and the proof errors have challenges of
// their own. ok is false when the Bearer table applies.
func (a *Authenticator) dpopErrorResponse(h http.Header, r *http.Request, err error) (status int, body []byte, ok bool) {
	d := a.dpop
	dp := d.required() || usesDPoP(r)
	var se *principal.ScopeError
	switch {
	case errors.As(err, &se):
		if !dp {
			return 0, nil, false
		}
		h.Set("WWW-Authenticate", dpopChallenge(append(a.scopeChallenge(se), authParam{"algs", d.algs})...))
		return http.StatusForbidden, bodyScope, true
	case errors.Is(err, principal.ErrUnauthenticated):
		return 0, nil, false
	case errors.Is(err, dpop.ErrUseNonce):
		h.Set("WWW-Authenticate", d.useNonce)
		return http.StatusUnauthorized, bodyUseNonce, true
	case errors.Is(err, dpop.ErrInvalidProof):
		h.Set("WWW-Authenticate", d.invalidProof)
		return http.StatusUnauthorized, bodyInvalidProof, true
	case !dp:
		return 0, nil, false
	case errors.Is(err, ErrInvalidToken):
		h.Set("WWW-Authenticate", d.invalidToken)
		return http.StatusUnauthorized, bodyInvalidToken, true
	case errors.Is(err, ErrInvalidRequest):
		h.Set("WWW-Authenticate", d.invalidRequest)
		return http.StatusBadRequest, bodyInvalidRequest, true
	}
	return 0, nil, false
}

// setChallenges sets the Bearer challenge given and the DPoP one beside
// it (RFC 9449 §7.1: a client learns both schemes and the proof
// algorithms); with DPoP required, only the DPoP one.
func (d *dpopSide) setChallenges(h http.Header, bearer string) {
	if d.required() {
		h.Set("WWW-Authenticate", d.noCreds)
		return
	}
	h.Set("WWW-Authenticate", bearer)
	h.Add("WWW-Authenticate", d.noCreds)
}

// setNonce hands out a nonce with every 401 when nonces are required, so
// a client's next proof can carry one without another round trip
// (RFC 9449 §9).
func (d *dpopSide) setNonce(h http.Header) {
	if n := d.c.Nonce(); n != "" {
		h.Set("DPoP-Nonce", n)
	}
}

// usesDPoP reports whether r presents its token with the DPoP scheme.
func usesDPoP(r *http.Request) bool {
	v := r.Header["Authorization"]
	return len(v) == 1 && len(v[0]) >= len("DPoP") && strings.EqualFold(v[0][:len("DPoP")], "DPoP") &&
		(len(v[0]) == len("DPoP") || v[0][len("DPoP")] == ' ')
}

package authn

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// The small JSON objects of a token (the JOSE header, the claims, an
// introspection response) are read with the kit's strict JSON engine,
// never with encoding/json or jwx: duplicate member names (after
// unescaping, and case variants such as "sub" and "SUB": a parser
// differential such as two "aud" members is an attack, not a convenience),
// invalid UTF-8, lone surrogate escapes and trailing data reject the
// token, and nesting and member counts are bounded.
var tokenJSON = jsonstrict.Options{MaxDepth: 32, MaxMembers: 512}

// ClaimNames says which claims (JWT) or response members (introspection)
// carry the principal's fields. The zero value means the defaults below.
type ClaimNames struct {
	// Subject names the subject claim. Empty means "sub". Its value must be a
	// string, non-empty, at most 256 characters, without control characters;
	// otherwise the token is rejected.
	Subject string

	// ClientID lists the claims tried, in order, for the client id; the first
	// present one is used and must be a string. Nil means "client_id", then
	// "azp". At most 4 names.
	ClientID []string

	// Scope lists the claims tried, in order, for the granted scopes; the
	// first present one is used. Its value is either one string of
	// space-separated scopes or an array of scope strings. Nil means "scope",
	// then "scp". At most 4 names.
	Scope []string
}

const (
	maxIdentifierLen   = 256 // UTF-16 code units
	maxClaimAlternates = 4
	maxLeeway          = 5 * time.Minute
	defaultLeeway      = 60 * time.Second
)

// Fixed slots of the claims a verifier reads; the configured names follow.
const (
	slotIss = iota
	slotAud
	slotExp
	slotNbf
	slotIat
	slotActive
	slotSub
	slotCnf
	slotFirstVar // client id names, then scope names
	maxSlots     = slotFirstVar + 2*maxClaimAlternates
)

// claimRules are the checks shared by the JWT and introspection verifiers,
// fixed at construction.
type claimRules struct {
	names         [maxSlots]string // "" = unused slot
	nClient       int
	nScope        int
	issuer        string // "" = not checked (introspection without Issuer)
	audience      string // the "aud" value required; usually resource
	resource      string // the principal's Audience
	leeway        time.Duration
	requireActive bool
}

func newClaimRules(cn ClaimNames, issuer, resource string, leeway time.Duration, introspection bool) (claimRules, error) {
	r := claimRules{issuer: issuer, resource: resource, audience: resource, requireActive: introspection}
	switch {
	case leeway < 0:
		return r, fmt.Errorf("authn: leeway must not be negative")
	case leeway == 0:
		leeway = defaultLeeway
	case leeway > maxLeeway:
		return r, fmt.Errorf("authn: leeway must be at most %v", maxLeeway)
	}
	r.leeway = leeway
	sub := cn.Subject
	if sub == "" {
		sub = "sub"
	}
	cids := cn.ClientID
	if cids == nil {
		cids = []string{"client_id", "azp"}
	}
	scopes := cn.Scope
	if scopes == nil {
		scopes = []string{"scope", "scp"}
	}
	if len(cids) > maxClaimAlternates || len(scopes) > maxClaimAlternates {
		return r, fmt.Errorf("authn: at most %d alternative claim names", maxClaimAlternates)
	}
	r.names = [maxSlots]string{slotIss: "iss", slotAud: "aud", slotExp: "exp", slotNbf: "nbf", slotIat: "iat", slotSub: sub, slotCnf: "cnf"}
	if introspection {
		r.names[slotActive] = "active"
	}
	for i, n := range cids {
		if n == "" {
			return r, fmt.Errorf("authn: empty client id claim name")
		}
		r.names[slotFirstVar+i] = n
	}
	for i, n := range scopes {
		if n == "" {
			return r, fmt.Errorf("authn: empty scope claim name")
		}
		r.names[slotFirstVar+maxClaimAlternates+i] = n
	}
	r.nClient, r.nScope = len(cids), len(scopes)
	return r, nil
}

// setAudience makes aud the required "aud" value; "" keeps the resource.
func (r *claimRules) setAudience(aud string) error {
	if aud == "" {
		return nil
	}
	if strings.IndexFunc(aud, unicode.IsControl) >= 0 || !utf8.ValidString(aud) {
		return fmt.Errorf("authn: Audience contains control characters or invalid UTF-8")
	}
	r.audience = aud
	return nil
}

// claimValues holds the raw values of the claims named by claimRules, and
// whether a member named like the subject claim in another case was seen.
type claimValues struct {
	v          [maxSlots]jsonstrict.Value
	subVariant bool
}

// read collects the claims from a JSON object, strictly (see tokenJSON).
// Names match exactly: "Sub" is not "sub" (and beside "sub" it rejects
// the object as a duplicate; alone, it is noted: see check).
func (r *claimRules) read(data []byte, cv *claimValues) error {
	sub := r.names[slotSub]
	err := tokenJSON.Members(data, func(name []byte, v jsonstrict.Value) bool {
		for i := range r.names {
			if r.names[i] != "" && string(name) == r.names[i] {
				cv.v[i] = v // one member may fill several slots (e.g. a custom name "sub" twice)
			}
		}
		if len(name) == len(sub) && string(name) != sub && strings.EqualFold(string(name), sub) {
			cv.subVariant = true
		}
		return true
	})
	if err != nil {
		return errClaims
	}
	return nil
}

// check applies the claim rules at time now and builds the principal.
func (r *claimRules) check(cv *claimValues, now time.Time) (principal.Principal, time.Time, error) {
	if err := r.checkIssuance(cv); err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	exp, err := r.checkTimes(cv, now)
	if err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	p, err := r.identity(cv)
	if err != nil {
		return principal.Principal{}, time.Time{}, err
	}
	return p, exp, nil
}

// checkIssuance checks active (introspection), iss and aud.
func (r *claimRules) checkIssuance(cv *claimValues) error {
	if r.requireActive {
		if active, ok := cv.v[slotActive].Bool(); !ok || !active {
			return errInactive
		}
	}
	// iss: exact, code-point equality (RFC 9068 §4 step 3).
	if iss := cv.v[slotIss]; r.issuer != "" {
		if !iss.EqualStr(r.issuer) {
			return errIssuer
		}
	} else if k := iss.Kind(); k != jsonstrict.None && k != jsonstrict.String {
		return errIssuer
	}
	if !r.audienceOK(cv.v[slotAud]) {
		return errAudience
	}
	return nil
}

// checkTimes checks exp (required), nbf and iat (honoured when present),
// and returns exp. All three may have fractions and are compared to the
// nanosecond.
func (r *claimRules) checkTimes(cv *claimValues, now time.Time) (time.Time, error) {
	if cv.v[slotExp].Kind() == jsonstrict.None {
		return time.Time{}, errExpired
	}
	exp, ok := jose.NumericDate(cv.v[slotExp])
	if !ok {
		return time.Time{}, errClaims
	}
	if !now.Before(exp.Add(r.leeway)) {
		return time.Time{}, errExpired
	}
	for _, slot := range [...]int{slotNbf, slotIat} {
		if cv.v[slot].Kind() == jsonstrict.None {
			continue
		}
		t, ok := jose.NumericDate(cv.v[slot])
		if !ok {
			return time.Time{}, errClaims
		}
		if t.After(now.Add(r.leeway)) {
			return time.Time{}, errNotYet
		}
	}
	return exp, nil
}

// identity builds the principal: subject, cnf.jkt, client id, scopes.
// The subject is optional (client-credentials and service tokens have
// none; templates say whose records they serve, and a subject-owned one
// is never called without a subject), but a present one must follow the
// rules, and a member named like it in another case, with no subject
// beside it, is a parser differential: refused.
func (r *claimRules) identity(cv *claimValues) (principal.Principal, error) {
	p := principal.Principal{Audience: r.resource}
	switch sv := cv.v[slotSub]; {
	case sv.Kind() == jsonstrict.None:
		if cv.subVariant {
			return principal.Principal{}, errSubject
		}
	default:
		sub, ok := sv.Str()
		if !ok || !principal.ValidIdentifier(sub) {
			return principal.Principal{}, errSubject
		}
		p.Subject = sub
	}
	if cnf := cv.v[slotCnf]; cnf.Kind() != jsonstrict.None {
		jkt, ok := jose.ConfirmationThumbprint(cnf)
		if !ok {
			return principal.Principal{}, errConfirmation
		}
		p.DPoPThumbprint = jkt
	}
	if v, found := cv.first(slotFirstVar, r.nClient); found {
		cid, ok := v.Str()
		if !ok || (cid != "" && !principal.ValidIdentifier(cid)) {
			return principal.Principal{}, errClientID
		}
		p.ClientID = cid
	}
	if v, found := cv.first(slotFirstVar+maxClaimAlternates, r.nScope); found {
		scopes, ok := parseScopes(v)
		if !ok {
			return principal.Principal{}, errScope
		}
		p.Scopes = scopes
	}
	return p, nil
}

// first returns the first present value of the n slots from slot on: the
// claim of the first alternative name the token has.
func (cv *claimValues) first(slot, n int) (jsonstrict.Value, bool) {
	for i := range n {
		if v := cv.v[slot+i]; v.Kind() != jsonstrict.None {
			return v, true
		}
	}
	return jsonstrict.Value{}, false
}

// audienceOK: aud is required and is the resource, or an array of strings
// containing it (RFC 8707, RFC 9068 §4 step 4). Any non-string element
// rejects the token.
func (r *claimRules) audienceOK(v jsonstrict.Value) bool {
	switch v.Kind() {
	case jsonstrict.String:
		return v.EqualStr(r.audience)
	case jsonstrict.Array:
		auds, ok := jose.StringArray(v)
		if !ok {
			return false
		}
		return slices.Contains(auds, r.audience)
	}
	return false
}

// parseScopes reads a space-separated string or an array of scope strings,
// validates each scope-token (RFC 6749 §3.3) and returns them sorted and
// de-duplicated. An empty string or array grants no scopes.
func parseScopes(v jsonstrict.Value) ([]string, bool) {
	var list []string
	switch v.Kind() {
	case jsonstrict.String:
		s, ok := v.Str()
		if !ok {
			return nil, false
		}
		list = strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
	case jsonstrict.Array:
		var ok bool
		if list, ok = jose.StringArray(v); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	for _, s := range list {
		if !principal.ValidScope(s) {
			return nil, false
		}
	}
	return normalizeScopes(list), true
}

// normalizeScopes sorts and de-duplicates scopes in place.
func normalizeScopes(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	if !slices.IsSorted(s) {
		slices.Sort(s)
	}
	return slices.Compact(s)
}

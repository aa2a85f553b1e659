package principal

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Principal is the authenticated caller of a request: who it is, which
// client acts for it, what it may do, and for which resource. It never
// holds a token or claims other than these.
//
// A Principal made by [New] (and so every one that [NewContext] stores,
// and every one a verifier of package authn produces) obeys the rules of
// this package: Subject and ClientID, when present, are non-empty, at
// most [MaxIdentifierLen] characters counted as UTF-16 code units, valid
// UTF-8 without control characters; Scopes are RFC 6749 scope-tokens,
// sorted and without duplicates; Audience has no control characters;
// DPoPThumbprint, when present, is an unpadded base64url SHA-256 digest.
// Treat it as immutable: it is shared by value, its Scopes slice with it.
//
// Subject identifies the user. It is optional: a client-credentials or
// service token has none; records owned by users are never served to a
// principal without one. ClientID identifies the client application,
// which many users share: data owned by a user is keyed on Subject
// ([Principal.Key]), never on ClientID.
type Principal struct {
	// Issuer is the authorization server that issued the credential, set
	// when several are trusted: it qualifies Subject and ClientID in every
	// identity key ([Principal.Key]). With one trusted issuer it is empty
	// and the subject alone is the key.
	Issuer string
	// Subject is the stable identifier of the user; empty for a caller
	// that is no user.
	Subject string
	// ClientID is the OAuth client (application) the credential was
	// issued to; empty when the issuer does not say.
	ClientID string
	// Scopes are the granted scopes, sorted and without duplicates.
	Scopes []string
	// Audience is the resource the credential was issued for (RFC 8707):
	// the server's canonical resource URI.
	Audience string
	// Expires is when the credential stops being valid; zero when
	// unknown. Long-lived responses, such as event streams, end then.
	Expires time.Time
	// DPoPThumbprint is the RFC 7638 thumbprint of the key the credential
	// is bound to (RFC 9449); empty for a bearer token. It is not part of
	// the caller's identity.
	DPoPThumbprint string
}

// MaxIdentifierLen is the longest Subject or ClientID, in UTF-16 code
// units (the length of a JavaScript string).
const MaxIdentifierLen = 256

// ErrInvalid is matched (with [errors.Is]) by every error of [New] and
// [NewContext]: a principal that breaks the rules of [Principal]. The
// error's text names the field and the rule it broke.
var ErrInvalid = errors.New("principal: invalid principal")

// invalidError is an error of New: the field and the rule it broke.
type invalidError struct{ field, rule string }

func (e *invalidError) Error() string {
	return "principal: invalid principal: " + e.field + " " + e.rule
}

// Is reports whether target is [ErrInvalid].
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// New returns p checked and normalised: its scopes sorted and without
// duplicates (in a slice of its own when they were not; p's is never
// modified). It returns an error matching ErrInvalid, naming the field
// and the rule, when p breaks the rules of [Principal]: an identifier
// that is empty where set, too long, not UTF-8 or holds a control
// character, a scope that is not an RFC 6749 scope-token, an issuer or
// audience with a control character, a malformed thumbprint — or when p
// names no caller at all: a principal needs a Subject, a ClientID or an
// Audience (a verified token always has the audience). The zero
// Principal is no caller: a middleware that has no caller leaves the
// request's context without a principal, and the request is anonymous.
func New(p Principal) (Principal, error) {
	if p.Subject == "" && p.ClientID == "" && p.Audience == "" {
		return Principal{}, &invalidError{"Subject, ClientID and Audience", "are all empty: the zero Principal is no caller (leave an anonymous request without one)"}
	}
	if p.Subject != "" {
		if rule := identifierRule(p.Subject); rule != "" {
			return Principal{}, &invalidError{"Subject", rule}
		}
	}
	if p.ClientID != "" {
		if rule := identifierRule(p.ClientID); rule != "" {
			return Principal{}, &invalidError{"ClientID", rule}
		}
	}
	if p.DPoPThumbprint != "" && !validThumbprint(p.DPoPThumbprint) {
		return Principal{}, &invalidError{"DPoPThumbprint", "is not the unpadded base64url text of a SHA-256 digest"}
	}
	if !noControl(p.Audience) {
		return Principal{}, &invalidError{"Audience", "is not UTF-8 or holds a control character"}
	}
	if !noControl(p.Issuer) {
		return Principal{}, &invalidError{"Issuer", "is not UTF-8 or holds a control character"}
	}
	for i, s := range p.Scopes {
		if !ValidScope(s) {
			return Principal{}, &invalidError{"Scopes[" + strconv.Itoa(i) + "]", "is not an RFC 6749 scope-token (%x21 / %x23-5B / %x5D-7E, at least one)"}
		}
	}
	if !strictlySorted(p.Scopes) {
		p.Scopes = slices.Compact(slices.Sorted(slices.Values(p.Scopes)))
	}
	if len(p.Scopes) == 0 {
		p.Scopes = nil
	}
	return p, nil
}

// key is the context key of a Principal. It is unexported, so no other
// package can read or overwrite the value except through this API.
type key struct{}

// NewContext returns a copy of ctx that carries p as made by [New], or
// ErrInvalid (and ctx unchanged) when p breaks the rules. Authentication
// middleware calls it once the caller is known: authn's, or a service's
// own, whose principals then obey exactly the rules of a verifier's. Every
// piece of this kit after it uses that principal instead of authenticating
// again. Tests call it to fake an authenticated request.
func NewContext(ctx context.Context, p Principal) (context.Context, error) {
	p, err := New(p)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, key{}, p), nil
}

// FromContext returns the Principal stored in ctx by [NewContext], and
// whether there is one.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(key{}).(Principal)
	return p, ok
}

// HasScopes reports whether p was granted every scope in required.
func (p Principal) HasScopes(required ...string) bool {
	for _, s := range required {
		if !slices.Contains(p.Scopes, s) {
			return false
		}
	}
	return true
}

// Key returns the identity key of p's subject, [SubjectKey](p.Issuer,
// p.Subject): "" when p has no subject. Everything the kit keys on a
// user uses it (grants, notification subjects, rate limits, audit
// records), and an application keys its per-user data on it too.
func (p Principal) Key() string { return SubjectKey(p.Issuer, p.Subject) }

// ClientKey is [Principal.Key] for the client id: the key of records
// owned by the client application. "" when p has no client id.
func (p Principal) ClientKey() string { return SubjectKey(p.Issuer, p.ClientID) }

// SessionKey returns the identity a session or an event stream is bound
// to: issuer, subject, client and audience. The same subject through
// another client or for another resource is someone else; the scopes and
// the DPoP key are not part of it, so a session goes on with a refreshed
// credential of the same identity.
func (p Principal) SessionKey() string {
	return p.Audience + "\x00" + p.Issuer + "\x00" + p.ClientID + "\x00" + p.Subject
}

// AppendBinding appends to dst the identity a paginated traversal is
// bound to — issuer, client, subject, scopes (as a set) and audience —
// in an unambiguous encoding (each part length-prefixed), and returns the
// extended slice. Cursors seal it as associated data: another caller,
// other scopes or another audience cannot continue them.
func (p *Principal) AppendBinding(dst []byte) []byte {
	str := func(s string) {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	str(p.Issuer)
	str(p.ClientID)
	str(p.Subject)
	scopes := p.Scopes
	if !strictlySorted(scopes) { // a set: one encoding whatever the order
		scopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	}
	dst = binary.AppendUvarint(dst, uint64(len(scopes)))
	for _, s := range scopes {
		str(s)
	}
	str(p.Audience)
	return dst
}

// SubjectKey returns the identity key of subject as issued by issuer:
// subject itself when issuer is empty (one trusted issuer), otherwise
// issuer + "#" + subject, and "" for an empty subject. Issuers trusted
// together are URLs without a fragment, so they contain no "#": the first
// "#" always separates the two parts, and no subject of one issuer can
// spell the key of another issuer's subject. An application publishing a
// change to another user (a document shared with bob) calls
// SubjectKey(issuer, "bob") with that user's issuer.
func SubjectKey(issuer, subject string) string {
	if subject == "" {
		return ""
	}
	if issuer == "" {
		return subject
	}
	return issuer + "#" + subject
}

// ErrUnauthenticated means there is no authenticated caller where one is
// needed: the request offered no credentials, or an operation that needs
// a caller (a private listing, a protected read, a stream) has none. It is
// answered with HTTP 401 and a challenge (authn's WriteError).
var ErrUnauthenticated = errors.New("principal: no authenticated caller")

// ScopeError reports that the caller lacks scopes: an HTTP 403 with an
// insufficient_scope challenge naming Required (authn's WriteError).
type ScopeError struct {
	// Required are the scopes that would let the caller through.
	Required []string
}

// ErrInsufficientScope is matched by every [*ScopeError].
var ErrInsufficientScope = errors.New("principal: insufficient scope")

func (e *ScopeError) Error() string {
	return "principal: insufficient scope: need " + strings.Join(e.Required, " ")
}

// Is reports whether target is [ErrInsufficientScope].
func (e *ScopeError) Is(target error) bool { return target == ErrInsufficientScope }

// ValidIdentifier reports whether s may be a Subject or ClientID: valid
// UTF-8, non-empty, at most MaxIdentifierLen UTF-16 code units, without
// control characters.
func ValidIdentifier(s string) bool { return identifierRule(s) == "" }

// identifierRule returns the rule of ValidIdentifier that s breaks, or ""
// when s is a valid identifier.
func identifierRule(s string) string {
	const tooLong = "is longer than 256 UTF-16 code units"
	if s == "" {
		return "is empty"
	}
	if len(s) > 4*MaxIdentifierLen {
		return tooLong
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return "holds a control character"
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "is not valid UTF-8"
			}
			if unicode.IsControl(r) {
				return "holds a control character"
			}
			if r >= 0x10000 {
				n++ // a surrogate pair in UTF-16
			}
			i += size
		}
		if n++; n > MaxIdentifierLen {
			return tooLong
		}
	}
	return ""
}

// ValidScope reports whether s is an RFC 6749 scope-token: one or more of
// %x21 / %x23-5B / %x5D-7E.
func ValidScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validThumbprint: the unpadded base64url text of a SHA-256 digest.
func validThumbprint(s string) bool {
	if len(s) != 43 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	// The last character carries 4 bits of the digest and 2 zero bits.
	return strings.IndexByte("AEIMQUYcgkosw048", s[42]) >= 0
}

// noControl reports whether s has no ASCII control character and is
// valid UTF-8.
func noControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// strictlySorted reports whether s is sorted without duplicates.
func strictlySorted(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

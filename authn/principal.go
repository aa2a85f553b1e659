package authn

import (
	"context"
	"slices"
	"time"
)

// Principal is the authenticated caller of a request: everything a handler
// learns about the bearer token, and nothing more. It never holds the raw
// token or claims other than these.
//
// Subject identifies the user (the token's "sub" claim, validated: when
// present it is non-empty, at most 256 characters counted as UTF-16 code
// units, without control characters). It is optional: a client-credentials
// or service token has none, and Subject is then empty; inventory templates
// owned by the subject are never called for such a caller. ClientID
// identifies the client application, which many users share: data owned by
// a user must be keyed on Subject, never on ClientID.
type Principal struct {
	// Subject is the stable identifier of the user the token was issued
	// to; empty for a token without a subject.
	Subject string
	// ClientID is the OAuth client (application) the token was issued to.
	// It may be empty when the issuer does not say.
	ClientID string
	// Scopes are the granted scopes, sorted and de-duplicated.
	Scopes []string
	// Audience is the resource the token was issued for (RFC 8707): the
	// configured canonical resource URI.
	Audience string
	// Expires is when the credential stops being valid; zero when the
	// verifier does not say. Long-lived responses, such as event streams,
	// end then.
	Expires time.Time
	// Issuer is the authorization server that issued the token, set by a
	// verifier that trusts several ([MultiIssuerVerifier]): it qualifies
	// Subject and ClientID in every identity key ([Principal.Key]), so that
	// equal subjects of different issuers are different callers. A
	// verifier that trusts one issuer ([JWTVerifier],
	// [IntrospectionVerifier]) leaves it empty, and the subject alone is
	// the key. A custom Verifier that trusts several issuers must set it on
	// every principal.
	Issuer string
	// DPoPThumbprint is the RFC 7638 JWK SHA-256 thumbprint (base64url)
	// of the key the token is bound to (RFC 9449: the "cnf" claim's "jkt",
	// or the introspection response's); empty for a bearer token. The
	// [Authenticator] accepts a bound token only with the DPoP scheme and a
	// valid proof signed by that key, on every request. It is not part of
	// the caller's identity: see [Principal.Key].
	DPoPThumbprint string
}

// Key returns the identity key of p's subject: [SubjectKey](p.Issuer,
// p.Subject), "" when p has no subject. Everything this kit keys on a
// caller's identity uses it (inventory grants and Subjects policies, the
// notification hub's subjects, session and stream owners, with the client
// id and audience, and cursor bindings); an application keys its own
// per-user data on it too, and publishes notifications to it. With one
// trusted issuer it is the bare subject, so single-issuer applications
// keep using subjects as they are.
func (p Principal) Key() string { return SubjectKey(p.Issuer, p.Subject) }

// ClientKey is [Principal.Key] for the client id: the key of a
// client-owned inventory. "" when p has no client id.
func (p Principal) ClientKey() string { return SubjectKey(p.Issuer, p.ClientID) }

// SubjectKey returns the identity key of subject as issued by issuer:
// subject itself when issuer is empty (one trusted issuer), otherwise
// issuer + "#" + subject, and "" for an empty subject. Issuers trusted
// together are URLs without a fragment ([MultiIssuerOptions]), so they
// contain no "#", and the first "#" always separates the two parts: no
// subject of one issuer can spell the key of another issuer's subject.
// An application publishing a change to another user (a document shared
// with bob) calls SubjectKey(issuer, "bob") with that user's issuer,
// usually the caller's own (Principal.Issuer).
func SubjectKey(issuer, subject string) string {
	if subject == "" {
		return ""
	}
	if issuer == "" {
		return subject
	}
	return issuer + "#" + subject
}

// HasScopes reports whether p was granted every scope in required.
// Scopes must be sorted, as they are in every Principal this package makes.
func (p Principal) HasScopes(required ...string) bool {
	for _, s := range required {
		if _, ok := slices.BinarySearch(p.Scopes, s); !ok {
			return false
		}
	}
	return true
}

// principalKey is the context key for a Principal. It is unexported, so no
// other package can read or overwrite the value except through this API.
type principalKey struct{}

// NewContext returns a copy of ctx that carries p. The middleware calls it
// after authentication succeeds; a service whose own middleware
// authenticates calls it too, and every piece of this kit after it
// ([Authenticator.Authenticate] included) then uses p instead of
// authenticating again. Tests call it to fake an authenticated request.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the Principal stored in ctx, and whether one was present.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

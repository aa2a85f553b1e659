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

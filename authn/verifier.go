package authn

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Verifier checks a bearer token. It returns the token's principal and its
// expiry (zero if unknown), or an error: [ErrInvalidToken] (→ 401) for a
// token that is not acceptable, [ErrUnavailable] (→ 503 with Retry-After)
// when it cannot be checked now. Any other error becomes a generic 500.
//
// A Verifier must check that the token was issued for this resource (MCP
// requires audience validation) and must set principal.Principal.Audience to the
// Authenticator's resource; [Authenticator] rejects principals whose
// Audience differs or whose Subject breaks the rules in [principal.Principal].
// Implementations must be safe for concurrent use and must not keep or log
// the token.
type Verifier interface {
	Verify(ctx context.Context, token string) (principal.Principal, time.Time, error)
}

// VerifierFunc adapts a function to the [Verifier] interface.
type VerifierFunc func(ctx context.Context, token string) (principal.Principal, time.Time, error)

var errNilVerifierFunc = &misuseError{"authn: nil VerifierFunc"}

// Verify calls f(ctx, token).
func (f VerifierFunc) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	if f == nil {
		return principal.Principal{}, time.Time{}, errNilVerifierFunc
	}
	return f(ctx, token)
}

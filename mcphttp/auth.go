package mcphttp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/principal"
)

// Authenticator authenticates the requests of an endpoint and answers its
// refusals: *authn.Authenticator is one (bearer tokens, DPoP, RFC 9728
// challenges). The endpoint knows nothing of tokens; it only asks.
type Authenticator interface {
	// Authenticate returns the caller of r: the principal an earlier
	// middleware put in the context, else the one r's credentials prove.
	// It returns principal.ErrUnauthenticated when r offers no
	// credentials (the caller is anonymous), and another error when they
	// do not prove a caller.
	Authenticate(r *http.Request) (principal.Principal, error)
	// WriteError answers a refusal: principal.ErrUnauthenticated (401), a
	// *principal.ScopeError (403), or an error of Authenticate.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
	// StatusOf returns the HTTP status WriteError answers err with.
	StatusOf(err error) int
}

// contextAuth is the Authenticator of an endpoint without one: the
// service's own middleware authenticates and puts the principal in the
// context (principal.NewContext), or the caller is anonymous. A request
// that offers credentials (an Authorization header) without a principal
// in the context is refused, never downgraded to anonymous: the service's
// middleware did not accept them. Its
// challenges are plain RFC 6750 ones — Bearer, and insufficient_scope with
// the scopes that would help — without a resource_metadata URL that no
// one serves.
type contextAuth struct{}

// errNotAccepted: credentials the service's middleware did not accept.
var errNotAccepted = errors.New("mcphttp: credentials not accepted")

func (contextAuth) Authenticate(r *http.Request) (principal.Principal, error) {
	if p, ok := principal.FromContext(r.Context()); ok {
		return p, nil
	}
	if len(r.Header["Authorization"]) > 0 {
		return principal.Principal{}, errNotAccepted
	}
	return principal.Principal{}, principal.ErrUnauthenticated
}

func (contextAuth) StatusOf(err error) int {
	if errors.Is(err, principal.ErrInsufficientScope) {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

func (a contextAuth) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h := w.Header()
	status := a.StatusOf(err)
	var se *principal.ScopeError
	if errors.As(err, &se) {
		var scopes []string
		for _, s := range se.Required {
			if principal.ValidScope(s) {
				scopes = append(scopes, s)
			}
		}
		h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(scopes, " ")+`"`)
	} else if errors.Is(err, errNotAccepted) {
		h.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	} else {
		h.Set("WWW-Authenticate", "Bearer")
	}
	h.Set("Cache-Control", "no-store")
	httpheader.AppendVary(h, "Authorization")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusForbidden {
		_, _ = w.Write([]byte(`{"error":"insufficient_scope"}`))
		return
	}
	_, _ = w.Write([]byte(`{"error":"unauthorized"}`))
}

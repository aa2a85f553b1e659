package authn

import (
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/authn/internal/httpauth"
	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/principal"
)

// authorizationSlack is what an Authorization header may hold beside the
// token: the scheme and the spaces after it.
const authorizationSlack = 64

// BearerToken extracts the bearer token of r as RFC 6750 §2.1 defines it,
// and only that way: one "Authorization: Bearer <b64token>" header, the
// scheme matched case-insensitively, one or more spaces before the token.
//
// Errors:
//   - [principal.ErrUnauthenticated]: no Authorization header, or one with another
//     scheme (Basic, DPoP, ...): no bearer credentials were offered;
//   - [ErrInvalidRequest]: several Authorization headers; a header longer
//     than [DefaultMaxTokenBytes] allows; "Bearer" without a well-formed b64token
//     (spaces or other characters inside, "Bearer" twice); an
//     "access_token" query parameter (forbidden by OAuth 2.1 and MCP, with
//     or without a header); and, when no Authorization header is present, a
//     body of type application/x-www-form-urlencoded, since the form-body
//     method of RFC 6750 §2.2 is not supported and the body is deliberately
//     not read to find out whether it carries a token.
//
// It allocates nothing: the token is a substring of the header.
func BearerToken(r *http.Request) (string, error) { return bearerToken(r, DefaultMaxTokenBytes) }

// bearerToken is BearerToken for tokens of at most max bytes.
func bearerToken(r *http.Request, max int) (string, error) {
	_, tok, err := credentials(r, max, false)
	return tok, err
}

// authScheme is the scheme a request presents its token with.
type authScheme uint8

const (
	schemeBearer authScheme = iota // Authorization: Bearer (RFC 6750)
	schemeDPoP                     // Authorization: DPoP (RFC 9449 §7.1)
)

// credentials is bearerToken that also accepts, when dpop is set,
// "Authorization: DPoP <token>" (the token68 of RFC 9449 §7.1 is the
// b64token of RFC 6750), with the same rules for the header, the query and
// the form body. Without dpop, a DPoP header is another scheme
// (principal.ErrUnauthenticated), as before DPoP support.
func credentials(r *http.Request, max int, dpop bool) (authScheme, string, error) {
	if r.URL != nil && httpauth.QueryHasAccessToken(r.URL.RawQuery) {
		return 0, "", ErrInvalidRequest
	}
	values := r.Header["Authorization"]
	switch len(values) {
	case 0:
		if httpauth.IsFormBody(r.Header.Get("Content-Type")) {
			return 0, "", ErrInvalidRequest
		}
		return 0, "", principal.ErrUnauthenticated
	case 1:
	default:
		return 0, "", ErrInvalidRequest
	}
	h := values[0]
	if dpop && strings.EqualFold(strings.TrimRight(h, " "), "DPoP") {
		return schemeDPoP, "", ErrInvalidRequest // "DPoP" alone, as "Bearer" alone
	}
	if dpop && len(h) >= len("DPoP ") && strings.EqualFold(h[:len("DPoP")], "DPoP") && h[len("DPoP")] == ' ' {
		tok, err := parseScheme(h, "DPoP", max)
		return schemeDPoP, tok, err
	}
	tok, err := parseScheme(h, "Bearer", max)
	return schemeBearer, tok, err
}

// parseBearer parses one Authorization header value.
func parseBearer(h string, max int) (string, error) { return parseScheme(h, "Bearer", max) }

// parseScheme parses one Authorization header value of the scheme given.
func parseScheme(h, scheme string, max int) (string, error) {
	if len(h) > max+authorizationSlack {
		return "", ErrInvalidRequest
	}
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		if h == "" {
			return "", ErrInvalidRequest
		}
		return "", principal.ErrUnauthenticated // another scheme
	}
	rest := h[len(scheme):]
	if rest == "" {
		return "", ErrInvalidRequest // the scheme alone
	}
	if rest[0] != ' ' {
		// "Bearerx": not the Bearer scheme; a token68-style scheme whose name
		// starts with "Bearer" (for example "BearerToken ...") is another scheme.
		if httpheader.IsTchar(rest[0]) {
			return "", principal.ErrUnauthenticated
		}
		return "", ErrInvalidRequest
	}
	i := 0
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	tok := rest[i:]
	if len(tok) > max || !httpauth.ValidB64Token(tok) {
		return "", ErrInvalidRequest
	}
	return tok, nil
}

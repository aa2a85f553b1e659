// Package httpauth holds the HTTP authentication syntax authn uses: the
// WWW-Authenticate challenges (RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1)
// and the b64token, token and form-body rules of RFC 6750 §2.
package httpauth

import (
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/principal"
)

// Challenge values are emitted as quoted-strings and are checked against
// RFC 6750's character rules, which exclude '"' and '\', so no escaping
// is ever needed and a value that breaks the rules is left out rather than
// mangled.

// Param is one auth-param of a challenge.
type Param struct{ Name, Value string }

// ValidParamValue applies RFC 6750 §3 to a value of the named attribute:
// error and error_description use %x20-21 / %x23-5B / %x5D-7E; scope is
// scope-tokens (%x21 / %x23-5B / %x5D-7E) separated by single spaces;
// URIs (error_uri, resource_metadata) use %x21 / %x23-5B / %x5D-7E. Empty
// values are not emitted.
func ValidParamValue(name, v string) bool {
	if v == "" {
		return false
	}
	switch name {
	case "error", "error_description":
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	case "scope", "algs": // space-separated tokens
		start := 0
		for i := 0; i <= len(v); i++ {
			if i == len(v) || v[i] == ' ' {
				if !principal.ValidScope(v[start:i]) {
					return false
				}
				start = i + 1
			}
		}
		return true
	default:
		return principal.ValidScope(v) // same character class as a URI here
	}
}

// AppendChallenge appends `scheme name="value", ...` to dst (Bearer, or
// DPoP: RFC 9449 §7.1 gives DPoP the same parameters, and algs), leaving
// out params whose value is empty or breaks the character rules, and
// reports how many params were written.
func AppendChallenge(dst []byte, scheme string, params ...Param) ([]byte, int) {
	dst = append(dst, scheme...)
	n := 0
	for _, p := range params {
		if !ValidParamValue(p.Name, p.Value) {
			continue
		}
		if n == 0 {
			dst = append(dst, ' ')
		} else {
			dst = append(dst, ", "...)
		}
		dst = append(dst, p.Name...)
		dst = append(dst, '=', '"')
		dst = append(dst, p.Value...)
		dst = append(dst, '"')
		n++
	}
	return dst, n
}

// Challenge is AppendChallenge as a string.
func Challenge(scheme string, params ...Param) string {
	b, _ := AppendChallenge(make([]byte, 0, 192), scheme, params...)
	return string(b)
}

// b64tokenChar marks the b64token alphabet of RFC 6750 §2.1 (without the
// trailing "=" padding, handled separately).
var b64tokenChar = func() (t [256]bool) {
	for c := range t {
		b := byte(c)
		t[c] = b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' ||
			b == '-' || b == '.' || b == '_' || b == '~' || b == '+' || b == '/'
	}
	return t
}()

// ValidB64Token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
func ValidB64Token(s string) bool {
	i := 0
	for i < len(s) && b64tokenChar[s[i]] {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return i == len(s)
}

// QueryHasAccessToken reports whether the raw query has a parameter named
// access_token, in any percent-encoding, without parsing the whole query.
func QueryHasAccessToken(q string) bool {
	for q != "" {
		var part string
		part, q, _ = strings.Cut(q, "&")
		name, _, _ := strings.Cut(part, "=")
		if name == "access_token" {
			return true
		}
		if len(name) <= 3*len("access_token") && strings.ContainsAny(name, "%+") {
			if n, err := url.QueryUnescape(name); err == nil && n == "access_token" {
				return true
			}
		}
	}
	return false
}

// IsFormBody reports whether a Content-Type is application/x-www-form-urlencoded.
func IsFormBody(ct string) bool {
	const form = "application/x-www-form-urlencoded"
	ct = strings.TrimLeft(ct, " \t")
	if len(ct) < len(form) || !strings.EqualFold(ct[:len(form)], form) {
		return false
	}
	rest := strings.TrimLeft(ct[len(form):], " \t")
	return rest == "" || rest[0] == ';'
}

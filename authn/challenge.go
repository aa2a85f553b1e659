package authn

import "github.com/mcpkit/mcpkit/principal"

// WWW-Authenticate challenges (RFC 6750 §3, RFC 9728 §5.1). Values are
// emitted as quoted-strings and are checked against RFC 6750's character
// rules, which exclude '"' and '\', so no escaping is ever needed and a
// value that breaks the rules is left out rather than mangled.

// authParam is one auth-param of a challenge.
type authParam struct{ name, value string }

// Fixed, generic descriptions: they never depend on the request.
const (
	descInvalidToken   = "The access token is invalid or expired"
	descInvalidRequest = "The request is malformed"
	descScope          = "The access token lacks a required scope"
	descDPoPProof      = "The DPoP proof is invalid"
	descDPoPNonce      = "A DPoP nonce from this server is required"
)

// validParamValue applies RFC 6750 §3 to a value of the named attribute:
// error and error_description use %x20-21 / %x23-5B / %x5D-7E; scope is
// scope-tokens (%x21 / %x23-5B / %x5D-7E) separated by single spaces;
// URIs (error_uri, resource_metadata) use %x21 / %x23-5B / %x5D-7E. Empty
// values are not emitted.
func validParamValue(name, v string) bool {
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

// appendChallenge appends `Bearer name="value", ...` to dst, leaving out
// params whose value is empty or breaks the character rules, and reports
// how many params were written.
func appendChallenge(dst []byte, params ...authParam) ([]byte, int) {
	return appendSchemeChallenge(dst, "Bearer", params...)
}

// appendSchemeChallenge is appendChallenge for the scheme given (Bearer or
// DPoP: RFC 9449 §7.1 gives DPoP the same parameters, and algs).
func appendSchemeChallenge(dst []byte, scheme string, params ...authParam) ([]byte, int) {
	dst = append(dst, scheme...)
	n := 0
	for _, p := range params {
		if !validParamValue(p.name, p.value) {
			continue
		}
		if n == 0 {
			dst = append(dst, ' ')
		} else {
			dst = append(dst, ", "...)
		}
		dst = append(dst, p.name...)
		dst = append(dst, '=', '"')
		dst = append(dst, p.value...)
		dst = append(dst, '"')
		n++
	}
	return dst, n
}

func challenge(params ...authParam) string {
	b, _ := appendChallenge(make([]byte, 0, 192), params...)
	return string(b)
}

func dpopChallenge(params ...authParam) string {
	b, _ := appendSchemeChallenge(make([]byte, 0, 192), "DPoP", params...)
	return string(b)
}

package authn

import "github.com/mcpkit/mcpkit/authn/internal/httpauth"

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

// validParamValue applies RFC 6750 §3 to a value of the named attribute.
func validParamValue(name, v string) bool { return httpauth.ValidParamValue(name, v) }

func challenge(params ...authParam) string { return render("Bearer", params) }

func dpopChallenge(params ...authParam) string { return render("DPoP", params) }

func render(scheme string, params []authParam) string {
	ps := make([]httpauth.Param, len(params))
	for i, p := range params {
		ps[i] = httpauth.Param{Name: p.name, Value: p.value}
	}
	return httpauth.Challenge(scheme, ps...)
}

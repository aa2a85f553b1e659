package authn

import (
	"time"
)

// refusalLogInterval is the interval over which the INFO lines about
// refused credentials are aggregated, per reason.
const refusalLogInterval = time.Minute

// refusalHints tell an operator what to look at for each reason (issue
// 29: a mismatched resource or a token typed JWT was logged only at
// DEBUG). README.md's "Troubleshooting: why tokens are refused" has the
// same list.
var refusalHints = map[string]string{
	"malformed":            "not a compact JWS of the allowed size (or not a b64token)",
	"header":               "a forbidden or ill-typed JOSE header parameter (crit, jku, jwk, x5u, x5c, b64)",
	"alg":                  "the token's alg is not in JWTOptions.Algorithms, or does not fit the key",
	"typ":                  "typ is not at+jwt (RFC 9068); for a provider that types access tokens JWT see JWTOptions.AllowPlainJWTType",
	"kid":                  "no key with the token's kid in the issuer's JWK Set (JWTOptions.JWKSURL; a rotation is fetched within UnknownKeyCooldown)",
	"signature":            "the signature does not verify with the issuer's key (a forged token, or another issuer's)",
	"claims":               "a claim of the wrong type, duplicated, or invalid UTF-8",
	"iss":                  "iss is not JWTOptions.Issuer (compared exactly: mind a trailing slash)",
	"issuer_unknown":       "iss names no issuer of MultiIssuerOptions",
	"aud":                  "aud is not this resource (Options.Resource, or JWTOptions.Audience when the provider names the API otherwise)",
	"exp":                  "the token has expired (or has no exp); check the clocks (JWTOptions.Leeway)",
	"nbf":                  "nbf or iat is in the future; check the clocks (JWTOptions.Leeway)",
	"sub":                  "no subject claim, or one that breaks the principal rules (ClaimNames.Subject)",
	"client_id":            "the client id claim breaks the rules (ClaimNames.ClientID)",
	"scope":                "the scope claim breaks RFC 6749 §3.3 (ClaimNames.Scope)",
	"insufficient_scope":   "the token lacks a scope the method requires (403)",
	"inactive":             "introspection answered active=false",
	"verifier_result":      "the Verifier returned a principal for another audience, or with an unusable subject",
	"cnf":                  "cnf is not an object, or cnf.jkt is no thumbprint",
	"dpop_bound_as_bearer": "a DPoP-bound token was sent with the Bearer scheme",
	"unbound_as_dpop":      "a token without cnf.jkt was sent with the DPoP scheme",
	"bearer_refused":       "a Bearer token while dpop.Options.Mode is dpop.Required",
	"dpop_key_binding":     "the DPoP proof's key is not the token's cnf.jkt",
	"dpop_nonce":           "the DPoP proof lacks a valid server nonce (the client retries with DPoP-Nonce)",
	"invalid_token":        "the Verifier refused the token",
	"invalid_request":      "a malformed Authorization header, several, or a token in the query or form body",
	"throttled":            "too many refused credentials from this address (Options.Throttle)",
}

// refusalHint returns the hint of a reason; the DPoP proof reasons share
// one.
func refusalHint(reason string) string {
	if h, ok := refusalHints[reason]; ok {
		return h
	}
	if len(reason) > len("dpop_") && reason[:len("dpop_")] == "dpop_" {
		return "the DPoP proof was refused (see the reason: typ, alg, jwk, signature, htm, htu, iat, ath, replay, ...)"
	}
	return ""
}

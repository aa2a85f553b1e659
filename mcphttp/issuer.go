package mcphttp

import "github.com/mcpkit/mcpkit/principal"

// issuerOf returns the issuer of the token p came from, for rate keys and
// audit records (callers are issuer + subject: two issuers may reuse a
// subject): principal.Principal.Issuer, set by a verifier that trusts several
// issuers and empty with one. "" for nil.
func issuerOf(p *principal.Principal) string {
	if p == nil {
		return ""
	}
	return p.Issuer
}

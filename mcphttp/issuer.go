package mcphttp

import "github.com/mcpkit/mcpkit/authn"

// issuerOf returns the issuer of the token p came from, for rate keys and
// audit records (callers are issuer + subject: two issuers may reuse a
// subject). authn.Principal has no Issuer yet; it comes with the
// multi-issuer work, and then this returns p.Issuer.
func issuerOf(p *authn.Principal) string {
	return "" // ISSUER: return p.Issuer once authn.Principal has it
}

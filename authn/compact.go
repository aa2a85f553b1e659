package authn

// The compact-serialization pre-check and the JOSE header. Nothing here
// trusts jwx: the token's shape is checked before any decoding, and the
// header that decides the algorithm and key is the one this file parses.

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// header holds the JOSE header parameters the verifier acts on.
type header struct {
	alg, kid, typ string
	hasKid        bool // kid present (an empty kid is refused; an absent one selects the issuer's only key for alg)
	hasTyp        bool
}

// parseHeader decodes the protected header strictly. alg, kid and typ must
// be strings when present. Parameters that would make the verifier fetch
// or trust key material named by the token (jku, jwk, x5u, x5c), change how
// the payload is signed (b64, RFC 7797), demand extensions (crit) or belong
// to JWE (enc, zip) reject the token; other parameters are ignored.
func parseHeader(data []byte) (header, error) {
	var h header
	var bad error
	err := tokenJSON.Members(data, func(name []byte, v jsonstrict.Value) bool {
		var ok bool
		switch string(name) {
		case "alg":
			h.alg, ok = v.Str()
		case "kid":
			h.kid, ok = v.Str()
			h.hasKid = true
		case "typ":
			h.typ, ok = v.Str()
			h.hasTyp = true
		case "crit", "jku", "jwk", "x5u", "x5c", "b64", "enc", "zip":
			ok = false
		default:
			ok = true
		}
		if !ok {
			bad = errBadHeader
		}
		return ok
	})
	if bad != nil {
		return header{}, bad
	}
	if err != nil {
		return header{}, errMalformed
	}
	if h.alg == "" {
		return header{}, errAlg
	}
	return h, nil
}

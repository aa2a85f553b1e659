package authn

// The compact-serialization pre-check and the JOSE header. Nothing here
// trusts jwx: the token's shape is checked before any decoding, and the
// header that decides the algorithm and key is the one this file parses.

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// b64urlChar marks the base64url alphabet (RFC 4648 §5), the only bytes a
// compact JWS may contain besides its two dots.
var b64urlChar = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['-'], t['_'] = true, true
	return t
}()

// splitCompact checks that token is at most max bytes of
// base64url segments separated by exactly two dots, all three non-empty,
// and returns the positions of the dots. It looks at each byte once and
// allocates nothing, so "1 MiB of dots" costs nothing but the length check.
// JSON serializations, whitespace and padding all fail here.
func splitCompact(token string, max int) (d1, d2 int, ok bool) {
	if len(token) == 0 || len(token) > max {
		return 0, 0, false
	}
	d1, d2 = -1, -1
	for i := 0; i < len(token); i++ {
		c := token[i]
		if b64urlChar[c] {
			continue
		}
		if c != '.' {
			return 0, 0, false
		}
		switch {
		case d1 < 0:
			d1 = i
		case d2 < 0:
			d2 = i
		default:
			return 0, 0, false // a third dot
		}
	}
	if d1 <= 0 || d2 <= d1+1 || d2 >= len(token)-1 {
		return 0, 0, false
	}
	return d1, d2, true
}

// decodeSegment appends the strict base64url (no padding, zero trailing
// bits) decoding of seg to dst.
func decodeSegment(dst []byte, seg []byte) ([]byte, error) {
	return b64.AppendDecode(dst, seg)
}

// header holds the JOSE header parameters the verifier acts on.
type header struct {
	alg, kid, typ string
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

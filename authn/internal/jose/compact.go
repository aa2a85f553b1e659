// Package jose holds the JOSE and URL helpers that authn and authn/dpop
// share: the compact-serialization pre-check, strict base64url, the key
// families of the signature algorithms and the algorithm allowlist, the
// claim decoders of the strict JSON engine, the secure-URL rules, and the
// typed-nil check of the constructors.
// Nothing here trusts jwx.
package jose

import "encoding/base64"

// b64 is strict base64url without padding (zero trailing bits).
var b64 = base64.RawURLEncoding.Strict()

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

// SplitCompact checks that token is at most max bytes of
// base64url segments separated by exactly two dots, all three non-empty,
// and returns the positions of the dots. It looks at each byte once and
// allocates nothing, so "1 MiB of dots" costs nothing but the length check.
// JSON serializations, whitespace and padding all fail here.
func SplitCompact(token string, max int) (d1, d2 int, ok bool) {
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

// DecodeSegment appends the strict base64url (no padding, zero trailing
// bits) decoding of seg to dst.
func DecodeSegment(dst []byte, seg []byte) ([]byte, error) {
	return b64.AppendDecode(dst, seg)
}

// DecodeB64URL decodes strict base64url made of the base64url alphabet
// only: the decoder alone skips line breaks, which would give one key
// several encodings and so several thumbprints.
func DecodeB64URL(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !b64urlChar[s[i]] {
			return nil, false
		}
	}
	b, err := b64.DecodeString(s)
	return b, err == nil
}

package jose

import (
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// StringArray decodes an array whose elements are all strings.
func StringArray(v jsonstrict.Value) ([]string, bool) {
	if v.Kind() != jsonstrict.Array {
		return nil, false
	}
	out := []string{}
	ok := true
	_ = v.Elements(func(e jsonstrict.Value) bool {
		var s string
		s, ok = e.Str()
		out = append(out, s)
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// maxNumericDate is 9999-12-31T23:59:59Z: later "dates" are nonsense.
const maxNumericDate = 253402300799

// maxNumericDateText bounds the text of a NumericDate: enough for twelve
// digits of seconds, a fraction to the picosecond and an exponent.
const maxNumericDateText = 40

// NumericDate decodes an RFC 7519 NumericDate: a JSON number of seconds
// since the epoch, from 0 to year 9999. A fraction is allowed, as RFC 7519
// says (1700000000.5), and so is an exponent (1.7e9), read exactly as
// decimal digits, never through a float. The result is exact to the
// nanosecond: digits beyond the ninth of the fraction are dropped
// (truncated toward zero), so comparisons with the clock are precise.
// Anything else is rejected: not a number, a minus sign (also -0), a
// value past year 9999 (1e30), a text longer than 40 bytes, an exponent
// beyond ±30.
func NumericDate(v jsonstrict.Value) (time.Time, bool) {
	raw := v.Raw()
	if v.Kind() != jsonstrict.Number || len(raw) > maxNumericDateText || raw[0] == '-' {
		return time.Time{}, false
	}
	// digits: the integer and fraction digits; point: where the decimal
	// point goes in them once the exponent is applied.
	var digits [maxNumericDateText]byte
	n, point, ok := decimalDigits(raw, &digits)
	if !ok {
		return time.Time{}, false
	}
	var sec, nsec int64
	for j := 0; j < point; j++ {
		d := int64(0)
		if j < n {
			d = int64(digits[j] - '0')
		}
		sec = sec*10 + d
		if sec > maxNumericDate {
			return time.Time{}, false
		}
	}
	for j := point; j < point+9; j++ {
		d := int64(0)
		if 0 <= j && j < n {
			d = int64(digits[j] - '0')
		}
		nsec = nsec*10 + d
	}
	return time.Unix(sec, nsec), true
}

// decimalDigits copies the integer and fraction digits of the JSON number
// raw into digits and returns their count n and where the decimal point
// goes once the exponent is applied; false for an exponent beyond ±30.
func decimalDigits(raw []byte, digits *[maxNumericDateText]byte) (n, point int, ok bool) {
	i := 0
	for ; i < len(raw) && '0' <= raw[i] && raw[i] <= '9'; i++ {
		digits[n] = raw[i]
		n++
	}
	point = n
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && '0' <= raw[i] && raw[i] <= '9'; i++ {
			digits[n] = raw[i]
			n++
		}
	}
	if i == len(raw) {
		return n, point, true
	}
	exp, ok := exponent(raw[i+1:]) // after e or E (the grammar was checked by the engine)
	return n, point + exp, ok
}

// exponent reads a signed exponent of at most 30.
func exponent(s []byte) (int, bool) {
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	exp := 0
	for i := 0; i < len(s); i++ {
		exp = exp*10 + int(s[i]-'0')
		if exp > 30 {
			return 0, false
		}
	}
	if neg {
		exp = -exp
	}
	return exp, true
}

// ConfirmationThumbprint reads a "cnf" claim (RFC 7800): an object whose
// "jkt" member, when present, is the RFC 7638 thumbprint of the key a
// DPoP-bound token is bound to (RFC 9449 §6). It returns "" for a cnf
// without jkt (other confirmation methods, such as mTLS's x5t#S256, are
// the TLS layer's to check). A cnf that is not an object, or a jkt that is
// not a non-empty string of at most 256 bytes, is refused: a binding that
// cannot be read must not turn the token into a bearer one. A jkt string
// that is no SHA-256 thumbprint (43 base64url characters) is returned as
// it is: the token is bound, so no Bearer request can use it, and no
// proof key has that thumbprint, so no DPoP request can either (the
// Authenticator refuses it outright).
func ConfirmationThumbprint(cnf jsonstrict.Value) (string, bool) {
	if cnf.Kind() != jsonstrict.Object {
		return "", false
	}
	var jkt jsonstrict.Value
	_ = cnf.Members(func(name []byte, v jsonstrict.Value) bool {
		if string(name) == "jkt" {
			jkt = v
		}
		return true
	})
	if jkt.Kind() == jsonstrict.None {
		return "", true
	}
	s, ok := jkt.Str()
	if !ok || s == "" || len(s) > 256 {
		return "", false
	}
	return s, true
}

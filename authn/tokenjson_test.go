package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// Token JSON follows the engine's rules, with authn's bounds: the claims
// reader rejects everything the engine rejects (duplicates and case
// variants at any depth, invalid UTF-8, lone surrogates, trailing data),
// nesting beyond 32 and objects of more than 512 members.
func TestTokenJSONStrictness(t *testing.T) {
	r, err := newClaimRules(ClaimNames{}, "", testResource, 0, false)
	require.NoError(t, err)
	valid := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+10,"b":"x","c":true,"d":false,"e":null,"f":[],"g":{},"h":[1,"2",[3],{"i":4}]}`,
		`{"\u00e9":"\ud83d\ude00"}`, `{"a":"\"\\\/\b\f\n\r\t"}`, "{\n\"a\"\t:\r1}", `{"a":{"a":1},"b":{"a":1}}`,
		`{"sub":"a","subs":"b","su":"c"}`,
		`{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`, // depth 32
		`{` + strings.TrimPrefix(manyMembers(512), ",") + `}`,
	}
	invalid := []string{
		``, ` `, `[]`, `"a"`, `1`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1}{}`, `{"a":1} x`, `{'a':1}`,
		`{a:1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud800\u0041"}`, "{\"a\":\"\x01\"}",
		"{\"a\":\"\xff\"}", `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"a":1,"a":2}}`, `{"a":[1,]}`, `{"a":[,1]}`,
		`{"a":NaN}`, `{"a":Infinity}`, "\ufeff{}", `{"a":1}` + "\x00",
		`{"a":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`, // depth 33
		`{` + strings.TrimPrefix(manyMembers(513), ",") + `}`,
		`{"x":{` + strings.TrimPrefix(manyMembers(513), ",") + `}}`, // at any depth
		// A27: case variants are duplicates, at any depth.
		`{"sub":"alice","SUB":"admin"}`, `{"aud":"a","Aud":"b"}`, `{"exp":1,"eXp":2}`,
		`{"scope":"a","ſcope":"admin"}`, `{"x":[{"kid":1,"KID":2}]}`, `{"iss":"a","\u0049SS":"b"}`,
	}
	for _, s := range valid {
		var cv claimValues
		assert.NoError(t, r.read([]byte(s), &cv), "%q", s)
		assert.True(t, json.Valid([]byte(s)), "%q", s)
		_, err := parseHeader([]byte(s))
		assert.NotErrorIs(t, err, errMalformed, "%q", s)
	}
	for _, s := range invalid {
		var cv claimValues
		assert.ErrorIs(t, r.read([]byte(s), &cv), errClaims, "%q", s)
		_, err := parseHeader([]byte(s))
		assert.Error(t, err, "%q", s)
	}
	// Names are exact: a lone case variant is just another claim.
	var cv claimValues
	require.NoError(t, r.read([]byte(`{"Sub":"admin","AUD":"`+testResource+`"}`), &cv))
	assert.Equal(t, jsonstrict.None, cv.v[slotSub].Kind())
	assert.Equal(t, jsonstrict.None, cv.v[slotAud].Kind())
	assert.True(t, cv.subVariant, "noted: a lone case variant of the subject claim is refused by check")
}

func TestNumericDate(t *testing.T) {
	for raw, want := range map[string]time.Time{
		"0":                         time.Unix(0, 0),
		"1":                         time.Unix(1, 0),
		"1800000000":                time.Unix(1800000000, 0),
		"253402300799":              time.Unix(253402300799, 0),
		"1700000000.5":              time.Unix(1700000000, 500_000_000),
		"1700000000.000000001":      time.Unix(1700000000, 1),
		"1700000000.9999999999":     time.Unix(1700000000, 999_999_999), // truncated to the nanosecond
		"1700000000.0":              time.Unix(1700000000, 0),
		"0.5":                       time.Unix(0, 500_000_000),
		"1.7e9":                     time.Unix(1700000000, 0),
		"1.7E+9":                    time.Unix(1700000000, 0),
		"17000000005e-1":            time.Unix(1700000000, 500_000_000),
		"1700000000123e-3":          time.Unix(1700000000, 123_000_000),
		"0.00000000017e10":          time.Unix(1, 700_000_000),
		"5e-10":                     time.Unix(0, 0),
		"2.53402300799e11":          time.Unix(253402300799, 0),
		"253402300799.999999999":    time.Unix(253402300799, 999_999_999),
		"0e30":                      time.Unix(0, 0),
		"1800000000.12345678901234": time.Unix(1800000000, 123_456_789),
	} {
		v, err := jsonstrict.Parse([]byte(raw))
		require.NoError(t, err, raw)
		got, ok := jose.NumericDate(v)
		assert.True(t, ok, raw)
		assert.True(t, want.Equal(got), "%s: %v, want %v", raw, got, want)
	}
	for _, raw := range []string{
		"-1", "-0", "-0.5", "-1e3", // negative
		"253402300800", "9999999999999", "2.6e11", "253402300800.5", // past year 9999
		"1e30", "1e31", "1.8e400", "18e-400", "1e-31", // exponents out of range
		`"1"`, "null", "true", "[1]", `{"a":1}`, // not numbers
		"1800000000." + strings.Repeat("1", 30), // a text longer than 40 bytes
	} {
		v, err := jsonstrict.Parse([]byte(raw))
		require.NoError(t, err, raw)
		_, ok := jose.NumericDate(v)
		assert.False(t, ok, raw)
	}
	_, ok := jose.NumericDate(jsonstrict.Value{})
	assert.False(t, ok, "absent")
}

// Issue 11: fractional exp, nbf and iat (RFC 7519 §2 allows them) are
// accepted in signed tokens and compared with the clock to the
// nanosecond, in both verifiers.
func TestFractionalNumericDates(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, nil)
	now := e.clock.Now() // a whole second
	leeway := 60 * time.Second
	iss, _ := json.Marshal(e.is.ID())
	aud, _ := json.Marshal(testResource)
	date := func(t time.Time) string { return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()) }
	for _, tc := range []struct {
		name, claims string
		want         error
		exp          time.Time
	}{
		{"exp with a fraction", `"exp":` + date(now.Add(time.Hour+500*time.Millisecond)), nil, now.Add(time.Hour + 500*time.Millisecond)},
		{"exp as an exponent", `"exp":1.8000036e9`, nil, time.Unix(1800003600, 0)},
		{"exp half a second inside the leeway", `"exp":` + date(now.Add(-leeway+500*time.Millisecond)), nil, now.Add(-leeway + 500*time.Millisecond)},
		{"exp one nanosecond inside the leeway", `"exp":` + date(now.Add(-leeway+time.Nanosecond)), nil, now.Add(-leeway + time.Nanosecond)},
		{"exp exactly at the leeway", `"exp":` + date(now.Add(-leeway)), errExpired, time.Time{}},
		{"exp half a second past the leeway", `"exp":` + date(now.Add(-leeway-500*time.Millisecond)), errExpired, time.Time{}},
		{"nbf with a fraction, inside the leeway", `"exp":1800003600,"nbf":` + date(now.Add(leeway-time.Nanosecond)), nil, time.Unix(1800003600, 0)},
		{"nbf with a fraction, just past the leeway", `"exp":1800003600,"nbf":` + date(now.Add(leeway+time.Nanosecond)), errNotYet, time.Time{}},
		{"iat with a fraction", `"exp":1800003600,"iat":` + date(now.Add(-250*time.Millisecond)), nil, time.Unix(1800003600, 0)},
		{"iat just past the leeway", `"exp":1800003600,"iat":` + date(now.Add(leeway+time.Millisecond)), errNotYet, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := []byte(`{"iss":` + string(iss) + `,"aud":` + string(aud) + `,"sub":"alice",` + tc.claims + `}`)
			tok, err := e.is.SignRaw(testissuer.KidRS256, "", []byte(`{"alg":"RS256","kid":"rs256","typ":"at+jwt"}`), payload)
			require.NoError(t, err)
			p, exp, err := v.Verify(context.Background(), tok)
			if tc.want != nil {
				require.ErrorIs(t, err, ErrInvalidToken)
				assert.Equal(t, tc.want.(*tokenError).reason, rejectReason(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "alice", p.Subject)
			assert.True(t, tc.exp.Equal(exp), "expiry %v, want %v (to the nanosecond)", exp, tc.exp)

			// The introspection verifier reads the same claims the same way.
			r, err := newClaimRules(ClaimNames{}, "", testResource, 0, true)
			require.NoError(t, err)
			var cv claimValues
			require.NoError(t, r.read(append([]byte(`{"active":true,`), payload[1:]...), &cv))
			_, iexp, err := r.check(&cv, now)
			require.NoError(t, err)
			assert.True(t, tc.exp.Equal(iexp))
		})
	}
}

// FuzzTokenJSON fuzzes how authn reads token JSON with the engine: the
// claims reader and the header parser never panic and accept only what
// encoding/json finds valid, and every NumericDate agrees with exact
// rational arithmetic (math/big) truncated to the nanosecond.
func FuzzTokenJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":[1,{"b":"\u00e9"}]}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":1e5}`, `{"sub":"a","SUB":"b"}`,
		`{"exp":1700000000.5}`, `{"exp":1.7e9,"nbf":17e8,"iat":0.00000000017e10}`, `{"exp":253402300799.999999999}`,
		`{"exp":-0.5}`, `{"exp":1e30}`, `{"aud":["a","b"],"scope":"x y","scp":["z"]}`, `{"alg":"RS256","kid":"k","typ":"at+jwt"}`,
	} {
		f.Add([]byte(s))
	}
	r, err := newClaimRules(ClaimNames{}, "", testResource, 0, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cv claimValues
		err := r.read(data, &cv)
		_, herr := parseHeader(data)
		if err != nil {
			// The header parser rejects it too: as malformed, or for a bad
			// parameter it met before the JSON broke.
			assert.Error(t, herr, "the header parser and the claims reader agree on the JSON")
			return
		}
		require.True(t, json.Valid(data), "accepted invalid JSON %q", data)
		_, _, _ = r.check(&cv, time.Unix(1_800_000_000, 0))
		for _, slot := range []int{slotExp, slotNbf, slotIat} {
			v := cv.v[slot]
			got, ok := jose.NumericDate(v)
			want, wok := exactDate(v)
			assert.Equal(t, wok, ok, "%s", v.Raw())
			if ok && wok {
				assert.True(t, want.Equal(got), "%s: %v, want %v", v.Raw(), got, want)
			}
		}
		_, _ = jose.StringArray(cv.v[slotAud])
		_, _ = parseScopes(cv.v[slotFirstVar+maxClaimAlternates])
	})
}

// The bounds of jose.NumericDate: year 9999, and 40 bytes of text.
const (
	maxNumericDate     = 253402300799
	maxNumericDateText = 40
)

// exactDate is jose.NumericDate's rule computed with math/big: a number of at
// most 40 bytes, not negative, at most year 9999, exponent within ±30.
func exactDate(v jsonstrict.Value) (time.Time, bool) {
	raw := string(v.Raw())
	if v.Kind() != jsonstrict.Number || len(raw) > maxNumericDateText || strings.HasPrefix(raw, "-") {
		return time.Time{}, false
	}
	if i := strings.IndexAny(raw, "eE"); i >= 0 {
		var e big.Int
		if _, ok := e.SetString(strings.TrimPrefix(raw[i+1:], "+"), 10); !ok || e.CmpAbs(big.NewInt(30)) > 0 {
			return time.Time{}, false
		}
	}
	q, ok := new(big.Rat).SetString(raw)
	if !ok || q.Cmp(big.NewRat(maxNumericDate+1, 1)) >= 0 {
		return time.Time{}, false
	}
	ns := new(big.Int).Quo(new(big.Int).Mul(q.Num(), big.NewInt(1e9)), q.Denom()) // truncated
	sec, nsec := new(big.Int).QuoRem(ns, big.NewInt(1e9), new(big.Int))
	return time.Unix(sec.Int64(), nsec.Int64()), true
}

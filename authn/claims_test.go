package authn

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S3 / A9: leeway edges, ±1 s around the default 60 s and a configured one.
func TestLeewayEdges(t *testing.T) {
	for _, leeway := range []time.Duration{0, 10 * time.Second, 5 * time.Minute} {
		e := newEnv(t)
		v := e.verifier(t, func(o *JWTOptions) { o.Leeway = leeway })
		l := leeway
		if l == 0 {
			l = 60 * time.Second
		}
		now := e.clock.Now()
		cases := []struct {
			name string
			c    testissuer.Claims
			ok   bool
		}{
			{"exp = now - leeway + 1s", testissuer.Claims{Subject: "a", ExpiresAt: now.Add(-l + time.Second), IssuedAt: now.Add(-time.Hour)}, true},
			{"exp = now - leeway", testissuer.Claims{Subject: "a", ExpiresAt: now.Add(-l), IssuedAt: now.Add(-time.Hour)}, false},
			{"exp = now - leeway - 1s", testissuer.Claims{Subject: "a", ExpiresAt: now.Add(-l - time.Second), IssuedAt: now.Add(-time.Hour)}, false},
			{"nbf = now + leeway", testissuer.Claims{Subject: "a", NotBefore: now.Add(l)}, true},
			{"nbf = now + leeway - 1s", testissuer.Claims{Subject: "a", NotBefore: now.Add(l - time.Second)}, true},
			{"nbf = now + leeway + 1s", testissuer.Claims{Subject: "a", NotBefore: now.Add(l + time.Second)}, false},
			{"iat = now + leeway", testissuer.Claims{Subject: "a", IssuedAt: now.Add(l)}, true},
			{"iat = now + leeway + 1s", testissuer.Claims{Subject: "a", IssuedAt: now.Add(l + time.Second)}, false},
			{"iat long ago", testissuer.Claims{Subject: "a", IssuedAt: now.Add(-24 * time.Hour)}, true},
		}
		for _, tc := range cases {
			_, _, err := v.Verify(context.Background(), e.is.Token(t, tc.c))
			if tc.ok {
				assert.NoError(t, err, "leeway %v: %s", l, tc.name)
			} else {
				assert.ErrorIs(t, err, ErrInvalidToken, "leeway %v: %s", l, tc.name)
			}
		}
	}
}

func TestSubjectRules(t *testing.T) {
	// Lengths in UTF-16 code units, as the inventory and the seed count
	// them: an emoji is two.
	ok := []string{"a", "alice@example.com", "550e8400-e29b-41d4-a716-446655440000", "ユーザー", "x y", stringOf('é', 256), stringOf('😀', 128)}
	bad := []string{"", stringOf('a', 257), stringOf('é', 257), stringOf('😀', 129), "a\x00", "a\nb", "a\tb", "a\x7f", "a\u0085", "a\u009f", "\xff"}
	for _, s := range ok {
		assert.True(t, principal.ValidIdentifier(s), "%q", s)
	}
	for _, s := range bad {
		assert.False(t, principal.ValidIdentifier(s), "%q", s)
	}
}

func stringOf(r rune, n int) string {
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = r
	}
	return string(rs)
}

func TestScopeParsing(t *testing.T) {
	cases := []struct {
		raw  string
		want []string
		ok   bool
	}{
		{`"read write"`, []string{"read", "write"}, true},
		{`"write read write"`, []string{"read", "write"}, true},
		{`"  read   write "`, []string{"read", "write"}, true},
		{`""`, nil, true},
		{`[]`, nil, true},
		{`["b","a","a"]`, []string{"a", "b"}, true},
		{`"files:read mcp://x/y"`, []string{"files:read", "mcp://x/y"}, true},
		{`"read\twrite"`, nil, false},
		{`["a b"]`, nil, false},
		{`[""]`, nil, false},
		{`1`, nil, false},
		{`null`, nil, false},
		{`{"a":1}`, nil, false},
		{`"a\"b"`, nil, false},
	}
	for _, tc := range cases {
		var v jsonstrict.Value
		require.NoError(t, tokenJSON.Members([]byte(`{"s":`+tc.raw+`}`), func(_ []byte, jv jsonstrict.Value) bool { v = jv; return true }), tc.raw)
		got, ok := parseScopes(v)
		assert.Equal(t, tc.ok, ok, tc.raw)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.raw)
		}
	}
}

// Introspection-style rules: active must be literally true.
func TestClaimRulesActive(t *testing.T) {
	r, err := newClaimRules(ClaimNames{}, "", testResource, 0, true)
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	for raw, want := range map[string]error{
		`{"active":true,"aud":"` + testResource + `","sub":"a","exp":1800000100}`:         nil,
		`{"active":false,"aud":"` + testResource + `","sub":"a","exp":1800000100}`:        errInactive,
		`{"active":"true","aud":"` + testResource + `","sub":"a","exp":1800000100}`:       errInactive,
		`{"active":1,"aud":"` + testResource + `","sub":"a","exp":1800000100}`:            errInactive,
		`{"aud":"` + testResource + `","sub":"a","exp":1800000100}`:                       errInactive,
		`{"active":true,"aud":"` + testResource + `","sub":"a"}`:                          errExpired,
		`{"active":true,"sub":"a","exp":1800000100}`:                                      errAudience,
		`{"active":true,"iss":1,"aud":"` + testResource + `","sub":"a","exp":1800000100}`: errIssuer,
	} {
		var cv claimValues
		require.NoError(t, r.read([]byte(raw), &cv))
		_, _, err := r.check(&cv, now)
		assert.Equal(t, want, err, raw)
	}
}

// A verified token without a subject (client credentials) gives a
// principal without one; its client id and scopes are kept.
func TestTokenWithoutSubject(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, nil)
	tok := e.is.Token(t, testissuer.Claims{ClientID: "batch-job", Scopes: []string{"docs:read"}})
	p, _, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, "", p.Subject)
	assert.Equal(t, "batch-job", p.ClientID)
	assert.Equal(t, []string{"docs:read"}, p.Scopes)
}

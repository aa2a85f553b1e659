package authn

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/authn/internal/httpauth"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
)

func TestBearerToken(t *testing.T) {
	long := "Bearer " + strings.Repeat("a", DefaultMaxTokenBytes+1)
	cases := []struct {
		name    string
		headers []string // Authorization values; nil = none
		url     string
		ctype   string
		want    string
		err     error
	}{
		{name: "none", err: principal.ErrUnauthenticated},
		{name: "bearer", headers: []string{"Bearer abc.def-ghi_jkl"}, want: "abc.def-ghi_jkl"},
		{name: "lower-case scheme", headers: []string{"bearer abc"}, want: "abc"},
		{name: "upper-case scheme", headers: []string{"BEARER abc"}, want: "abc"},
		{name: "several spaces (1*SP)", headers: []string{"Bearer   abc"}, want: "abc"},
		{name: "b64token charset", headers: []string{"Bearer aZ09-._~+/=="}, want: "aZ09-._~+/=="},
		{name: "padding only", headers: []string{"Bearer =="}, err: ErrInvalidRequest},
		{name: "padding in the middle", headers: []string{"Bearer ab=cd"}, err: ErrInvalidRequest},
		{name: "Basic is another scheme", headers: []string{"Basic dXNlcjpwYXNz"}, err: principal.ErrUnauthenticated},
		{name: "DPoP is another scheme", headers: []string{"DPoP abc"}, err: principal.ErrUnauthenticated},
		{name: "BearerX is another scheme", headers: []string{"BearerX abc"}, err: principal.ErrUnauthenticated},
		{name: "Bearer alone", headers: []string{"Bearer"}, err: ErrInvalidRequest},
		{name: "Bearer and a space", headers: []string{"Bearer "}, err: ErrInvalidRequest},
		{name: "empty header", headers: []string{""}, err: ErrInvalidRequest},
		{name: "tab separator", headers: []string{"Bearer\tabc"}, err: ErrInvalidRequest},
		{name: "Bearer twice (A14)", headers: []string{"Bearer Bearer abc"}, err: ErrInvalidRequest},
		{name: "two tokens", headers: []string{"Bearer abc def"}, err: ErrInvalidRequest},
		{name: "comma list", headers: []string{"Bearer abc, Bearer def"}, err: ErrInvalidRequest},
		{name: "trailing space", headers: []string{"Bearer abc "}, err: ErrInvalidRequest},
		{name: "quote", headers: []string{`Bearer "abc"`}, err: ErrInvalidRequest},
		{name: "non-ASCII", headers: []string{"Bearer abcé"}, err: ErrInvalidRequest},
		{name: "NUL", headers: []string{"Bearer ab\x00c"}, err: ErrInvalidRequest},
		{name: "several headers (A14)", headers: []string{"Bearer abc", "Bearer abc"}, err: ErrInvalidRequest},
		{name: "several headers, other scheme (A14)", headers: []string{"Basic x", "Bearer abc"}, err: ErrInvalidRequest},
		{name: "header over 16 KiB (A14)", headers: []string{long}, err: ErrInvalidRequest},
		{name: "query token (A14)", url: "/mcp?access_token=abc", err: ErrInvalidRequest},
		{name: "query token and header (A14)", url: "/mcp?x=1&access_token=abc", headers: []string{"Bearer abc"}, err: ErrInvalidRequest},
		{name: "query token percent-encoded", url: "/mcp?access%5Ftoken=abc", err: ErrInvalidRequest},
		{name: "query token percent-encoded upper", url: "/mcp?%61ccess_token=abc", err: ErrInvalidRequest},
		{name: "query token without value", url: "/mcp?access_token", err: ErrInvalidRequest},
		{name: "other query is fine", url: "/mcp?access_tokens=1&token=2", headers: []string{"Bearer abc"}, want: "abc"},
		{name: "form body without header", ctype: "application/x-www-form-urlencoded", err: ErrInvalidRequest},
		{name: "form body with charset", ctype: "Application/X-WWW-Form-Urlencoded; charset=utf-8", err: ErrInvalidRequest},
		{name: "form body with header", ctype: "application/x-www-form-urlencoded", headers: []string{"Bearer abc"}, want: "abc"},
		{name: "JSON body without header", ctype: "application/json", err: principal.ErrUnauthenticated},
		{name: "form-like type", ctype: "application/x-www-form-urlencodedx", err: principal.ErrUnauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url
			if u == "" {
				u = "/mcp"
			}
			r := httptest.NewRequest(http.MethodPost, u, nil)
			for _, h := range tc.headers {
				r.Header.Add("Authorization", h)
			}
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			got, err := BearerToken(r)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				assert.Empty(t, got)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A14: a huge header is rejected after a length check, without scanning
// or allocating.
func TestBearerTokenBoundedAllocation(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+strings.Repeat("a", 64<<10))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := BearerToken(r); err != ErrInvalidRequest {
			t.Fatal("accepted")
		}
	})
	assert.Zero(t, allocs)
	r.Header.Set("Authorization", "Bearer abc")
	allocs = testing.AllocsPerRun(100, func() { _, _ = BearerToken(r) })
	assert.Zero(t, allocs)
}

// FuzzBearerHeader: parseBearer never panics; a returned token is exactly
// the b64token after "Bearer" and 1*SP (RFC 6750 §2.1), never trimmed or
// otherwise altered.
func FuzzBearerHeader(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  a.b.c", "Bearer", "Bearer ", "Basic x", "Bearer a b",
		"Bearer ==", "Bearer a==", "Bearer a=b", "BEARER a~+/", "Bearer\tx", "Bearerx y", "Bearer \x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := parseBearer(h, 64)
		if err != nil {
			if tok != "" {
				t.Fatalf("token with error")
			}
			if err != ErrInvalidRequest && err != principal.ErrUnauthenticated {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(tok) > 64 || !strings.EqualFold(h[:6], "Bearer") || h[6] != ' ' {
			t.Fatalf("accepted %q", h)
		}
		if strings.TrimLeft(h[6:], " ") != tok {
			t.Fatalf("token %q is not the rest of %q", tok, h)
		}
		if !httpauth.ValidB64Token(tok) {
			t.Fatalf("token %q breaks b64token", tok)
		}
		if i := strings.IndexFunc(tok, notB64TokenRune); i >= 0 {
			t.Fatalf("token %q has %q", tok, tok[i])
		}
		if i := strings.IndexByte(tok, '='); i >= 0 && strings.Trim(tok[i:], "=") != "" {
			t.Fatalf("padding inside %q", tok)
		}
	})
}

// notB64TokenRune: a rune outside ALPHA / DIGIT / "-._~+/=" (the
// b64token alphabet with its padding, RFC 6750 §2.1), written out
// independently of the parser.
func notB64TokenRune(c rune) bool {
	return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~+/=", c))
}

package htu

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The RFC 3986 normal form, and the URLs that have none a proof may name.
func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":               "https://a.example/",
		"https://A.EXAMPLE:443/x":         "https://a.example/x",
		"http://a.example:80/x":           "http://a.example/x",
		"http://a.example:080/x":          "http://a.example/x",
		"https://a.example:8443/x":        "https://a.example:8443/x",
		"https://a.example/%7e%2f%41":     "https://a.example/~%2FA",
		"https://a.example/a/./b/../c":    "https://a.example/a/c",
		"https://a.example/x?y#z":         "https://a.example/x",
		"https://[::1]:443/x":             "https://[::1]/x",
		"https://a.example:/x":            "https://a.example/x",
		"https://a.example/%2e%2E/x":      "https://a.example/x",
		"https://a.example/a%2Fb/../c":    "https://a.example/c",
		"https://a.example/mcp/":          "https://a.example/mcp/",
		"https://a.example/!$&'()*+,;=:@": "https://a.example/!$&'()*+,;=:@",
	} {
		got, ok := Normalize(in)
		if assert.True(t, ok, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{
		"", "/x", "ftp://a.example/x", "https://", "https:///x", "https://u:p@a.example/x", "https://a.example/%zz",
		"https://a.example/%4", "https://a.example/ x", "https://a.example/\x00", "https://a.example:x/",
		"https://[1.2.3.4]/", "https://[::1/", "https://a%2eexample/", "https://a.example/" + strings.Repeat("a", 5000),
	} {
		_, ok := Normalize(in)
		assert.False(t, ok, "%q", in)
	}
}

// FuzzNormalize: normalization never panics, is idempotent, and its
// output is an http(s) URL without query or fragment.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "HTTP://A:80/%7e/./../b?q#f", "https://[::1]:443/", "https://a/%2e%2E/", "https://u@a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := Normalize(s)
		if !ok {
			return
		}
		if !strings.HasPrefix(n, "https://") && !strings.HasPrefix(n, "http://") || strings.ContainsAny(n, "?#") {
			t.Fatalf("normalized %q to %q", s, n)
		}
		n2, ok := Normalize(n)
		if !ok || n2 != n {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", s, n, n2, ok)
		}
	})
}

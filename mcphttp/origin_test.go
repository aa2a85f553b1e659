package mcphttp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormaliseOrigin(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"https://app.example.com", "https://app.example.com", true},
		{"HTTPS://App.Example.COM", "https://app.example.com", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"http://[::1]", "http://[::1]", true},
		{"https://app.example.com/", "", false}, // a path
		{"https://app.example.com?x", "", false},
		{"https://app.example.com#x", "", false},
		{"https://user@app.example.com", "", false}, // userinfo
		{"https://app.example.com:port", "", false},
		{"https://app.example.com:", "", false},
		{"https://:8080", "", false},
		{"https://a:b:c", "", false},
		{"ftp://app.example.com", "", false},
		{"null", "", false}, // the opaque origin of sandboxed documents
		{"https://", "", false},
		{"app.example.com", "", false},
		{"https://app example.com", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := normaliseOrigin(tc.in)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

package origin

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

// TestIsLoopbackHost: the Host values a request arriving on loopback may
// carry (DNS rebinding: any other name is refused). Zones, short forms and
// names other than localhost are not loopback hosts.
func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8080": true, "127.255.255.255": true, "localhost": true, "LocalHost:80": true,
		"[::1]:8080": true, "::1": true, "[::ffff:127.0.0.1]:1": true,
		"[::1%lo]:8080": false, // a zone
		"127.1":         false, "0127.0.0.1": false, "evil.example": false, "localhost.evil.example": false,
		"10.0.0.1:80": false, "": false, "[::2]": false,
	} {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

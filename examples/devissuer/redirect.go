package devissuer

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// errRedirectURI reports a redirect URI a client may not register.
var errRedirectURI = errors.New("devissuer: invalid redirect URI")

// checkRedirectURI validates a redirect URI at registration (or in a
// request, before it is compared): an absolute URI of at most
// maxRedirectBytes printable ASCII, without fragment or userinfo, whose
// scheme is https, http with a loopback host (127.0.0.1, [::1] or
// localhost: RFC 8252 §7.3), or a private-use scheme of a native app
// named by a reverse domain name (RFC 8252 §7.1, "com.example.app:/cb"):
// no other scheme — javascript:, data:, file:, an app's "myapp:" — can
// receive a code.
func checkRedirectURI(raw string) error {
	if raw == "" || len(raw) > maxRedirectBytes || !printable(raw) || strings.Contains(raw, "#") {
		return errRedirectURI
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.User != nil || !strings.HasPrefix(raw, u.Scheme+":") {
		return errRedirectURI // url.Parse lower-cases the scheme: take it as given, lower case only
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return errRedirectURI
		}
	case "http":
		if !loopbackHost(u.Hostname()) {
			return errRedirectURI
		}
	default:
		if !reverseDomainScheme(u.Scheme) {
			return errRedirectURI
		}
	}
	return nil
}

// reverseDomainScheme reports whether scheme is a domain name in reverse
// order, lower case (RFC 8252 §7.1): at least two labels separated by
// dots, each of letters, digits and hyphens, starting with a letter and
// not ending with a hyphen.
func reverseDomainScheme(scheme string) bool {
	labels := strings.Split(scheme, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] < 'a' || l[0] > 'z' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// printable reports whether s is made of 0x21–0x7E only.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// loopbackHost reports whether host (without brackets or port) names the
// loopback interface: a 127.0.0.0/8 or ::1 literal, or "localhost".
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// matchRedirectURI reports whether requested, sent in an authorization
// request, is one of registered: compared byte for byte (RFC 9700 §2.1:
// exact matching), except that the port of an http loopback redirect URI
// may differ, because a native app listens on whatever port it gets (RFC
// 8252 §7.3). Scheme, host, path and query still match exactly:
// "http://localhost/cb" and "http://127.0.0.1/cb" are different URIs.
func matchRedirectURI(registered []string, requested string) bool {
	if checkRedirectURI(requested) != nil {
		return false
	}
	for _, r := range registered {
		if r == requested {
			return true
		}
	}
	stripped, ok := withoutLoopbackPort(requested)
	if !ok {
		return false
	}
	for _, r := range registered {
		if rs, ok := withoutLoopbackPort(r); ok && rs == stripped {
			return true
		}
	}
	return false
}

// loopbackPrefixes start the http loopback redirect URIs whose port may
// vary.
var loopbackPrefixes = []string{"http://127.0.0.1", "http://[::1]", "http://localhost"}

// withoutLoopbackPort returns an http loopback redirect URI with its port
// (":1" to ":65535") removed, or false for any other URI.
func withoutLoopbackPort(raw string) (string, bool) {
	for _, p := range loopbackPrefixes {
		rest, ok := strings.CutPrefix(raw, p)
		if !ok {
			continue
		}
		if rest == "" || rest[0] == '/' || rest[0] == '?' {
			return raw, true // no port
		}
		if rest[0] != ':' {
			return "", false // "http://127.0.0.10" or "http://localhost.example"
		}
		end := 1
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		port, err := strconv.Atoi(rest[1:end])
		if end == 1 || end > 6 || err != nil || port < 1 || port > 65535 || rest[1] == '0' {
			return "", false
		}
		if end < len(rest) && rest[end] != '/' && rest[end] != '?' {
			return "", false
		}
		return p + rest[end:], true
	}
	return "", false
}

// redirectTo returns the redirect URI with the response parameters added
// to its query (RFC 6749 §4.1.2: a query it has is kept).
func redirectTo(redirectURI string, resp url.Values) string {
	sep := "?"
	if strings.Contains(redirectURI, "?") {
		sep = "&"
		if strings.HasSuffix(redirectURI, "?") || strings.HasSuffix(redirectURI, "&") {
			sep = ""
		}
	}
	return redirectURI + sep + resp.Encode()
}

// formActionSource is the CSP source expression that lets the login form's
// redirect reach the redirect URI: its origin, or its scheme for a
// private-use one.
func formActionSource(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}

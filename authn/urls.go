package authn

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// isLoopbackHost reports whether host (without port) is a loopback IP
// literal or "localhost".
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseSecureURL parses an absolute URL that must use https, or http when the
// host is a loopback address (local development and tests). Userinfo and
// fragments are refused; query is refused when noQuery is set.
func parseSecureURL(what, s string, noQuery bool) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("authn: %s is required", what)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, fmt.Errorf("authn: %s contains a character that is not allowed", what)
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("authn: %s is not a valid URL", what)
	}
	switch {
	case !u.IsAbs() || u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("authn: %s must be an absolute URL with a host", what)
	case u.User != nil:
		return nil, fmt.Errorf("authn: %s must not contain userinfo", what)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("authn: %s must not contain a fragment", what)
	case noQuery && (u.RawQuery != "" || u.ForceQuery || strings.Contains(s, "?")):
		return nil, fmt.Errorf("authn: %s must not contain a query", what)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("authn: %s must use https (http only for loopback hosts)", what)
		}
	default:
		return nil, fmt.Errorf("authn: %s must use https", what)
	}
	return u, nil
}

package jose

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether host (without port) is a loopback IP
// literal or "localhost".
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseSecureURL parses an absolute URL that must use https, or http when the
// host is a loopback address (local development and tests). Userinfo and
// fragments are refused; query is refused when noQuery is set.
func ParseSecureURL(what, s string, noQuery bool) (*url.URL, error) {
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
	if problem := urlProblem(u, s, noQuery); problem != "" {
		return nil, fmt.Errorf("authn: %s %s", what, problem)
	}
	return u, nil
}

// urlProblem says what is wrong with u (parsed from s), or "".
func urlProblem(u *url.URL, s string, noQuery bool) string {
	switch {
	case !u.IsAbs() || u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "must be an absolute URL with a host"
	case u.User != nil:
		return "must not contain userinfo"
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "must not contain a fragment"
	case noQuery && (u.RawQuery != "" || u.ForceQuery || strings.Contains(s, "?")):
		return "must not contain a query"
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return ""
	case "http":
		if !IsLoopbackHost(u.Hostname()) {
			return "must use https (http only for loopback hosts)"
		}
		return ""
	}
	return "must use https"
}

// SplitResource validates a resource identifier and splits its exact text
// into scheme://authority and path ("" for none or a lone "/").
func SplitResource(resource string) (origin, path string, err error) {
	if _, err := ParseSecureURL("resource", resource, true); err != nil {
		return "", "", err
	}
	i := strings.Index(resource, "://")
	if i < 0 {
		return "", "", errors.New("authn: resource must be an absolute URL with a host")
	}
	j := strings.IndexByte(resource[i+3:], '/')
	if j < 0 {
		return resource, "", nil
	}
	origin, path = resource[:i+3+j], resource[i+3+j:]
	if path == "/" {
		path = ""
	}
	return origin, path, nil
}

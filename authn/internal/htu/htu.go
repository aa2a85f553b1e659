// Package htu normalizes the http(s) URLs that DPoP proofs name (RFC 9449
// §4.3: a proof's htu is compared with the request's URL "without query
// and fragment", after RFC 3986 normalization).
package htu

import (
	"net"
	"strings"
)

// MaxBytes bounds the URLs Normalize works on.
const MaxBytes = 4 << 10

// Normalize returns the RFC 3986 normal form of an http(s) URL without
// its query and fragment, for comparing a DPoP proof's htu with the
// request (RFC 9449 §4.3): syntax-based normalization (§6.2.2: scheme and
// host in lower case, percent-encodings in upper case, unreserved
// characters decoded, dot segments removed) and scheme-based
// normalization (§6.2.3: the default port dropped, an empty path made
// "/"). It reports false for anything else: another scheme, no host,
// userinfo, a byte that cannot appear in a URL, a bad percent-encoding,
// more than 4 KiB.
func Normalize(raw string) (string, bool) {
	if len(raw) > MaxBytes {
		return "", false
	}
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", false
	}
	scheme := strings.ToLower(raw[:i])
	var defPort string
	switch scheme {
	case "https":
		defPort = "443"
	case "http":
		defPort = "80"
	default:
		return "", false
	}
	rest := raw[i+3:]
	if j := strings.IndexAny(rest, "?#"); j >= 0 {
		rest = rest[:j]
	}
	authority, path := rest, ""
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		authority, path = rest[:j], rest[j:]
	}
	host, ok := normalizeAuthority(authority, defPort)
	if !ok {
		return "", false
	}
	p, ok := normalizePath(path)
	if !ok {
		return "", false
	}
	return scheme + "://" + host + p, true
}

// normalizeAuthority lower-cases the host and drops the default port. It
// refuses userinfo, an empty host, a port that is not digits, and
// characters outside reg-name, IPv4 and bracketed IPv6 literals.
func normalizeAuthority(a, defPort string) (string, bool) {
	if a == "" || strings.ContainsAny(a, "@%") {
		return "", false
	}
	host, port, ok := splitAuthority(a)
	if !ok || host == "" || !validHost(host) || !digits(port) {
		return "", false
	}
	host = strings.ToLower(host)
	if port != "" {
		if port = strings.TrimLeft(port, "0"); port == "" {
			port = "0"
		}
	}
	if port == "" || port == defPort {
		return host, true
	}
	return host + ":" + port, true
}

// splitAuthority splits host and port; a bracketed host must be an IPv6
// literal.
func splitAuthority(a string) (host, port string, ok bool) {
	if !strings.HasPrefix(a, "[") {
		if j := strings.LastIndexByte(a, ':'); j >= 0 {
			return a[:j], a[j+1:], true
		}
		return a, "", true
	}
	end := strings.IndexByte(a, ']')
	if end < 0 {
		return "", "", false
	}
	host, port = a[:end+1], a[end+1:]
	if ip := net.ParseIP(host[1 : len(host)-1]); ip == nil || ip.To4() != nil {
		return "", "", false
	}
	if port != "" {
		if port[0] != ':' {
			return "", "", false
		}
		port = port[1:]
	}
	return host, port, true
}

// validHost: a bracketed IPv6 literal (checked by splitAuthority), or a
// reg-name or IPv4 address of unreserved and sub-delims characters.
func validHost(host string) bool {
	if host[0] == '[' {
		return true
	}
	for k := 0; k < len(host); k++ {
		if c := host[k]; !(unreserved(c) || strings.IndexByte("!$&'()*+,;=", c) >= 0) {
			return false
		}
	}
	return true
}

// digits reports whether s is made of ASCII digits (or empty).
func digits(s string) bool {
	for k := 0; k < len(s); k++ {
		if s[k] < '0' || s[k] > '9' {
			return false
		}
	}
	return true
}

// unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3).
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// pathChar: pchar without "%" (handled separately), and "/".
func pathChar(c byte) bool {
	return unreserved(c) || strings.IndexByte("!$&'()*+,;=:@/", c) >= 0
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normalizePath normalizes percent-encodings (upper-case hex digits,
// unreserved characters decoded), removes dot segments and makes an empty
// path "/".
func normalizePath(p string) (string, bool) {
	var b strings.Builder
	b.Grow(len(p) + 1)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%':
			if i+2 >= len(p) {
				return "", false
			}
			h, ok1 := unhex(p[i+1])
			l, ok2 := unhex(p[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			if d := h<<4 | l; unreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[h])
				b.WriteByte(upperHex[l])
			}
			i += 2
		case pathChar(c):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	out := removeDotSegments(b.String())
	if out == "" {
		out = "/"
	}
	return out, true
}

// removeDotSegments is RFC 3986 §5.2.4. Decoded "%2E" is already "." here
// (unreserved), as §6.2.2.3 requires before removing dot segments.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // output segments, each with its leading "/"
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			j := strings.IndexByte(in[1:], '/')
			if j < 0 {
				out = append(out, in)
				in = ""
			} else {
				out = append(out, in[:j+1])
				in = in[j+1:]
			}
		}
	}
	return strings.Join(out, "")
}

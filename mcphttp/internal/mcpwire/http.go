package mcpwire

import (
	"net/http"
	"strconv"
	"strings"
)

// Content negotiation: Accept is parsed by hand, on every request, without
// allocating.

// splitMediaType returns the type/subtype of a media type (or media range)
// and its parameters, both without surrounding spaces.
func splitMediaType(v string) (mediaType, params string) {
	mediaType, params, _ = strings.Cut(v, ";")
	return strings.TrimSpace(mediaType), params
}

// AcceptsType reports whether the Accept header values admit mediaType: the
// type itself, its major wildcard (given, e.g. "application/*") or */*,
// with a non-zero quality. An absent header admits everything.
func AcceptsType(values []string, mediaType, wildcard string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, params := splitMediaType(part)
			if !strings.EqualFold(mt, mediaType) && !strings.EqualFold(mt, wildcard) && mt != "*/*" {
				continue
			}
			if !zeroQuality(params) {
				return true
			}
		}
	}
	return false
}

// zeroQuality reports whether media range parameters hold q=0 (not
// acceptable).
func zeroQuality(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && f == 0
		}
	}
	return false
}

// HeaderValue is h.Get(key) for a key in canonical form (the constants of
// this package), without canonicalizing it again.
func HeaderValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Package httpheader holds the one Vary helper that the authenticator,
// the endpoint and the Origin guard share.
package httpheader

import (
	"net/http"
	"strings"
)

// AppendVary adds each name to Vary unless it is listed already (or Vary
// is "*"), keeping what an outer handler set and sharing no value with
// another response.
func AppendVary(h http.Header, names ...string) {
	vary := h["Vary"]
	for _, name := range names {
		have := false
		for _, v := range vary {
			if v == name || v == "*" || ListHas(v, name) { // mostly set by this kit: name itself
				have = true
				break
			}
		}
		if !have {
			vary = append(vary[:len(vary):len(vary)], name)
		}
	}
	if len(vary) > 0 {
		h["Vary"] = vary
	}
}

// ListHas reports whether the comma-separated header value lists name,
// case-insensitively.
func ListHas(list, name string) bool {
	for item := range strings.SplitSeq(list, ",") {
		if strings.EqualFold(strings.Trim(item, " \t"), name) {
			return true
		}
	}
	return false
}

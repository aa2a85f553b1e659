// Package httpheader holds the HTTP header helpers that authn, mcphttp,
// its parts and inventory share: Vary ([AppendVary], [ListHas]), the
// private marking of a response to an authenticated request
// ([SetPrivate]), and media types and tokens ([ValidMediaType],
// [IsTchar]).
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

// SetPrivate marks a response to an authenticated request private:
// Cache-Control: private, max-age=0 (replacing what was there), and
// Authorization appended to Vary (never replacing what an outer handler
// put there), with values of its own, so no shared cache stores it or
// serves it to another caller (RFC 9111 §3.5). authn.SetPrivate is this.
func SetPrivate(h http.Header) {
	h["Cache-Control"] = []string{"private, max-age=0"}
	AppendVary(h, "Authorization")
}

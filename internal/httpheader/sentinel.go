package httpheader

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
)

// DecodeValue returns the text that an MCP header mirroring a body value
// (Mcp-Name, Mcp-Param-*) carries, by one rule for every such header:
//
//   - =?base64?…?= holds the padded standard Base64 (RFC 4648 §4) of UTF-8
//     text; anything else between the markers (unpadded, another
//     alphabet, a line break, bytes that are not UTF-8) is refused;
//   - any other value is the text itself, which must then be visible
//     ASCII and spaces, neither beginning nor ending with a space (what
//     a client may send unencoded; a value that begins with =?base64?
//     but does not end with ?= is such a text).
//
// ok is false for a value that is valid in neither form.
func DecodeValue(v string) (text string, ok bool) {
	if inner, found := strings.CutPrefix(v, "=?base64?"); found {
		if inner, found = strings.CutSuffix(inner, "?="); found {
			// Strict decoding still skips CR and LF, which no value in
			// this form holds.
			if strings.ContainsAny(inner, "\r\n") {
				return "", false
			}
			b, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil || !utf8.Valid(b) {
				return "", false
			}
			return string(b), true
		}
	}
	if v != "" && (v[0] == ' ' || v[len(v)-1] == ' ') || ascii.Run(v, 0x20, 0x7e) != len(v) {
		return "", false
	}
	return v, true
}

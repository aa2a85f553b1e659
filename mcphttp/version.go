package mcphttp

import (
	"encoding/base64"
	"slices"
	"strings"
	"unicode/utf8"
)

// Protocol versions the endpoint speaks.
const (
	// Version20260728 is the modern, stateless protocol: every request
	// carries its version and the client's capabilities in params._meta.
	Version20260728 = "2026-07-28"
	// Version20251125 and the older ones below are the legacy protocols,
	// which begin with an initialize handshake.
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
)

var (
	modernVersions = []string{Version20260728}
	// legacyVersions is ordered newest first; the first is the answer to an
	// initialize that asks for a version the endpoint does not speak.
	legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}
	allVersions    = append(slices.Clone(modernVersions), legacyVersions...)
)

// Reserved _meta keys of the modern protocol.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// HTTP headers of the Streamable HTTP transport.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerSessionID       = "Mcp-Session-Id"
)

func isModernVersion(v string) bool { return slices.Contains(modernVersions, v) }
func isLegacyVersion(v string) bool { return slices.Contains(legacyVersions, v) }

// decodeHeaderName returns the value of an Mcp-Name header: either the
// header value itself, or for the =?base64?…?= form the decoded UTF-8 text.
// ok is false for a value that is not valid in either form.
func decodeHeaderName(v string) (string, bool) {
	if inner, found := strings.CutPrefix(v, "=?base64?"); found {
		inner, found = strings.CutSuffix(inner, "?=")
		if !found {
			return "", false
		}
		b, err := base64.StdEncoding.Strict().DecodeString(inner)
		if err != nil {
			b, err = base64.RawStdEncoding.Strict().DecodeString(inner)
		}
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	return v, validHeaderValue(v)
}

// validHeaderValue reports whether v holds only visible ASCII and spaces,
// without leading or trailing space: what a client sends unencoded.
func validHeaderValue(v string) bool {
	if v == "" || v[0] == ' ' || v[len(v)-1] == ' ' {
		return v == ""
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

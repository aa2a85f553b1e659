package mcpwire

import "slices"

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

// The versions, by era.
var (
	modernVersions = []string{Version20260728}
	// legacyVersions is ordered newest first; the first is the answer to an
	// initialize that asks for a version the endpoint does not speak.
	legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}
)

// HeaderSessionID is the legacy session header, Mcp-Session-Id.
const HeaderSessionID = "Mcp-Session-Id"

// IsModernVersion reports whether v is a version of the modern protocol.
func IsModernVersion(v string) bool { return slices.Contains(modernVersions, v) }

// IsLegacyVersion reports whether v is a legacy version the endpoint speaks.
func IsLegacyVersion(v string) bool { return slices.Contains(legacyVersions, v) }

// Structured reports whether a protocol version has titles, output
// schemas and structuredContent (2025-06-18 and later).
func Structured(version string) bool { return version >= Version20250618 }

// Versions returns every version the endpoint speaks, modern first, then
// the legacy ones newest first.
func Versions() []string { return append(slices.Clone(modernVersions), legacyVersions...) }

// NewestLegacy is the legacy version an initialize that asks for one the
// endpoint does not speak is answered in.
const NewestLegacy = Version20251125

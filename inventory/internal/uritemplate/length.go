package uritemplate

import "unicode/utf16"

// MaxLen is the longest template, and the longest URI, the package
// parses, matches or expands: 2,048 UTF-16 code units (the length unit of
// the MCP schema's strings, as the inventory counts them).
const MaxLen = 2048

// longer reports whether s is longer than max UTF-16 code units.
func longer(s string, max int) bool {
	if len(s) <= max {
		return false // a UTF-8 byte never encodes more than one code unit
	}
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
		if n > max {
			return true
		}
	}
	return false
}

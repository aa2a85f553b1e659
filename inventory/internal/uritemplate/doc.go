// Package uritemplate parses, expands and matches the URI templates of
// MCP resource templates: RFC 6570, levels 1–4, with the restrictions
// that keep matching unambiguous (see inventory's package documentation,
// section "URI templates"), and proves two templates disjoint.
//
// A Template is immutable after Parse and safe for concurrent use.
// Matching is one left-to-right scan for the templates most services
// write ({x} and {+x} separated by literals) and a dynamic programme over
// the template's automaton otherwise. Templates and URIs longer than
// MaxLen UTF-16 code units are refused.
//
// The package is internal: the inventory is its one user, and
// inventory.Expand is its public face.
package uritemplate

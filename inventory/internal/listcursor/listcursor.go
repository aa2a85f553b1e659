// Package listcursor encodes the positions an inventory's cursors carry:
// where a resources/list or resources/templates/list traversal continues.
// The payloads are sealed (sealedcursor) before a client sees them, so a
// payload that parses comes from this process or its fleet; the parsers
// still refuse anything malformed, and the range checks against the
// registry and the caller are inventory's.
//
// The package is internal: inventory is its one user.
package listcursor

import (
	"encoding/binary"
	"errors"

	"github.com/mcpkit/mcpkit/inventory/internal/contract"
)

// version is the first byte of every payload.
const version = 1

// Position is where a resources/list traversal continues.
//
// Payload: version ‖ uvarint(tag) ‖ rest. Tag 0: the statics, rest =
// uvarint(number of visible statics already listed). Tag i+1: list source
// i, rest = uvarint(len(key)) ‖ key, the last key listed (empty: from the
// start of the source).
type Position struct {
	Source int // -1: statics
	Offset int // statics already listed (Source == -1)
	Key    string
}

// maxOffset bounds a position among the statics; maxSource, the list
// sources.
const (
	maxOffset = 1 << 20
	maxSource = 1 << 16
)

// Append appends the payload of p to dst.
func Append(dst []byte, p Position) []byte {
	dst = append(dst, version)
	if p.Source < 0 {
		dst = binary.AppendUvarint(dst, 0)
		return binary.AppendUvarint(dst, uint64(p.Offset))
	}
	dst = binary.AppendUvarint(dst, uint64(p.Source)+1)
	dst = binary.AppendUvarint(dst, uint64(len(p.Key)))
	return append(dst, p.Key...)
}

// errPayload is Parse's error.
var errPayload = errors.New("inventory: malformed cursor payload")

// Parse decodes a payload of Append: a Source of at most 1<<16, an
// Offset of at most 1<<20, a Key that is empty or a valid entry key.
func Parse(b []byte) (Position, error) {
	if len(b) < 2 || b[0] != version {
		return Position{}, errPayload
	}
	b = b[1:]
	tag, n := uvarint(b)
	if n <= 0 || tag > maxSource {
		return Position{}, errPayload
	}
	b = b[n:]
	v, n := uvarint(b)
	if n <= 0 {
		return Position{}, errPayload
	}
	b = b[n:]
	if tag == 0 {
		if len(b) != 0 || v > maxOffset {
			return Position{}, errPayload
		}
		return Position{Source: -1, Offset: int(v)}, nil
	}
	if v != uint64(len(b)) || v > contract.MaxKeyBytes {
		return Position{}, errPayload
	}
	p := Position{Source: int(tag - 1), Key: string(b)}
	if p.Key != "" && contract.Key(p.Key) != contract.OK {
		return Position{}, errPayload
	}
	return p, nil
}

// MaxLen returns the length of the longest resources/list payload of an
// inventory of statics static resources and sources list sources.
func MaxLen(statics, sources int) int {
	rest := uvarintLen(uint64(statics))
	if sources > 0 {
		rest = max(rest, uvarintLen(contract.MaxKeyBytes)+contract.MaxKeyBytes)
	}
	return 1 + uvarintLen(uint64(sources)) + rest
}

// AppendTemplates appends the payload of a resources/templates/list
// position: version ‖ uvarint(index of the next template).
func AppendTemplates(dst []byte, next int) []byte {
	return binary.AppendUvarint(append(dst, version), uint64(next))
}

// ParseTemplates decodes a payload of AppendTemplates (an index of at
// most 1<<20), and reports whether it is one.
func ParseTemplates(b []byte) (int, bool) {
	if len(b) < 2 || b[0] != version {
		return 0, false
	}
	v, n := uvarint(b[1:])
	if n <= 0 || n != len(b)-1 || v > maxOffset {
		return 0, false
	}
	return int(v), true
}

// MaxTemplatesLen returns the length of the longest
// resources/templates/list payload of an inventory of templates
// templates.
func MaxTemplatesLen(templates int) int {
	return 1 + uvarintLen(uint64(templates))
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// uvarint is binary.Uvarint refusing (n = 0) an overlong encoding, so
// that each payload has one spelling.
func uvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n > 0 && n != uvarintLen(v) {
		return 0, 0
	}
	return v, n
}

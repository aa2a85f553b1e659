package inventory

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Cursor purposes: a cursor of one method never opens for another.
const (
	purposeList      = "resources/list"
	purposeTemplates = "resources/templates/list"
)

// payloadVersion is the first byte of every cursor payload.
const payloadVersion = 1

// position is where a resources/list traversal continues.
//
// Payload: version ‖ uvarint(tag) ‖ rest. Tag 0: the statics, rest =
// uvarint(number of visible statics already listed). Tag i+1: list source
// i, rest = uvarint(len(key)) ‖ key, the last key listed (empty: from the
// start of the source).
type position struct {
	source int // -1: statics
	offset int // statics already listed (source == -1)
	key    string
}

func appendPosition(dst []byte, p position) []byte {
	dst = append(dst, payloadVersion)
	if p.source < 0 {
		dst = binary.AppendUvarint(dst, 0)
		return binary.AppendUvarint(dst, uint64(p.offset))
	}
	dst = binary.AppendUvarint(dst, uint64(p.source)+1)
	dst = binary.AppendUvarint(dst, uint64(len(p.key)))
	return append(dst, p.key...)
}

var errPayload = errors.New("inventory: malformed cursor payload")

// parsePosition decodes a payload; range checks against the registry and
// the caller are the caller's.
func parsePosition(b []byte) (position, error) {
	if len(b) < 2 || b[0] != payloadVersion {
		return position{}, errPayload
	}
	b = b[1:]
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag > 1<<16 {
		return position{}, errPayload
	}
	b = b[n:]
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return position{}, errPayload
	}
	b = b[n:]
	if tag == 0 {
		if len(b) != 0 || v > 1<<20 {
			return position{}, errPayload
		}
		return position{source: -1, offset: int(v)}, nil
	}
	if v != uint64(len(b)) || v > contract.MaxKeyBytes {
		return position{}, errPayload
	}
	p := position{source: int(tag - 1), key: string(b)}
	if p.key != "" && contract.Key(p.key) != contract.OK {
		return position{}, errPayload
	}
	return p, nil
}

// maxListPayload is the length of the longest resources/list payload.
func (inv *Inventory) maxListPayload() int {
	rest := uvarintLen(uint64(len(inv.statics)))
	if len(inv.sources) > 0 {
		rest = max(rest, uvarintLen(contract.MaxKeyBytes)+contract.MaxKeyBytes)
	}
	return 1 + uvarintLen(uint64(len(inv.sources))) + rest
}

// Templates payload: version ‖ uvarint(index of the next template).
func (inv *Inventory) maxTemplatesPayload() int {
	return 1 + uvarintLen(uint64(len(inv.templates)))
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// appendBinding appends the associated data of a cursor: the purpose, the
// caller's identity (issuer, client id, subject, scopes and audience, or an
// anonymous marker; never the DPoP key, so a traversal continues with a
// refreshed token of the same identity, and never across identities), the registry fingerprint
// and, in a gated inventory, the caller's visibility vector (what the
// traversal may show, not the grants behind it), each field
// length-prefixed. The caller's part is [principal.Principal.AppendBinding],
// which encodes the scopes as a set (sorted, whatever their order).
func (inv *Inventory) appendBinding(dst []byte, purpose string, caller *principal.Principal, vis []byte) []byte {
	str := func(s string) {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	str(purpose)
	if caller == nil {
		dst = append(dst, 0)
	} else {
		dst = caller.AppendBinding(append(dst, 1))
	}
	dst = append(dst, inv.fp[:]...)
	if inv.gated {
		dst = binary.AppendUvarint(dst, uint64(len(vis)))
		dst = append(dst, vis...)
	}
	return dst
}

// openCursor opens a cursor for this caller and purpose and returns its
// payload, in sc.payload (valid until the next page is sealed), and
// first-page time; failures are *CursorError.
func (inv *Inventory) openCursor(sc *scratch, purpose string, caller *principal.Principal, vis []byte, cursor string) ([]byte, time.Time, error) {
	sc.bind = inv.appendBinding(sc.bind[:0], purpose, caller, vis)
	payload, first, err := inv.sealer.AppendOpen(sc.payload[:0], sc.bind, cursor)
	switch {
	case errors.Is(err, sealedcursor.ErrExpired):
		return nil, time.Time{}, &CursorError{Reason: ReasonExpired}
	case err != nil:
		return nil, time.Time{}, &CursorError{Reason: ReasonInvalid}
	}
	return payload, first, nil
}

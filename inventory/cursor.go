package inventory

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Cursor purposes: a cursor of one method never opens for another.
const (
	purposeList      = "resources/list"
	purposeTemplates = "resources/templates/list"
)

// position is where a resources/list traversal continues.
type position = listcursor.Position

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

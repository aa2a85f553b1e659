package inventory

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/principal"
)

// SealListPositionForTest seals a resources/list cursor at source (-1 for
// the statics, with offset) and key, as List would, for benchmarks of deep
// pages and for cursor tests.
func (inv *Inventory) SealListPositionForTest(caller *principal.Principal, source, offset int, key string, first time.Time) (string, error) {
	return inv.SealListPayloadForTest(caller, listcursor.Append(nil, position{Source: source, Offset: offset, Key: key}), first)
}

// SealListPayloadForTest seals any payload with this caller's
// resources/list binding.
func (inv *Inventory) SealListPayloadForTest(caller *principal.Principal, payload []byte, first time.Time) (string, error) {
	var vis visibility
	if inv.gated {
		if err := inv.listVisibility(context.Background(), &scratch{}, caller, &vis); err != nil {
			return "", err
		}
	}
	return inv.sealer.Seal(inv.appendBinding(nil, purposeList, caller, vis.bits), payload, first)
}

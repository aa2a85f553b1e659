package inventory

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/budget"
)

// Templates serves resources/templates/list: the templates that are not
// Hidden, in registration order, paginated like List with a sealed cursor
// of its own. Under DiscoveryProtected a protected template is shown only
// to an authenticated caller holding its scopes. In both modes, templates
// hidden from the caller by gates or overrides are left out. caller may be
// nil.
//
// Errors: *CursorError, ErrInternal (the envelope leaves no room, or the
// grant store failed; logged).
func (inv *Inventory) Templates(ctx context.Context, caller *authn.Principal, cursor string, env Envelope) ([]byte, error) {
	caller = normalize(caller)
	sc := getScratch()
	defer putScratch(sc)
	var vis []byte // gated: one bit per template, shown or not
	if inv.gated {
		var err error
		if vis, err = inv.templatesVisibility(ctx, sc, caller); err != nil {
			return nil, err
		}
	}

	start, first := 0, time.Time{}
	if cursor == "" {
		first = inv.sealer.Now()
	} else {
		payload, f, err := inv.openCursor(sc, purposeTemplates, caller, vis, cursor)
		if err != nil {
			return nil, err
		}
		idx, ok := parseTemplatesPosition(payload)
		if !ok || idx > len(inv.templates) {
			return nil, &CursorError{Reason: ReasonInvalid}
		}
		start, first = idx, f
	}

	sc.head = append(append(sc.head[:0], env.Head...), `{"resourceTemplates":`...)
	sc.tail = appendTail(sc.tail[:0], env)
	page := &sc.page
	err := page.Reset(inv.buffer(&inv.tmplHint, env.Buf), sc.head, sc.tail, budget.Limits{
		MaxItems: inv.pageSize, MaxBytes: inv.maxBytes, Reserve: inv.tmplReserve,
	})
	if err != nil {
		return nil, inv.failAssembly(ctx, purposeTemplates, err)
	}
	next := -1
	for i := start; i < len(inv.templates); i++ {
		rt := inv.templates[i]
		if inv.gated && !bitOf(vis, i) || !inv.gated && !inv.discoverable(rt, caller) {
			continue
		}
		if err := page.Add(rt.enc); err != nil {
			if errors.Is(err, budget.ErrFull) {
				next = i
				break
			}
			return nil, inv.failRule(ctx, purposeTemplates, rt.tmpl.Name, RuleEntryTooLarge, -1)
		}
	}
	sc.trailer = sc.trailer[:0]
	if next >= 0 {
		payload := append(sc.payload[:0], payloadVersion)
		payload = binary.AppendUvarint(payload, uint64(next))
		if sc.trailer, err = inv.appendCursor(sc, purposeTemplates, caller, vis, payload, first); err != nil {
			return nil, inv.failAssembly(ctx, purposeTemplates, err)
		}
	}
	out, err := page.Finish(sc.trailer)
	if err != nil {
		return nil, inv.failAssembly(ctx, purposeTemplates, err)
	}
	inv.tmplHint.Store(int64(len(out)))
	return out, nil
}

// discoverable reports whether resources/templates/list shows rt to caller.
func (inv *Inventory) discoverable(rt *registered, caller *authn.Principal) bool {
	if rt.tmpl.Hidden {
		return false
	}
	if inv.discovery == DiscoveryOpen {
		return true
	}
	return visible(rt.tmpl.Access, rt.scopes, caller)
}

func parseTemplatesPosition(b []byte) (int, bool) {
	if len(b) < 2 || b[0] != payloadVersion {
		return 0, false
	}
	v, n := binary.Uvarint(b[1:])
	if n <= 0 || n != len(b)-1 || v > 1<<20 {
		return 0, false
	}
	return int(v), true
}

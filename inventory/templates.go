package inventory

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/inventory/internal/gateview"
	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/principal"
)

// Templates serves resources/templates/list: the templates that are not
// Hidden, in registration order, paginated like List with a sealed cursor
// of its own, each offered to fit as List offers its items. Under
// DiscoveryProtected a protected template is shown only to an
// authenticated caller holding its scopes. In both modes, templates
// hidden from the caller by gates or overrides are left out. caller may be
// nil.
//
// Errors: *CursorError, ErrInternal (fit refused a template on an empty
// page, or the grant store failed; logged).
func (inv *Inventory) Templates(ctx context.Context, caller *principal.Principal, cursor string, fit func(*TemplateItem) bool) (next string, err error) {
	if inv.zero() {
		return zeroPage(cursor)
	}
	sc := getScratch()
	defer putScratch(sc)
	var vis []byte // gated: one bit per template, shown or not
	if inv.gated {
		if vis, err = inv.templatesVisibility(ctx, sc, caller); err != nil {
			return "", err
		}
	}

	start, first := 0, time.Time{}
	if cursor == "" {
		first = inv.sealer.Now()
	} else {
		payload, f, err := inv.openCursor(sc, purposeTemplates, caller, vis, cursor)
		if err != nil {
			return "", err
		}
		idx, ok := listcursor.ParseTemplates(payload)
		if !ok || idx > len(inv.templates) {
			return "", &CursorError{Reason: ReasonInvalid}
		}
		start, first = idx, f
	}

	f := newFiller(fit, inv.pageSize)
	at := -1
	for i := start; i < len(inv.templates); i++ {
		rt := inv.templates[i]
		if inv.gated && !gateview.Bit(vis, i) || !inv.gated && !inv.discoverable(rt, caller) {
			continue
		}
		item := rt.item
		if err := f.add(&item); err != nil {
			if err == errTooLarge {
				return "", inv.failRule(ctx, purposeTemplates, rt.tmpl.Name, RuleEntryTooLarge, -1)
			}
			at = i
			break
		}
	}
	if at < 0 {
		return "", nil
	}
	payload := listcursor.AppendTemplates(sc.payload[:0], at)
	if next, err = inv.seal(sc, purposeTemplates, caller, vis, payload, first); err != nil {
		return "", inv.failAssembly(ctx, purposeTemplates, err)
	}
	return next, nil
}

// discoverable reports whether resources/templates/list shows rt to caller.
func (inv *Inventory) discoverable(rt *registered, caller *principal.Principal) bool {
	if rt.tmpl.Hidden {
		return false
	}
	if inv.discovery == DiscoveryOpen {
		return true
	}
	return visible(rt.tmpl.Access, rt.scopes, caller)
}

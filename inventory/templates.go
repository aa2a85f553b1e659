package inventory

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Templates serves resources/templates/list: the templates that are not
// Hidden, in registration order, paginated like List with a sealed cursor
// of its own; it fills page, reusing its storage. Under DiscoveryProtected
// a protected template is shown only to an authenticated caller holding
// its scopes. In both modes, templates hidden from the caller by gates or
// overrides are left out. caller may be nil.
//
// Errors: *CursorError, ErrInternal (req.Reserve leaves no room, or the
// grant store failed; logged). On error page is empty.
func (inv *Inventory) Templates(ctx context.Context, caller *principal.Principal, req PageRequest, page *TemplatePage) error {
	clear(page.Templates)
	page.Templates, page.NextCursor = page.Templates[:0], ""
	sc := getScratch()
	defer putScratch(sc)
	var vis []byte // gated: one bit per template, shown or not
	if inv.gated {
		var err error
		if vis, err = inv.templatesVisibility(ctx, sc, caller); err != nil {
			return err
		}
	}

	start, first := 0, time.Time{}
	if req.Cursor == "" {
		first = inv.sealer.Now()
	} else {
		payload, f, err := inv.openCursor(sc, purposeTemplates, caller, vis, req.Cursor)
		if err != nil {
			return err
		}
		idx, ok := parseTemplatesPosition(payload)
		if !ok || idx > len(inv.templates) {
			return &CursorError{Reason: ReasonInvalid}
		}
		start, first = idx, f
	}

	limit := inv.maxBytes - req.Reserve
	size := len(`{"resourceTemplates":[]}`) + inv.tmplReserve
	if req.Reserve < 0 || size > limit {
		return inv.failAssembly(ctx, purposeTemplates, errNoRoom)
	}
	next := -1
	for i := start; i < len(inv.templates); i++ {
		rt := inv.templates[i]
		if inv.gated && !bitOf(vis, i) || !inv.gated && !inv.discoverable(rt, caller) {
			continue
		}
		need := len(rt.enc)
		if len(page.Templates) > 0 {
			need++
		}
		if len(page.Templates) == inv.pageSize || size+need > limit {
			if len(page.Templates) == 0 {
				return inv.failRule(ctx, purposeTemplates, rt.tmpl.Name, RuleEntryTooLarge, -1)
			}
			next = i
			break
		}
		size += need
		page.Templates = append(page.Templates, TemplateItem{Name: rt.tmpl.Name, URITemplate: rt.tmpl.URITemplate, JSON: rt.enc})
	}
	if next >= 0 {
		payload := append(sc.payload[:0], payloadVersion)
		payload = binary.AppendUvarint(payload, uint64(next))
		cursor, err := inv.seal(sc, purposeTemplates, caller, vis, payload, first)
		if err != nil {
			clear(page.Templates)
			page.Templates = page.Templates[:0]
			return inv.failAssembly(ctx, purposeTemplates, err)
		}
		page.NextCursor = cursor
	}
	return nil
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

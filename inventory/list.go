package inventory

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/inventory/internal/gateview"
	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/principal"
)

// Errors of a filler (the page budget's), never returned by the package.
var (
	errFull     = budget.ErrFull
	errTooLarge = budget.ErrTooLarge
)

// List serves resources/list: the static resources the caller may see,
// then the entries of every list source the caller may use, one page at a
// time, in Go values. cursor is "" for the first page, else the next
// cursor of an earlier page given to the same caller. Each item of the
// page, in order, is offered to fit, which says whether it still fits the
// transport's budget (it encodes the item into its own buffer, say, and
// answers false when the response would break its byte limit; nil admits
// every item): the page ends before the first item fit refuses, or at the
// page size. next continues the traversal after the last item fit
// accepted; "" on the last page. fit must neither keep nor modify the
// item (which may be the inventory's own).
//
// Every entry a callback returns is validated against the contract before
// it is offered to fit, in the same pass.
//
// In a gated inventory, static resources and list sources hidden from the
// caller by gates or overrides are skipped, and cursors are bound to what
// the caller may see (see the package documentation).
//
// Errors: principal.ErrUnauthenticated (list sources exist and caller is nil),
// *principal.ScopeError (the caller may use no list source, and some
// source is held back by scopes alone), *CursorError, ErrInternal (a
// callback or the grant store failed, a callback broke the contract, or fit
// refused an item on an empty page; logged). After an error, what fit
// accepted is no page: discard it.
func (inv *Inventory) List(ctx context.Context, caller *principal.Principal, cursor string, fit func(*Item) bool) (next string, err error) {
	if inv.zero() {
		return zeroPage(cursor)
	}
	if len(inv.sources) > 0 && caller == nil {
		return "", principal.ErrUnauthenticated
	}
	sc := getScratch()
	defer putScratch(sc)
	var vis visibility
	if inv.gated {
		if err := inv.listVisibility(ctx, sc, caller, &vis); err != nil {
			return "", err
		}
	}
	if len(inv.sources) > 0 {
		if err := inv.anySource(caller, &vis); err != nil {
			return "", err
		}
	}

	pos, first := position{Source: -1}, time.Time{}
	if cursor == "" {
		first = inv.sealer.Now()
	} else {
		payload, f, err := inv.openCursor(sc, purposeList, caller, vis.bits, cursor)
		if err != nil {
			return "", err
		}
		if pos, err = listcursor.Parse(payload); err != nil || !inv.validPosition(sc, pos, caller, &vis) {
			return "", &CursorError{Reason: ReasonInvalid}
		}
		first = f
	}

	f := newFiller(fit, inv.pageSize)
	at, more, err := inv.fill(ctx, sc, &f, caller, &vis, pos)
	if err != nil || !more {
		return "", err
	}
	next, err = inv.seal(sc, purposeList, caller, vis.bits, listcursor.Append(sc.payload[:0], at), first)
	if err != nil {
		return "", inv.failAssembly(ctx, purposeList, err)
	}
	return next, nil
}

// seal seals a cursor payload with this caller's binding.
// vis is the caller's visibility vector (nil without gates).
func (inv *Inventory) seal(sc *scratch, purpose string, caller *principal.Principal, vis, payload []byte, first time.Time) (string, error) {
	sc.payload = payload
	sc.bind = inv.appendBinding(sc.bind[:0], purpose, caller, vis)
	t, err := inv.sealer.AppendSeal(sc.trailer[:0], sc.bind, payload, first)
	if err != nil {
		return "", err
	}
	sc.trailer = t
	return string(t), nil
}

// fill adds the items from pos on and returns the position after the last
// one and whether more may follow.
func (inv *Inventory) fill(ctx context.Context, sc *scratch, f *filler[Item], caller *principal.Principal, vis *visibility, pos position) (position, bool, error) {
	if pos.Source < 0 {
		seen, full, err := inv.fillStatics(ctx, sc, f, caller, vis, pos.Offset)
		switch {
		case err != nil:
			return pos, false, err
		case full:
			return position{Source: -1, Offset: seen}, true, nil
		}
		if f.room() == 0 {
			n := inv.nextSource(0, caller, vis)
			return position{Source: -1, Offset: seen}, n >= 0, nil
		}
		pos = position{Source: inv.nextSource(0, caller, vis)}
		if pos.Source < 0 {
			return pos, false, nil
		}
	}
	for si := pos.Source; si >= 0; si = inv.nextSource(si+1, caller, vis) {
		after := ""
		if si == pos.Source {
			after = pos.Key
		}
		next, full, err := inv.fillSource(ctx, sc, f, caller, si, after)
		if err != nil || full {
			return next, full, err
		}
		if f.room() == 0 {
			n := inv.nextSource(si+1, caller, vis)
			return position{Source: n}, n >= 0, nil
		}
	}
	return position{}, false, nil
}

// fillStatics adds the static resources caller is shown, from the
// offset-th on, and returns how many shown statics the page has then
// covered and whether it filled up before their end.
func (inv *Inventory) fillStatics(ctx context.Context, sc *scratch, f *filler[Item], caller *principal.Principal, vis *visibility, offset int) (seen int, full bool, err error) {
	if vis.on {
		return inv.fillGatedStatics(ctx, sc, f, vis, offset)
	}
	t := inv.shown.Seek(&sc.statics, caller, offset)
	seen = offset
	for i := t.Peek(); i >= 0; i = t.Peek() {
		if full, err := inv.addStatic(ctx, sc, f, i); full || err != nil {
			return seen, full, err
		}
		seen++
		t.Pop()
	}
	return seen, false, nil
}

// fillGatedStatics is fillStatics in a gated inventory: a walk over the
// caller's visibility bits.
func (inv *Inventory) fillGatedStatics(ctx context.Context, sc *scratch, f *filler[Item], vis *visibility, offset int) (seen int, full bool, err error) {
	for i := range inv.statics {
		if !gateview.Bit(vis.bits, i) {
			continue
		}
		if seen < offset {
			seen++
			continue
		}
		if full, err := inv.addStatic(ctx, sc, f, i); full || err != nil {
			return seen, full, err
		}
		seen++
	}
	return seen, false, nil
}

// addStatic offers static i to the page: full when it did not fit.
func (inv *Inventory) addStatic(ctx context.Context, sc *scratch, f *filler[Item], i int) (full bool, err error) {
	inv.statics[i].itemTo(&sc.item, i)
	if err := f.add(&sc.item); err != nil {
		if err == errFull {
			return true, nil
		}
		return false, inv.failRule(ctx, purposeList, inv.statics[i].res.Name, RuleEntryTooLarge, -1)
	}
	return false, nil
}

// fillSource adds entries of source si after key after until the source
// ends (full false: hand over to the next source) or the page is full
// (full true, next = the position after the last entry added). Each entry
// is validated and then offered to the page, one pass per entry.
func (inv *Inventory) fillSource(ctx context.Context, sc *scratch, f *filler[Item], caller *principal.Principal, si int, after string) (position, bool, error) {
	src := inv.sources[si]
	name := src.tmpl.Name
	for f.room() > 0 {
		req := ListRequest{After: after, Limit: f.room(), Principal: caller}
		res, err := call(ctx, inv, caller, src.tmpl.List, req)
		if err != nil {
			return position{}, false, inv.failCallback(ctx, purposeList, name, caller, err)
		}
		chk := &sc.check
		chk.Escape = true
		if ce := chk.start(name, src.ut, req, res); ce != nil {
			return position{}, false, inv.fail(ctx, purposeList, name, ce)
		}
		for i := range res.Entries {
			e := &res.Entries[i]
			if ce := chk.entry(i); ce != nil {
				return position{}, false, inv.fail(ctx, purposeList, name, ce)
			}
			sc.item = Item{URI: e.URI, Name: chk.Name, MIMEType: e.MIMEType, Plain: chk.Plain}
			if e.MIMEType == "" {
				sc.item.MIMEType, sc.item.Plain = src.tmpl.MIMEType, chk.Plain && src.mimePlain
			}
			if err := f.add(&sc.item); err != nil {
				if err == errFull {
					return position{Source: si, Key: after}, true, nil
				}
				return position{}, false, inv.failRule(ctx, purposeList, name, RuleEntryTooLarge, i)
			}
			after = e.Key
		}
		if !res.HasMore {
			return position{}, false, nil
		}
		if f.room() == 0 {
			return position{Source: si, Key: after}, true, nil
		}
	}
	return position{Source: si, Key: after}, true, nil
}

// nextSource returns the index of the first list source from i on that the
// caller may use, or -1.
func (inv *Inventory) nextSource(i int, caller *principal.Principal, vis *visibility) int {
	for ; i < len(inv.sources); i++ {
		if inv.sourceShown(i, caller, vis) {
			return i
		}
	}
	return -1
}

// shownCount returns the number of static resources resources/list
// shows caller.
func (inv *Inventory) shownCount(sc *scratch, caller *principal.Principal, vis *visibility) int {
	if !vis.on {
		n, _ := inv.shown.Shown(&sc.statics, caller)
		return n
	}
	n := 0
	for i := range inv.statics {
		if gateview.Bit(vis.bits, i) {
			n++
		}
	}
	return n
}

// sourceShown reports whether resources/list calls list source i for
// caller.
func (inv *Inventory) sourceShown(i int, caller *principal.Principal, vis *visibility) bool {
	if vis.on {
		return gateview.Bit(vis.bits, len(inv.statics)+i)
	}
	return usable(inv.sources[i], caller)
}

// usable reports whether caller may call source s: the identity the
// source keys on, and its scopes.
func usable(s *registered, caller *principal.Principal) bool {
	return s.tmpl.Owner.has(caller) && caller.HasScopes(s.scopes...)
}

// visible reports whether caller may see a resource of this access.
func visible(a Access, scopes []string, caller *principal.Principal) bool {
	return a == Public || caller != nil && caller.HasScopes(scopes...)
}

// validPosition reports whether an authentic position makes sense for this
// registry and caller.
func (inv *Inventory) validPosition(sc *scratch, p position, caller *principal.Principal, vis *visibility) bool {
	if p.Source < 0 {
		return p.Offset <= inv.shownCount(sc, caller, vis)
	}
	return p.Source < len(inv.sources) && inv.sourceShown(p.Source, caller, vis)
}

// anySource returns nil if caller may use some list source, else a
// *principal.ScopeError naming the scopes of the first-registered source with
// the fewest scopes missing. Sources hidden by gates or overrides are left
// out (more scopes would not help); when all are, the caller gets the
// static resources only, without an error.
func (inv *Inventory) anySource(caller *principal.Principal, vis *visibility) error {
	best, bestMissing := -1, 0
	for i, s := range inv.sources {
		if vis.on && !gateview.Bit(vis.open, i) || !s.tmpl.Owner.has(caller) {
			continue // hidden, or not the caller's kind of records: scopes would not help
		}
		missing := 0
		for _, sc := range s.scopes {
			if !caller.HasScopes(sc) {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if best < 0 || missing < bestMissing {
			best, bestMissing = i, missing
		}
	}
	if best < 0 {
		return nil
	}
	return &principal.ScopeError{Required: append([]string(nil), inv.sources[best].scopes...)}
}

package inventory

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/budget"
)

// Envelope holds the transport's bytes around a result. The response is
//
//	Head ‖ {result members[,Meta]} ‖ Tail
//
// for example Head = `{"jsonrpc":"2.0","id":7,"result":`, Tail = `}`, and
// Meta = `"ttlMs":0,"cacheScope":"private"`: zero or more complete JSON
// object members, without a leading or trailing comma, that go last in the
// result object. Byte limits count all of it.
type Envelope struct {
	Head, Meta, Tail []byte
	// Buf, when not nil, is storage for the response: the result is
	// assembled from Buf[:0] and returned in Buf's array when it fits, so
	// a transport can recycle response buffers. Nil allocates.
	Buf []byte
}

// List serves resources/list: the static resources the caller may see,
// then the entries of every list source the caller may use, one page at a
// time, and returns the whole response (Head ‖ result ‖ Tail). cursor is
// the request's cursor ("" for the first page).
//
// In a gated inventory, static resources and list sources hidden from the
// caller by gates or overrides are skipped, and cursors are bound to what
// the caller may see (see the package documentation).
//
// Errors: ErrUnauthenticated (list sources exist and caller is nil),
// *authn.ScopeError (the caller may use no list source, and some source is
// held back by scopes alone), *CursorError, ErrInternal (a callback or the
// grant store failed, or a callback broke the contract; logged).
func (inv *Inventory) List(ctx context.Context, caller *authn.Principal, cursor string, env Envelope) ([]byte, error) {
	caller = normalize(caller)
	if len(inv.sources) > 0 && caller == nil {
		return nil, ErrUnauthenticated
	}
	sc := getScratch()
	defer putScratch(sc)
	var vis visibility
	if inv.gated {
		if err := inv.listVisibility(ctx, sc, caller, &vis); err != nil {
			return nil, err
		}
	}
	if len(inv.sources) > 0 {
		if err := inv.anySource(caller, &vis); err != nil {
			return nil, err
		}
	}

	pos, first := position{source: -1}, time.Time{}
	if cursor == "" {
		first = inv.sealer.Now()
	} else {
		payload, f, err := inv.openCursor(sc, purposeList, caller, vis.bits, cursor)
		if err != nil {
			return nil, err
		}
		if pos, err = parsePosition(payload); err != nil || !inv.validPosition(pos, caller, &vis) {
			return nil, &CursorError{Reason: ReasonInvalid}
		}
		first = f
	}

	sc.head = append(append(sc.head[:0], env.Head...), `{"resources":`...)
	sc.tail = appendTail(sc.tail[:0], env)
	page := &sc.page
	err := page.Reset(inv.buffer(&inv.listHint, env.Buf), sc.head, sc.tail, budget.Limits{
		MaxItems: inv.pageSize, MaxBytes: inv.maxBytes, Reserve: inv.listReserve,
	})
	if err != nil {
		return nil, inv.failAssembly(ctx, purposeList, err)
	}

	next, more, err := inv.fill(ctx, sc, page, caller, &vis, pos)
	if err != nil {
		return nil, err
	}
	sc.trailer = sc.trailer[:0]
	if more {
		if sc.trailer, err = inv.appendCursor(sc, purposeList, caller, vis.bits, appendPosition(sc.payload[:0], next), first); err != nil {
			return nil, inv.failAssembly(ctx, purposeList, err)
		}
	}
	out, err := page.Finish(sc.trailer)
	if err != nil {
		return nil, inv.failAssembly(ctx, purposeList, err)
	}
	inv.listHint.Store(int64(len(out)))
	return out, nil
}

// buffer returns the storage for a response: the transport's Buf when it
// gave one, else a new buffer sized after the previous response (so that a
// typical page neither grows nor wastes memory).
func (inv *Inventory) buffer(hint *atomic.Int64, buf []byte) []byte {
	if buf != nil {
		return buf
	}
	n := int(hint.Load())
	if n == 0 {
		n = 4096
	}
	return make([]byte, 0, min(n+n/4+256, inv.maxBytes))
}

// appendTail returns (`,` Meta) `}` Tail.
func appendTail(dst []byte, env Envelope) []byte {
	if len(env.Meta) > 0 {
		dst = append(dst, ',')
		dst = append(dst, env.Meta...)
	}
	dst = append(dst, '}')
	return append(dst, env.Tail...)
}

// appendCursor seals payload and returns sc.trailer = `,"nextCursor":"…"`.
// vis is the caller's visibility vector (nil without gates).
func (inv *Inventory) appendCursor(sc *scratch, purpose string, caller *authn.Principal, vis, payload []byte, first time.Time) ([]byte, error) {
	sc.payload = payload
	sc.bind = inv.appendBinding(sc.bind[:0], purpose, caller, vis)
	t := append(sc.trailer[:0], `,"nextCursor":"`...)
	t, err := inv.sealer.AppendSeal(t, sc.bind, payload, first) // base64url: nothing to escape
	if err != nil {
		return nil, err
	}
	return append(t, '"'), nil
}

// fill adds the items from pos on and returns the position after the last
// one and whether more may follow.
func (inv *Inventory) fill(ctx context.Context, sc *scratch, page *budget.Page, caller *authn.Principal, vis *visibility, pos position) (position, bool, error) {
	if pos.source < 0 {
		seen := 0
		for i := range inv.statics {
			st := &inv.statics[i]
			if !inv.staticShown(i, caller, vis) {
				continue
			}
			if seen < pos.offset {
				seen++
				continue
			}
			if err := page.Add(st.enc); err != nil {
				if errors.Is(err, budget.ErrFull) {
					return position{source: -1, offset: seen}, true, nil
				}
				return pos, false, inv.failRule(ctx, purposeList, st.res.Name, RuleEntryTooLarge, -1)
			}
			seen++
		}
		if page.Room() == 0 {
			n := inv.nextSource(0, caller, vis)
			return position{source: -1, offset: seen}, n >= 0, nil
		}
		pos = position{source: inv.nextSource(0, caller, vis)}
		if pos.source < 0 {
			return pos, false, nil
		}
	}
	for si := pos.source; si >= 0; si = inv.nextSource(si+1, caller, vis) {
		after := ""
		if si == pos.source {
			after = pos.key
		}
		next, full, err := inv.fillSource(ctx, sc, page, caller, si, after)
		if err != nil || full {
			return next, full, err
		}
		if page.Room() == 0 {
			n := inv.nextSource(si+1, caller, vis)
			return position{source: n}, n >= 0, nil
		}
	}
	return position{}, false, nil
}

// fillSource adds entries of source si after key after until the source
// ends (full false: hand over to the next source) or the page is full
// (full true, next = the position after the last entry added).
func (inv *Inventory) fillSource(ctx context.Context, sc *scratch, page *budget.Page, caller *authn.Principal, si int, after string) (position, bool, error) {
	src := inv.sources[si]
	name := src.tmpl.Name
	for page.Room() > 0 {
		req := ListRequest{After: after, Limit: page.Room(), Principal: *caller}
		res, err := call(ctx, inv, src.tmpl.List, req)
		if err != nil {
			return position{}, false, inv.fail(ctx, purposeList, name, err)
		}
		if ce := validatePage(name, src.ut, req, res); ce != nil {
			return position{}, false, inv.fail(ctx, purposeList, name, ce)
		}
		for i := range res.Entries {
			e := &res.Entries[i]
			sc.item = appendEntry(sc.item[:0], e, src.tmpl.MIMEType)
			if err := page.Add(sc.item); err != nil {
				if errors.Is(err, budget.ErrFull) {
					return position{source: si, key: after}, true, nil
				}
				return position{}, false, inv.failRule(ctx, purposeList, name, RuleEntryTooLarge, i)
			}
			after = e.Key
		}
		if !res.HasMore {
			return position{}, false, nil
		}
		if page.Room() == 0 {
			return position{source: si, key: after}, true, nil
		}
	}
	return position{source: si, key: after}, true, nil
}

// nextSource returns the index of the first list source from i on that the
// caller may use, or -1.
func (inv *Inventory) nextSource(i int, caller *authn.Principal, vis *visibility) int {
	for ; i < len(inv.sources); i++ {
		if inv.sourceShown(i, caller, vis) {
			return i
		}
	}
	return -1
}

// staticShown reports whether resources/list shows static i to caller.
func (inv *Inventory) staticShown(i int, caller *authn.Principal, vis *visibility) bool {
	if vis.on {
		return bitOf(vis.bits, i)
	}
	st := &inv.statics[i]
	return visible(st.res.Access, st.scopes, caller)
}

// sourceShown reports whether resources/list calls list source i for
// caller.
func (inv *Inventory) sourceShown(i int, caller *authn.Principal, vis *visibility) bool {
	if vis.on {
		return bitOf(vis.bits, len(inv.statics)+i)
	}
	return usable(inv.sources[i], caller)
}

// usable reports whether caller may call source s.
func usable(s *registered, caller *authn.Principal) bool {
	return caller != nil && caller.HasScopes(s.scopes...)
}

// visible reports whether caller may see a resource of this access.
func visible(a Access, scopes []string, caller *authn.Principal) bool {
	return a == Public || caller != nil && caller.HasScopes(scopes...)
}

// validPosition reports whether an authentic position makes sense for this
// registry and caller.
func (inv *Inventory) validPosition(p position, caller *authn.Principal, vis *visibility) bool {
	if p.source < 0 {
		n := 0
		for i := range inv.statics {
			if inv.staticShown(i, caller, vis) {
				n++
			}
		}
		return p.offset <= n
	}
	return p.source < len(inv.sources) && inv.sourceShown(p.source, caller, vis)
}

// anySource returns nil if caller may use some list source, else a
// *authn.ScopeError naming the scopes of the first-registered source with
// the fewest scopes missing. Sources hidden by gates or overrides are left
// out (more scopes would not help); when all are, the caller gets the
// static resources only, without an error.
func (inv *Inventory) anySource(caller *authn.Principal, vis *visibility) error {
	best, bestMissing := -1, 0
	for i, s := range inv.sources {
		if vis.on && !bitOf(vis.open, i) {
			continue
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
	return &authn.ScopeError{Required: append([]string(nil), inv.sources[best].scopes...)}
}

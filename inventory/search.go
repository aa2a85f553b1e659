package inventory

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/principal"
)

const methodSearch = "search"

// Limits of a search.
const (
	// MaxSearchLimit is the largest SearchRequest.Limit, and the most hits
	// one [Inventory.Search] returns.
	MaxSearchLimit = 50
	// MaxQueryLen is the longest query, in UTF-16 code units.
	MaxQueryLen = 1024
)

// SearchRequest is what a SearchFunc receives.
type SearchRequest struct {
	// Query is the caller's query: 1..MaxQueryLen characters (UTF-16 code
	// units) of UTF-8 without control characters, exactly as the client
	// sent it. Treat it as data (a bound parameter), never as query syntax
	// of the database.
	Query string
	// Limit is the most hits the answer may hold, 1..MaxSearchLimit.
	Limit int
	// Principal is the authenticated caller, never nil here: a search
	// source is asked only for a signed-in caller (an anonymous one gets
	// principal.ErrUnauthenticated from [Inventory.Search] first). Search
	// only records it may see, with ownership in the query itself, as in
	// a ListFunc. The identity the template's Owner names is never empty
	// here. It is the kit's own: read it, do not modify it.
	Principal *principal.Principal
}

// SearchFunc returns at most Limit records of the caller that match the
// query, best first.
//
// Returning a [*principal.ScopeError] says this one record needs a scope
// the caller lacks (proj:7 of a template whose RequiredScopes cannot name
// every project): the caller gets the 403 insufficient_scope challenge
// naming its Required scopes, as for a static RequiredScopes miss, so a
// client can step up (see "Scopes per record" in the package
// documentation).
type SearchFunc func(ctx context.Context, req SearchRequest) ([]SearchHit, error)

// SearchHit is one record a SearchFunc found. It is checked like a listed
// entry: the URI must match the template (≤ 2048 characters, unique in the
// answer), the Name must be 1..512 characters (UTF-16 code units) of UTF-8
// without control characters ([ClipName] clips a longer title).
type SearchHit struct {
	URI, Name string
}

// HasSearch reports whether some template has a Search callback: only
// then does a transport offer search.
func (inv *Inventory) HasSearch() bool { return len(inv.searchers) > 0 }

// Search asks every search source the caller may use, in registration
// order, for hits of query, and returns at most limit of them (the first
// source's first). A source is usable exactly when a list source would
// be: the caller has the identity its template's Owner names, holds its
// RequiredScopes, and passes its gates and overrides. What Search returns
// is never a grant: reads of the hits check access again.
//
// Errors: principal.ErrUnauthenticated (caller is nil), *ParamsError (a query that
// is empty, too long or holds control characters; a limit outside
// 1..MaxSearchLimit), *principal.ScopeError (the caller may use no source, and
// some source is held back by scopes alone), ErrInternal (a callback or
// the grant store failed, or a callback broke the contract; logged).
// Without search sources, Search returns no hits and no error.
func (inv *Inventory) Search(ctx context.Context, caller *principal.Principal, query string, limit int) ([]SearchHit, error) {
	if len(inv.searchers) == 0 {
		return nil, nil
	}
	if caller == nil {
		return nil, principal.ErrUnauthenticated
	}
	if query == "" || contract.Longer(query, MaxQueryLen) || !display.Printable(query) {
		return nil, &ParamsError{Problems: []string{"the query must be 1..1024 characters without control characters"}}
	}
	if limit < 1 || limit > MaxSearchLimit {
		return nil, &ParamsError{Problems: []string{"the limit must be 1..50"}}
	}
	usable, err := inv.searchSources(ctx, caller)
	if err != nil {
		return nil, err
	}
	var hits []SearchHit
	seen := make(map[string]struct{}, limit)
	for _, rt := range usable {
		room := limit - len(hits)
		if room == 0 {
			break
		}
		req := SearchRequest{Query: query, Limit: room, Principal: caller}
		res, err := call(ctx, inv, caller, rt.tmpl.Search, req)
		if err != nil {
			return nil, inv.failCallback(ctx, methodSearch, rt.tmpl.Name, caller, err)
		}
		if len(res) > room {
			return nil, inv.failRule(ctx, methodSearch, rt.tmpl.Name, RuleTooManyEntries, -1)
		}
		for i := range res {
			h := &res[i]
			name := h.Name
			rule := broken(contract.EntryURI(rt.ut, h.URI, false))
			if rule == "" {
				rule = broken(contract.EscapeName(&name, true)) // a stored title is escaped, never fails the search
			}
			if _, dup := seen[h.URI]; rule == "" && dup {
				rule = RuleURIDuplicate
			}
			if rule != "" {
				return nil, inv.failRule(ctx, methodSearch, rt.tmpl.Name, rule, i)
			}
			seen[h.URI] = struct{}{}
			hits = append(hits, SearchHit{URI: h.URI, Name: name})
		}
	}
	return hits, nil
}

// searchSources returns the search sources the caller may use, in
// registration order, or a *principal.ScopeError when there is none and some
// source is held back by its scopes alone.
func (inv *Inventory) searchSources(ctx context.Context, caller *principal.Principal) ([]*registered, error) {
	v := inv.newGateView(ctx, methodSearch, caller)
	var out []*registered
	var closest *registered
	closestMissing := 0
	for _, rt := range inv.searchers {
		if inv.gated {
			ok, err := v.Open(rt.tmpl.Name, rt.gates)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // hidden: scopes would not help
			}
		}
		if !rt.tmpl.Owner.has(caller) {
			continue
		}
		missing := 0
		for _, sc := range rt.scopes {
			if !caller.HasScopes(sc) {
				missing++
			}
		}
		if missing == 0 {
			out = append(out, rt)
		} else if closest == nil || missing < closestMissing {
			closest, closestMissing = rt, missing
		}
	}
	if len(out) == 0 && closest != nil {
		return nil, &principal.ScopeError{Required: append([]string(nil), closest.scopes...)}
	}
	return out, nil
}

// Reach says which of an inventory's operations one caller may use now: a
// transport that offers them as tools shows each caller only those.
type Reach struct {
	// List: resources/list serves the caller, without asking for
	// authentication or scopes.
	List bool
	// Read: some static resource or template is readable by the caller
	// (access, scopes, owner, gates and overrides; not the handlers'
	// record checks).
	Read bool
	// Search: some search source is usable by the caller.
	Search bool
	// Templates names the templates whose URIs the caller may read, in
	// registration order.
	Templates []string
}

// Reach decides what caller (nil: anonymous) may use, loading its grants
// at most once. Errors: ErrInternal (the grant store or a gate policy
// failed; logged).
func (inv *Inventory) Reach(ctx context.Context, caller *principal.Principal) (Reach, error) {
	var r Reach
	v := inv.newGateView(ctx, "reach", caller)
	open := func(key string, gates []int) (bool, error) {
		if !inv.gated {
			return true, nil
		}
		return v.Open(key, gates)
	}
	for i := range inv.statics {
		st := &inv.statics[i]
		if checkCaller(st.res.Access, st.scopes(), caller) != nil {
			continue
		}
		ok, err := open(st.res.URI, st.gates)
		if err != nil {
			return Reach{}, err
		}
		r.Read = r.Read || ok
	}
	for _, rt := range inv.templates {
		if checkTemplate(rt, caller) != nil {
			continue
		}
		ok, err := open(rt.tmpl.Name, rt.gates)
		if err != nil {
			return Reach{}, err
		}
		if ok {
			r.Read = true
			r.Templates = append(r.Templates, rt.tmpl.Name)
		}
	}
	var err error
	if r.List, err = inv.canList(caller, open); err != nil {
		return Reach{}, err
	}
	if caller != nil && len(inv.searchers) > 0 {
		usable, err := inv.searchSources(ctx, caller)
		var scopeErr *principal.ScopeError
		if err != nil && !errors.As(err, &scopeErr) {
			return Reach{}, err
		}
		r.Search = len(usable) > 0
	}
	return r, nil
}

// canList reports whether resources/list serves caller. It refuses a
// caller only for authentication (list sources exist and there is no
// caller) or for scopes (some source the caller's identity and gates
// admit, and every such one short of scopes); see List and anySource.
func (inv *Inventory) canList(caller *principal.Principal, open func(string, []int) (bool, error)) (bool, error) {
	if len(inv.sources) == 0 {
		return true, nil
	}
	if caller == nil {
		return false, nil
	}
	blocked := false
	for _, s := range inv.sources {
		ok, err := open(s.tmpl.Name, s.gates)
		if err != nil {
			return false, err
		}
		if !ok || !s.tmpl.Owner.has(caller) {
			continue
		}
		if caller.HasScopes(s.scopes...) {
			return true, nil
		}
		blocked = true
	}
	return !blocked, nil
}

// TemplateInfo describes a registered template, for a transport that
// offers it as a tool.
type TemplateInfo struct {
	Name, Title, Description, URITemplate string
	// Variables are the template's variable names, in order.
	Variables []string
	Access    Access
	Hidden    bool
	// RequiredScopes are the scopes a caller needs to read the
	// template's URIs (a copy).
	RequiredScopes []string
}

// Template returns the description of the template named name, and
// whether there is one.
func (inv *Inventory) Template(name string) (TemplateInfo, bool) {
	for _, rt := range inv.templates {
		if rt.tmpl.Name == name {
			t := rt.tmpl
			return TemplateInfo{Name: t.Name, Title: t.Title, Description: t.Description, URITemplate: t.URITemplate,
				Variables: append([]string(nil), rt.ut.Vars()...), Access: t.Access, Hidden: t.Hidden,
				RequiredScopes: append([]string(nil), rt.scopes...)}, true
		}
	}
	return TemplateInfo{}, false
}

package inventory

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/principal"
)

const methodRead = "resources/read"

// Read serves resources/read: the static resource with exactly this URI,
// else the one template that matches it. Access is checked on every read:
// a resource or template hidden from the caller by gates or overrides is
// ErrNotFound, as if it did not exist (also for an anonymous caller); a
// protected resource needs an authenticated caller (principal.ErrUnauthenticated)
// holding its scopes (*principal.ScopeError); then the template's Validate
// rules run (*ParamsError naming the rejected variables); then the handler,
// which must apply record ownership. No match, and a handler returning
// ErrNotFound, are ErrNotFound. Anything else the handler returns, and
// contents that break the rules (no item, empty or long URI, bad MIME type,
// text that is not UTF-8, more bytes than the limit), and a failing grant
// store, are logged and reported as ErrInternal.
func (inv *Inventory) Read(ctx context.Context, caller *principal.Principal, uri string) ([]Contents, error) {
	if i, ok := inv.staticIndex[uri]; ok {
		st := &inv.statics[i]
		if inv.gated {
			if err := inv.reveal(ctx, methodRead, caller, st.res.URI, st.gates); err != nil {
				return nil, err
			}
		}
		if err := checkCaller(st.res.Access, st.scopes(), caller); err != nil {
			return nil, err
		}
		return inv.runRead(ctx, st.res.Name, st.res.Read, ReadRequest{URI: uri, Principal: caller})
	}
	rt, params := inv.matchTemplate(uri)
	if rt == nil {
		return nil, ErrNotFound
	}
	if inv.gated {
		if err := inv.reveal(ctx, methodRead, caller, rt.tmpl.Name, rt.gates); err != nil {
			return nil, err
		}
	}
	if err := checkTemplate(rt, caller); err != nil {
		return nil, err
	}
	if err := inv.validateParams(ctx, rt, params); err != nil {
		return nil, err
	}
	return inv.runRead(ctx, rt.tmpl.Name, rt.tmpl.Read, ReadRequest{URI: uri, Params: params, Principal: caller})
}

// matchTemplate returns the template matching uri (at most one can: New
// rejects overlapping templates) and its decoded variables.
func (inv *Inventory) matchTemplate(uri string) (*registered, map[string]string) {
	if contract.Longer(uri, contract.MaxURILen) {
		return nil, nil
	}
	for _, rt := range inv.templates {
		if params, ok := rt.ut.Params(uri); ok {
			return rt, params
		}
	}
	return nil, nil
}

// checkCaller applies an access mode to the caller.
func checkCaller(a Access, scopes []string, caller *principal.Principal) error {
	if a == Public {
		return nil
	}
	if caller == nil {
		return principal.ErrUnauthenticated
	}
	if !caller.HasScopes(scopes...) {
		return &principal.ScopeError{Required: append([]string(nil), scopes...)}
	}
	return nil
}

// checkTemplate applies a template's access mode and owner to the caller:
// a protected template's callbacks never see a caller without the
// identity they key on (ErrNotFound: such a caller has no records here).
func checkTemplate(rt *registered, caller *principal.Principal) error {
	if err := checkCaller(rt.tmpl.Access, rt.scopes, caller); err != nil {
		return err
	}
	if rt.tmpl.Access == Protected && !rt.tmpl.Owner.has(caller) {
		return ErrNotFound
	}
	return nil
}

// validateParams runs the template's Validate rules in variable order and
// collects every failure.
func (inv *Inventory) validateParams(ctx context.Context, rt *registered, params map[string]string) error {
	var problems []string
	for _, name := range rt.ut.Vars() {
		rule := rt.tmpl.Validate[name]
		if rule == nil {
			continue
		}
		err := runRule(rule, params[name])
		var pe *panicError
		if errors.As(err, &pe) {
			return inv.fail(ctx, methodRead, rt.tmpl.Name, err)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("invalid value for variable %q", name))
		}
	}
	if problems != nil {
		return &ParamsError{Problems: problems}
	}
	return nil
}

func runRule(rule func(string) error, v string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{Value: r}
		}
	}()
	return rule(v)
}

func (inv *Inventory) runRead(ctx context.Context, source string, read ReadFunc, req ReadRequest) ([]Contents, error) {
	contents, err := call(ctx, inv, req.Principal, read, req)
	if err != nil {
		if errors.Is(err, ErrNotFound) && ctx.Err() == nil {
			return nil, ErrNotFound
		}
		return nil, inv.failCallback(ctx, methodRead, source, req.Principal, err)
	}
	if i, ok := inv.checkContents(contents); !ok {
		return nil, inv.failRule(ctx, methodRead, source, RuleContentsInvalid, i)
	}
	return contents, nil
}

// checkContents validates read contents and returns the index of the
// first bad item (-1 for the whole result).
func (inv *Inventory) checkContents(cs []Contents) (int, bool) {
	if len(cs) == 0 {
		return -1, false
	}
	for i := range cs {
		c := &cs[i]
		if c.URI == "" || contract.Longer(c.URI, contract.MaxURILen) || !contract.PlainURI(c.URI) || contract.MIME(c.MIMEType) != contract.OK {
			return i, false
		}
		if c.Blob == nil && !utf8.ValidString(c.Text) {
			return i, false
		}
	}
	return -1, true
}

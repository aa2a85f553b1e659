package inventory

import (
	"context"
	"errors"
	"slices"

	"github.com/mcpkit/mcpkit/principal"
)

const methodComplete = "completion/complete"

// MaxCompletionValues is the most values a completion result carries.
const MaxCompletionValues = 100

// Complete serves completion/complete for a ref/resource reference: ref is
// a template's URITemplate exactly, or else a concrete URI that matches a
// template. arg names the variable to complete and value is its partial
// value; args holds the other variables resolved so far (only the
// template's variable names are passed on).
//
// Errors: *ParamsError (unknown template, or one hidden from the caller by
// gates or overrides, or arg not a variable of it), principal.ErrUnauthenticated and
// *principal.ScopeError (as for Read on a protected template), ErrInternal
// (the callback or the grant store failed; logged). A variable without a
// completion callback gets an empty Completion.
func (inv *Inventory) Complete(ctx context.Context, caller *principal.Principal, ref, arg, value string, args map[string]string) (Completion, error) {
	rt := inv.byTemplate[ref]
	if rt == nil {
		rt, _ = inv.matchTemplate(ref)
	}
	if rt == nil {
		return Completion{}, errUnknownTemplate()
	}
	if inv.gated {
		if err := inv.reveal(ctx, methodComplete, caller, rt.tmpl.Name, rt.gates); err != nil {
			if errors.Is(err, ErrNotFound) {
				return Completion{}, errUnknownTemplate() // hidden looks unknown
			}
			return Completion{}, err
		}
	}
	if err := checkTemplate(rt, caller); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Completion{}, errUnknownTemplate()
		}
		return Completion{}, err
	}
	if !slices.Contains(rt.ut.Vars(), arg) {
		return Completion{}, &ParamsError{Problems: []string{"argument is not a variable of the template"}}
	}
	f := rt.tmpl.Complete[arg]
	if f == nil {
		return Completion{Values: []string{}}, nil
	}
	req := CompleteRequest{Argument: arg, Value: value, Principal: caller}
	for _, name := range rt.ut.Vars() {
		if v, ok := args[name]; ok {
			if req.Context == nil {
				req.Context = make(map[string]string, len(rt.ut.Vars()))
			}
			req.Context[name] = v
		}
	}
	c, err := call(ctx, inv, caller, f, req)
	if err != nil {
		return Completion{}, inv.failCallback(ctx, methodComplete, rt.tmpl.Name, caller, err)
	}
	return normalizeCompletion(c), nil
}

// normalizeCompletion keeps at most MaxCompletionValues values and settles
// Total: it is known when the callback set it, or when the callback said it
// returned every match (HasMore false; then Total is the number of values
// it returned, also when the kit drops some). Otherwise it stays zero, and
// HasMore is true: the total is unknown.
func normalizeCompletion(c Completion) Completion {
	n := len(c.Values)
	if c.Total > 0 || !c.HasMore {
		c.Total = max(c.Total, n)
	}
	if n > MaxCompletionValues {
		c.Values = slices.Clone(c.Values[:MaxCompletionValues])
		c.HasMore = true
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return c
}

// errUnknownTemplate is the answer for a template that does not exist or
// that the caller may not see.
func errUnknownTemplate() error {
	return &ParamsError{Problems: []string{"unknown resource template"}}
}

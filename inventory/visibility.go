package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/internal/gateview"
	"github.com/mcpkit/mcpkit/principal"
)

// Registry side: gate definitions and attachments, checked by New.

// setupGates validates the gate definitions and the global attachments,
// and chooses the grant store.
func (inv *Inventory) setupGates(opts Options) error {
	inv.gateIndex = make(map[string]int, len(opts.Gates))
	for i, g := range opts.Gates {
		if !validGateName(g.Name) {
			return fmt.Errorf("inventory: gate %d: name must be 1..%d bytes of RFC 6749 scope-token characters", i, maxGateNameBytes)
		}
		if _, dup := inv.gateIndex[g.Name]; dup {
			return fmt.Errorf("inventory: gate %d: duplicate name %q", i, g.Name)
		}
		inv.gateIndex[g.Name] = i
		inv.gates = append(inv.gates, g)
	}
	global, err := inv.attach(nil, opts.GlobalGates)
	if err != nil {
		return fmt.Errorf("inventory: global gates: %w", err)
	}
	inv.global = global
	inv.store = opts.Grants
	if inv.store == nil && len(inv.gates) > 0 {
		inv.store = grants.NewMemory()
	}
	inv.gated = inv.store != nil
	inv.setupView()
	if opts.Notifier != nil {
		n := opts.Notifier
		inv.notifier.Store(&n)
	}
	return nil
}

// attach resolves gate names to indices and merges them with base (the
// global gates): sorted, without duplicates. Unknown or repeated names are
// errors.
func (inv *Inventory) attach(base []int, names []string) ([]int, error) {
	if len(names) == 0 {
		return base, nil
	}
	out := slices.Clone(base)
	for j, name := range names {
		i, ok := inv.gateIndex[name]
		if !ok {
			return nil, fmt.Errorf("unknown gate %q", name)
		}
		if slices.Contains(names[:j], name) {
			return nil, fmt.Errorf("gate %q named twice", name)
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkOverrideNames rejects a registry where a template's name equals a
// static resource's URI when grants are in use: Enable and Disable name
// either, and must know which.
func (inv *Inventory) checkOverrideNames() error {
	if !inv.gated {
		return nil
	}
	for _, rt := range inv.templates {
		if _, clash := inv.staticIndex[rt.tmpl.Name]; clash {
			return fmt.Errorf("inventory: template name %q is also a static resource's URI: Enable and Disable could not tell them apart", rt.tmpl.Name)
		}
	}
	return nil
}

// Request side: one request's view of gates and grants (gateview).

// setupView prepares what one request's view of the gates needs
// (gateview.Gates): once, in New, so that a view costs no allocation.
func (inv *Inventory) setupView() {
	inv.view.Index = inv.gateIndex
	inv.view.Policies = make([]gateview.Policy, len(inv.gates))
	for i, g := range inv.gates {
		inv.view.Policies[i] = gateview.Policy(g.Policy)
	}
	inv.view.Load = func(ctx context.Context, method string, caller *principal.Principal) (grants.Grants, error) {
		g, err := inv.loadGrants(ctx, caller) // issuer-qualified with several issuers
		if err != nil {
			return grants.Grants{}, inv.failGrants(ctx, method, err)
		}
		return g, nil
	}
	inv.view.FailPolicy = func(ctx context.Context, method string, i int, err error) error {
		return inv.fail(ctx, method, "gate "+inv.gates[i].Name, err)
	}
}

func (inv *Inventory) newGateView(ctx context.Context, method string, caller *principal.Principal) gateview.View {
	return inv.view.View(ctx, method, caller)
}

// loadGrants calls the store like a callback: with the callback timeout
// and panics recovered. The in-memory store neither blocks nor needs them.
func (inv *Inventory) loadGrants(ctx context.Context, caller *principal.Principal) (g grants.Grants, err error) {
	subject := caller.Key() // issuer-qualified with several issuers
	if m, ok := inv.store.(*grants.Memory); ok {
		return m.Grants(ctx, subject)
	}
	return call(ctx, inv, caller, inv.store.Grants, subject)
}

// failGrants logs a failed grant store and returns ErrInternal.
func (inv *Inventory) failGrants(ctx context.Context, method string, err error) error {
	var pe *panicError
	attrs := []slog.Attr{slog.String("method", method), slog.String("source", "grants")}
	switch {
	case errors.As(err, &pe):
		attrs = append(attrs, slog.String("rule", string(RuleCallbackPanic)),
			slog.String("panic", fmt.Sprint(pe.Value)), slog.String("stack", string(pe.Stack)))
	case ruleOf(ctx, err) == RuleDeadline:
		attrs = append(attrs, slog.String("rule", string(RuleDeadline)), slog.String("error", err.Error()))
	default:
		attrs = append(attrs, slog.String("rule", string(ruleGrantStore)), slog.String("error", err.Error()))
	}
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: grant store failed", attrs...)
	return ErrInternal
}

// visibility is what a gated inventory shows one caller in
// resources/list. bits holds one bit per static resource, then one per
// list source: may the caller see it (access, scopes, gates and overrides
// together); cursors are bound to it. open holds one bit per list source:
// do gates and overrides alone let the caller in. on is false (and the
// rest unused) when the inventory has no gates.
type visibility struct {
	on         bool
	bits, open []byte
}

// listVisibility decides, for a gated inventory, every static resource and
// list source for this caller, loading the grants once.
func (inv *Inventory) listVisibility(ctx context.Context, sc *scratch, caller *principal.Principal, vis *visibility) error {
	v := inv.newGateView(ctx, purposeList, caller)
	n := len(inv.statics)
	sc.vis = gateview.Zeroed(sc.vis, (n+len(inv.sources)+7)/8)
	sc.open = gateview.Zeroed(sc.open, (len(inv.sources)+7)/8)
	for i := range inv.statics {
		st := &inv.statics[i]
		if !visible(st.res.Access, st.scopes(), caller) {
			continue
		}
		ok, err := v.Open(st.res.URI, st.gates)
		if err != nil {
			return err
		}
		if ok {
			gateview.SetBit(sc.vis, i)
		}
	}
	for i, s := range inv.sources {
		ok, err := v.Open(s.tmpl.Name, s.gates)
		if err != nil {
			return err
		}
		if ok {
			gateview.SetBit(sc.open, i)
			if usable(s, caller) {
				gateview.SetBit(sc.vis, n+i)
			}
		}
	}
	vis.on, vis.bits, vis.open = true, sc.vis, sc.open
	return nil
}

// templatesVisibility decides, for a gated inventory, which templates
// resources/templates/list shows this caller; cursors are bound to it.
func (inv *Inventory) templatesVisibility(ctx context.Context, sc *scratch, caller *principal.Principal) ([]byte, error) {
	v := inv.newGateView(ctx, purposeTemplates, caller)
	sc.vis = gateview.Zeroed(sc.vis, (len(inv.templates)+7)/8)
	for i, rt := range inv.templates {
		if !inv.discoverable(rt, caller) {
			continue
		}
		ok, err := v.Open(rt.tmpl.Name, rt.gates)
		if err != nil {
			return nil, err
		}
		if ok {
			gateview.SetBit(sc.vis, i)
		}
	}
	return sc.vis, nil
}

// reveal answers, for one request on one resource or template of a gated
// inventory, whether gates and overrides let the caller see it: nil, or
// ErrNotFound (hidden), or ErrInternal (logged).
func (inv *Inventory) reveal(ctx context.Context, method string, caller *principal.Principal, key string, gates []int) error {
	v := inv.newGateView(ctx, method, caller)
	ok, err := v.Open(key, gates)
	switch {
	case err != nil:
		return err
	case !ok:
		return ErrNotFound
	}
	return nil
}

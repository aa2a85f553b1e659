package inventory

import (
	"context"

	"github.com/mcpkit/mcpkit/inventory/internal/gateview"
	"github.com/mcpkit/mcpkit/principal"
)

// Gates for what the inventory does not serve: a transport part that
// offers something of its own (a service's tool, say) guards it with the
// inventory's gates, so that it is hidden exactly from the callers the
// same gates hide resources from.

// HasGate reports whether the inventory defines a gate named name
// (Options.Gates).
func (inv *Inventory) HasGate(name string) bool {
	_, ok := inv.gateIndex[name]
	return ok
}

// GateCheck decides gates for one caller: it loads the caller's grants
// at most once, when a gate needs them, and runs each gate's policy at
// most once, however many times Pass is asked. Make one per request with
// [Inventory.CheckGates]; it is not safe for concurrent use. The zero
// GateCheck is that of an inventory without gates.
type GateCheck struct {
	inv *Inventory
	v   gateview.View
}

// CheckGates returns a GateCheck for caller (nil: anonymous) under ctx,
// which grant store and policies are called with.
func (inv *Inventory) CheckGates(ctx context.Context, caller *principal.Principal) *GateCheck {
	return &GateCheck{inv: inv, v: inv.newGateView(ctx, "gates", caller)}
}

// Pass reports whether the caller passes every gate named and the
// inventory's global gates (Options.GlobalGates): what it would need to
// see a resource whose Gates are gates. A caller passes a gate when its
// policy admits it or its subject was authorized for the gate. Overrides
// (Enable, Disable) do not apply: they name resources and templates.
// With no gates named and no global gates, Pass is true without loading
// anything.
//
// Errors: ErrUnknownGate (a name the inventory does not define: nobody
// passes it), ErrInternal (the grant store or a policy failed; logged).
func (g *GateCheck) Pass(gates ...string) (bool, error) {
	inv := g.inv
	if inv == nil { // the zero GateCheck: of an inventory without gates
		inv = &Inventory{}
	}
	if len(gates) == 0 && len(inv.global) == 0 {
		return true, nil
	}
	for _, name := range gates {
		if !inv.HasGate(name) {
			return false, ErrUnknownGate
		}
	}
	if err := g.v.Load(); err != nil {
		return false, err
	}
	for _, i := range inv.global {
		if ok, err := g.v.Pass(i); err != nil || !ok {
			return false, err
		}
	}
	for _, name := range gates {
		if ok, err := g.v.Pass(inv.gateIndex[name]); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

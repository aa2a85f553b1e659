package inventory

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/principal"
)

// Errors of the grant methods ([Inventory.Authorize] and the others).
// They go to the application, never to a client.
var (
	// ErrUnknownGate: the inventory defines no gate of that name.
	ErrUnknownGate = errors.New("inventory: unknown gate")
	// ErrUnknownResource: no static resource has that URI and no template
	// has that name.
	ErrUnknownResource = errors.New("inventory: unknown resource or template")
	// ErrNoGrants: the inventory keeps no grants (no gate is defined and
	// Options.Grants is nil).
	ErrNoGrants = errors.New("inventory: no grant store (define a gate or set Options.Grants)")
)

// Authorize lets subject pass gate whatever the gate's policy says, from
// the subject's next request on, by applying the change to the grant
// store. It reports whether the grants changed; when they did, it tells
// Options.Notifier that subject's list may have changed.
//
// subject is the caller's identity key, [principal.Principal.Key]: the bare
// subject with one trusted issuer, [principal.SubjectKey](issuer, subject)
// with several, so that a grant to alice of one issuer is not alice's of
// another.
//
// Errors: ErrNoGrants, ErrUnknownGate, an invalid subject (empty, over
// 1280 characters, or with control characters), or the store's error
// (wrapped).
func (inv *Inventory) Authorize(ctx context.Context, subject, gate string) (bool, error) {
	return inv.apply(ctx, subject, grants.Change{Op: grants.OpAuthorize, Name: gate})
}

// Revoke withdraws an [Inventory.Authorize]: the gate's policy decides
// again for subject. It reports and notifies like Authorize.
func (inv *Inventory) Revoke(ctx context.Context, subject, gate string) (bool, error) {
	return inv.apply(ctx, subject, grants.Change{Op: grants.OpRevoke, Name: gate})
}

// Enable shows resource (a static resource's URI, or a template's name)
// to subject whatever its gates say; access and required scopes still
// apply. It replaces a Disable, and reports and notifies like Authorize
// (ErrUnknownResource for a name the inventory does not have).
func (inv *Inventory) Enable(ctx context.Context, subject, resource string) (bool, error) {
	return inv.apply(ctx, subject, grants.Change{Op: grants.OpEnable, Name: resource})
}

// Disable hides resource (a static resource's URI, or a template's name)
// from subject whatever its gates say: lists leave it out and reads
// answer as for an unknown URI. It replaces an Enable, and reports and
// notifies like Authorize.
func (inv *Inventory) Disable(ctx context.Context, subject, resource string) (bool, error) {
	return inv.apply(ctx, subject, grants.Change{Op: grants.OpDisable, Name: resource})
}

// maxGrantKey bounds a grant's subject key: a subject of 256 characters
// qualified by an issuer URL of up to 1023 ([principal.SubjectKey]).
const maxGrantKey = 1280

func (inv *Inventory) apply(ctx context.Context, subject string, c grants.Change) (bool, error) {
	if !inv.gated {
		return false, ErrNoGrants
	}
	if subject == "" || contract.Longer(subject, maxGrantKey) || !display.Printable(subject) {
		return false, errors.New("inventory: a grant needs a subject key of 1..1280 characters without control characters")
	}
	switch c.Op {
	case grants.OpAuthorize, grants.OpRevoke:
		if _, ok := inv.gateIndex[c.Name]; !ok {
			return false, ErrUnknownGate
		}
	case grants.OpEnable, grants.OpDisable:
		if !inv.hasResource(c.Name) {
			return false, ErrUnknownResource
		}
	default:
		return false, fmt.Errorf("inventory: unknown grant change %d", c.Op)
	}
	changed, err := inv.store.Apply(ctx, subject, c)
	if err != nil {
		return false, fmt.Errorf("inventory: grant store: %w", err)
	}
	if n := inv.Notifier(); changed && n != nil {
		n.ListChanged(ctx, subject)
	}
	return changed, nil
}

// hasResource reports whether name is a static resource's URI or a
// template's name.
func (inv *Inventory) hasResource(name string) bool {
	if _, ok := inv.staticIndex[name]; ok {
		return true
	}
	for _, rt := range inv.templates {
		if rt.tmpl.Name == name {
			return true
		}
	}
	return false
}

// CanRead reports whether caller may read uri as far as the kit decides:
// the static resource or template matching uri exists, gates and
// overrides let the caller see it, and its access and required scopes
// admit the caller. It calls neither the Read handler (which applies
// record ownership) nor the template's Validate rules. The transport uses
// it to decide who may subscribe to uri and receive its updates.
//
// Errors: ErrInternal (the grant store or a gate policy failed; logged).
func (inv *Inventory) CanRead(ctx context.Context, caller *principal.Principal, uri string) (bool, error) {
	var (
		access Access
		scopes []string
		key    string
		gates  []int
	)
	if i, ok := inv.staticIndex[uri]; ok {
		st := &inv.statics[i]
		access, scopes, key, gates = st.res.Access, st.scopes(), st.res.URI, st.gates
	} else if rt, _ := inv.matchTemplate(uri); rt != nil {
		if rt.tmpl.Access == Protected && !rt.tmpl.Owner.has(caller) {
			return false, nil
		}
		access, scopes, key, gates = rt.tmpl.Access, rt.scopes, rt.tmpl.Name, rt.gates
	} else {
		return false, nil
	}
	if inv.gated {
		switch err := inv.reveal(ctx, "canRead", caller, key, gates); {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		}
	}
	return checkCaller(access, scopes, caller) == nil, nil
}

// Notifier returns what grant changes are reported to: Options.Notifier,
// or the notifier attached with AttachNotifier; nil when there is none.
func (inv *Inventory) Notifier() grants.Notifier {
	if n := inv.notifier.Load(); n != nil {
		return *n
	}
	return nil
}

// AttachNotifier makes n the notifier of an inventory that has none, so
// that a transport given a notification hub (the sessions part of
// mcphttp/sessions, sessions.New(hub, ...)) also hears of grant changes
// without the application wiring it twice. It reports whether n was
// attached: false when n is nil (or a nil pointer or function in the
// interface) or the inventory already has a notifier (which it keeps). It
// is safe for concurrent use.
func (inv *Inventory) AttachNotifier(n grants.Notifier) bool {
	if nilness.Is(n) {
		return false
	}
	return inv.notifier.CompareAndSwap(nil, &n)
}

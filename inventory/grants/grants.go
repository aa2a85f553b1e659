// Package grants holds the run-time grants of an inventory's subjects:
// the gates each may pass whatever their policies say, and per-resource
// overrides; the Store that keeps them (Memory in process, or one backed
// by the application's database, checked with inventorytest.CheckGrantStore);
// and the Notifier told when a change may alter what a subject sees.
// Package inventory reads them (Options.Grants) and changes them
// (Inventory.Authorize and the others).
package grants

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Grants are what one subject was granted at run time: the gates it may
// pass whatever their policies say, and per-resource overrides.
// A [Store] returns them; the Inventory only reads them.
type Grants struct {
	// Gates holds the names of the gates the subject was authorized for,
	// in any order. Names of gates the inventory does not define are
	// ignored (a grant may outlive a deployment that removed its gate).
	Gates []string
	// Overrides maps a resource, named by a static resource's URI or a
	// template's name, to true (enabled: visible to the subject whatever
	// its gates say) or false (disabled: hidden from the subject whatever
	// its gates say). A resource without an entry follows its gates.
	// Access and RequiredScopes apply in every case. Unknown names are
	// ignored.
	Overrides map[string]bool
}

// ChangeOp is the kind of a [Change].
type ChangeOp uint8

const (
	// OpAuthorize lets the subject pass the gate Change.Name.
	OpAuthorize ChangeOp = iota + 1
	// OpRevoke withdraws an OpAuthorize: the gate's policy decides again.
	OpRevoke
	// OpEnable shows the resource Change.Name to the subject whatever its
	// gates say (Overrides[Name] = true).
	OpEnable
	// OpDisable hides the resource Change.Name from the subject whatever
	// its gates say (Overrides[Name] = false).
	OpDisable
)

// String returns "authorize", "revoke", "enable" or "disable".
func (op ChangeOp) String() string {
	switch op {
	case OpAuthorize:
		return "authorize"
	case OpRevoke:
		return "revoke"
	case OpEnable:
		return "enable"
	case OpDisable:
		return "disable"
	}
	return "invalid"
}

// Change is one modification of a subject's [Grants].
type Change struct {
	Op ChangeOp
	// Name is a gate name (OpAuthorize, OpRevoke), or a resource: a
	// static resource's URI or a template's name (OpEnable, OpDisable).
	Name string
}

// Store keeps the grants of every subject, keyed by the caller's
// identity key (principal.Principal.Key: issuer-qualified when several
// issuers are trusted). Back it with the
// application's database so that grants survive restarts and are shared
// by the instances of a fleet. Both methods must be safe for concurrent
// use and honour ctx (they get Options.CallbackTimeout on the request
// path, like callbacks). In SQL (PostgreSQL syntax), two tables do:
//
//	CREATE TABLE gate_grants (subject text, gate text, PRIMARY KEY (subject, gate));
//	CREATE TABLE resource_overrides (subject text, resource text,
//	    enabled boolean NOT NULL, PRIMARY KEY (subject, resource));
//
// Grants reads the subject's rows of both. Apply is one statement whose
// affected row count says whether anything changed: INSERT … ON CONFLICT
// DO NOTHING (OpAuthorize), DELETE (OpRevoke), and INSERT … ON CONFLICT
// (subject, resource) DO UPDATE SET enabled = $3 WHERE
// resource_overrides.enabled <> $3 (OpEnable with true, OpDisable with
// false).
type Store interface {
	// Grants returns the subject's current grants (zero Grants when it has
	// none). The Inventory calls it at most once per request, and never
	// modifies what it returns.
	Grants(ctx context.Context, subject string) (Grants, error)
	// Apply applies one change to the subject's grants atomically, and
	// reports whether the grants changed (false when the change was
	// already in effect: authorizing an authorized gate, enabling an
	// enabled resource). OpEnable and OpDisable replace each other.
	Apply(ctx context.Context, subject string, c Change) (changed bool, err error)
}

// Notifier learns that what a subject may see has changed. The subject is
// the identity key the grants are kept under (principal.Principal.Key),
// which is also the key of the notification hub. The transport
// implements it to send notifications/resources/list_changed to that
// subject's own streams, and to nobody else. It is called synchronously
// by the grant methods, after the store applied a change that changed the
// subject's grants; such a change may still leave what the subject sees
// as it was (authorizing a gate its policy already passes), and clients
// simply list again.
type Notifier interface {
	ListChanged(ctx context.Context, subject string)
}

// NotifierFunc adapts a function to a [Notifier]. A nil NotifierFunc
// tells nobody (Options.Notifier refuses one all the same: it is a
// mistake).
type NotifierFunc func(ctx context.Context, subject string)

// ListChanged calls f(ctx, subject).
func (f NotifierFunc) ListChanged(ctx context.Context, subject string) {
	if f != nil { // the zero NotifierFunc tells nobody
		f(ctx, subject)
	}
}

// Memory is an in-memory [Store]: grants live as long as the
// process and are not shared with other instances. It is safe for
// concurrent use, and reading grants neither copies nor allocates (each
// change replaces the subject's grants with a new value).
type Memory struct {
	mu        sync.RWMutex
	bySubject map[string]*Grants
}

// NewMemory returns an empty store. The zero Memory is an empty
// store too.
func NewMemory() *Memory {
	return &Memory{bySubject: make(map[string]*Grants)}
}

// Grants returns the subject's grants. The caller must not modify them.
func (m *Memory) Grants(_ context.Context, subject string) (Grants, error) {
	m.mu.RLock()
	g := m.bySubject[subject]
	m.mu.RUnlock()
	if g == nil {
		return Grants{}, nil
	}
	return *g, nil
}

// Apply applies c to the subject's grants and reports whether they
// changed. It returns an error only for an unknown Op.
func (m *Memory) Apply(_ context.Context, subject string, c Change) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.bySubject[subject]
	if old == nil {
		old = &Grants{}
	}
	next, changed, err := applyChange(*old, c)
	if err != nil || !changed {
		return false, err
	}
	if len(next.Gates) == 0 && len(next.Overrides) == 0 {
		delete(m.bySubject, subject)
	} else {
		if m.bySubject == nil { // the zero Memory
			m.bySubject = make(map[string]*Grants)
		}
		m.bySubject[subject] = &next
	}
	return true, nil
}

// applyChange returns g with c applied, sharing nothing with g when it
// changed, and whether it changed.
func applyChange(g Grants, c Change) (Grants, bool, error) {
	switch c.Op {
	case OpAuthorize:
		if slices.Contains(g.Gates, c.Name) {
			return g, false, nil
		}
		g.Gates = append(slices.Clone(g.Gates), c.Name)
		slices.Sort(g.Gates)
	case OpRevoke:
		if !slices.Contains(g.Gates, c.Name) {
			return g, false, nil
		}
		g.Gates = slices.DeleteFunc(slices.Clone(g.Gates), func(s string) bool { return s == c.Name })
	case OpEnable, OpDisable:
		want := c.Op == OpEnable
		if v, ok := g.Overrides[c.Name]; ok && v == want {
			return g, false, nil
		}
		o := maps.Clone(g.Overrides)
		if o == nil {
			o = make(map[string]bool, 1)
		}
		o[c.Name] = want
		g.Overrides = o
	default:
		return g, false, fmt.Errorf("grants: unknown change %d", c.Op)
	}
	return g, true, nil
}

package inventory

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/principal"
)

// maxGateNameBytes is the longest gate name.
const maxGateNameBytes = 128

// Policy decides whether a caller passes a gate without a grant, from the
// request context and the caller (nil = anonymous). It runs on the request
// path, at most once per gate and request, and must be quick: decide from
// the principal and values already in ctx, and leave lookups that need
// I/O to the [grants.Store]. A policy that panics makes the request fail
// with [ErrInternal] (logged).
type Policy func(ctx context.Context, p *principal.Principal) bool

// Gate is a named policy. Attached to a static resource or a template (or
// globally, with Options.GlobalGates), it hides what it guards from every
// caller who does not pass it: such a caller sees it neither in lists nor
// in reads, which answer as for an unknown URI. A caller passes a gate when
// its Policy returns true, or when the caller's subject was authorized for
// the gate with [Inventory.Authorize].
type Gate struct {
	// Name identifies the gate in attachments and grants: 1..128 bytes of
	// RFC 6749 scope-token characters (0x21, 0x23–0x5B, 0x5D–0x7E), unique
	// in the inventory.
	Name string
	// Policy lets callers pass without a grant. Nil means nobody does:
	// only an authorization opens the gate.
	Policy Policy
}

// AllOf passes a caller that every policy passes. A nil policy passes
// nobody, and AllOf() with no policies passes nobody either (fail closed).
func AllOf(policies ...Policy) Policy {
	ps := slices.Clone(policies)
	return func(ctx context.Context, p *principal.Principal) bool {
		for _, f := range ps {
			if f == nil || !f(ctx, p) {
				return false
			}
		}
		return len(ps) > 0
	}
}

// AnyOf passes a caller that some policy passes (nil policies pass
// nobody). AnyOf() with no policies passes nobody.
func AnyOf(policies ...Policy) Policy {
	ps := slices.Clone(policies)
	return func(ctx context.Context, p *principal.Principal) bool {
		for _, f := range ps {
			if f != nil && f(ctx, p) {
				return true
			}
		}
		return false
	}
}

// Not passes a caller that policy does not pass. Not(nil) passes nobody
// (fail closed: a forgotten policy never opens a gate to everyone).
func Not(policy Policy) Policy {
	return func(ctx context.Context, p *principal.Principal) bool {
		return policy != nil && !policy(ctx, p)
	}
}

// Authenticated is a Policy that passes every authenticated caller.
func Authenticated(_ context.Context, p *principal.Principal) bool { return p != nil }

// HasScopes passes an authenticated caller granted every one of scopes
// (with no scopes: every authenticated caller).
func HasScopes(scopes ...string) Policy {
	want := slices.Clone(scopes)
	return func(_ context.Context, p *principal.Principal) bool {
		if p == nil {
			return false
		}
		for _, s := range want {
			if !slices.Contains(p.Scopes, s) {
				return false
			}
		}
		return true
	}
}

// Subjects passes an authenticated caller whose identity key
// ([principal.Principal.Key]) is one of subjects: the bare subject with one
// trusted issuer, [principal.SubjectKey](issuer, subject) with several (so
// that "alice" of another issuer never passes). A caller without a
// subject never passes.
func Subjects(subjects ...string) Policy {
	set := make(map[string]struct{}, len(subjects))
	for _, s := range subjects {
		if s != "" {
			set[s] = struct{}{}
		}
	}
	return func(_ context.Context, p *principal.Principal) bool {
		if p == nil || p.Subject == "" {
			return false
		}
		_, ok := set[p.Key()]
		return ok
	}
}

// validGateName reports a valid gate name.
func validGateName(s string) bool {
	return len(s) <= maxGateNameBytes && principal.ValidScope(s)
}

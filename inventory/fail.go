package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/inventory/internal/staticindex"
	"github.com/mcpkit/mcpkit/principal"
)

// scratch holds the per-request buffers of the serving methods.
type scratch struct {
	bind, payload, trailer []byte
	vis, open              []byte // visibility bits of a gated inventory
	item                   Item   // the item offered to a page's fit function
	statics                staticindex.Scratch
	check                  pageCheck
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{bind: make([]byte, 0, 256), payload: make([]byte, 0, 300), trailer: make([]byte, 0, 512)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	const keep = 64 << 10 // do not pin huge buffers
	if cap(sc.bind) > keep || cap(sc.trailer) > keep || cap(sc.vis) > keep {
		return
	}
	scratchPool.Put(sc)
}

// call runs an application callback for caller with the callback timeout
// (see the internal callback package): on a goroutine of its own, a panic
// turned into a *panicError, abandoned at its deadline if it ignores its
// context, and refused at once while caller's share of abandoned
// callbacks, or the inventory's bound, is used up.
func call[Req, Res any](ctx context.Context, inv *Inventory, caller *principal.Principal, f func(context.Context, Req) (Res, error), req Req) (Res, error) {
	return callback.Call(ctx, inv.runner, caller, f, req)
}

// Bounds of the abandoned callbacks: those still running after their call
// gave up on them because their deadline passed or the request ended (a
// callback that ignores its context, a lock wait, a blocking client
// library). Each caller (one subject; a caller without one, by its
// client; anonymous callers together) has a share: while it holds that
// many abandoned callbacks, every new callback call for it fails at once
// with [ErrInternal] and an operator record (rule "deadline"), until some
// return. The share is MaxAbandonedPerCaller (MaxAbandonedAnonymous for
// anonymous callers), less when more callers hold some: 3/4 of
// MaxAbandonedCallbacks (48) divided by their number, at least one; and
// callers holding some stop once the inventory holds 48 in all. The last
// quarter is kept for callers holding none, so that no crowd denies
// another: a caller holding no abandoned callback is served while fewer
// than MaxAbandonedCallbacks callers hold some (with 8, 16 or 32 stuck
// subjects, everyone else is served). Refusals are also logged at WARN,
// at most once per 10 s, with how many callbacks and callers are held
// (never who). A caller's calls already running when its share is used up
// may still be abandoned, so its count can pass its share by the number
// of its calls in flight then.
const (
	MaxAbandonedCallbacks = callback.MaxAbandoned
	MaxAbandonedPerCaller = callback.MaxAbandonedPerCaller
	MaxAbandonedAnonymous = callback.MaxAbandonedAnonymous
)

// AbandonedCallbacks returns how many callbacks of inv are running after
// their calls gave up on them (see [MaxAbandonedCallbacks]): a gauge for
// operators. It is safe for concurrent use; 0 for a zero Inventory.
func (inv *Inventory) AbandonedCallbacks() int {
	if inv.runner == nil {
		return 0
	}
	return inv.runner.Abandoned()
}

// ruleOf classifies a callback error for the operator log.
func ruleOf(ctx context.Context, err error) Rule {
	var pe *panicError
	switch {
	case errors.As(err, &pe):
		return RuleCallbackPanic
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return RuleDeadline
	}
	return RuleCallbackError
}

// fail logs a failed callback or broken contract and returns ErrInternal.
// The record names the method, the source (template or resource) and the
// rule; it never holds URIs, names or values of the request or of entries.
func (inv *Inventory) fail(ctx context.Context, method, source string, err error) error {
	if el, ok := errors.AsType[urlElicitation](err); ok {
		// The caller must visit a URL first (an upstream not connected):
		// the transport answers it in the protocol's form.
		return el
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("method", method), slog.String("source", source))
	var ce *ContractError
	var pe *panicError
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, slog.String("rule", string(ce.Rule)), slog.Int("entry", ce.Entry))
	case errors.As(err, &pe):
		attrs = append(attrs, slog.String("rule", string(RuleCallbackPanic)),
			slog.String("panic", fmt.Sprint(pe.Value)), slog.String("stack", string(pe.Stack)))
	default:
		attrs = append(attrs, slog.String("rule", string(ruleOf(ctx, err))), slog.String("error", err.Error()))
	}
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: callback failed", attrs...)
	return ErrInternal
}

// urlElicitation is the error of a callback whose caller must visit a
// URL before it can succeed (mcphttp.URLElicitation; authn/upstream's
// *ElicitationError): passed to the transport as it is, not logged as a
// failure.
type urlElicitation interface {
	error
	URLElicitation() (id, url, message string)
}

// errBadScopeError is the operator log's text for a callback's
// *principal.ScopeError the kit does not pass on.
var errBadScopeError = errors.New("inventory: the callback answered a *principal.ScopeError naming no valid scope, or only scopes the caller holds (a step-up could not help)")

// failCallback answers the error of an application callback (Read, List,
// Search, Complete) for caller. A *principal.ScopeError — the record needs
// a scope the caller lacks (proj:7) — is passed on, as a copy with its
// scopes sorted and de-duplicated, for the transport's 403
// insufficient_scope challenge, as a static RequiredScopes miss is; for an
// anonymous caller it is principal.ErrUnauthenticated (sign in first). One
// naming no scope, a scope that breaks RFC 6749 §3.3, or only scopes the
// caller holds (a step-up would loop), or one after the request ended, is
// a failed callback like any other error: logged, ErrInternal.
func (inv *Inventory) failCallback(ctx context.Context, method, source string, caller *principal.Principal, err error) error {
	var se *principal.ScopeError
	isScope := errors.As(err, &se)
	if isScope && se == nil { // a typed nil: its Error would panic, so err is never logged
		return inv.fail(ctx, method, source, errBadScopeError)
	}
	if !isScope || ctx.Err() != nil {
		return inv.fail(ctx, method, source, err)
	}
	if len(se.Required) == 0 {
		return inv.fail(ctx, method, source, errBadScopeError)
	}
	required := slices.Clone(se.Required)
	slices.Sort(required)
	required = slices.Compact(required)
	for _, s := range required {
		if !principal.ValidScope(s) {
			return inv.fail(ctx, method, source, errBadScopeError)
		}
	}
	if caller == nil {
		return principal.ErrUnauthenticated
	}
	if caller.HasScopes(required...) {
		return inv.fail(ctx, method, source, errBadScopeError)
	}
	return &principal.ScopeError{Required: required}
}

// failAssembly logs a cursor that could not be sealed (never expected).
// It returns ErrInternal.
func (inv *Inventory) failAssembly(ctx context.Context, method string, err error) error {
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: cannot assemble the response",
		slog.String("method", method), slog.String("rule", string(ruleInternal)), slog.String("error", err.Error()))
	return ErrInternal
}

// failRule logs a rule broken outside a page (contents, entry size) and
// returns ErrInternal.
func (inv *Inventory) failRule(ctx context.Context, method, source string, rule Rule, entry int) error {
	return inv.fail(ctx, method, source, &ContractError{Source: source, Rule: rule, Entry: entry})
}

package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// scratch holds the per-request buffers of the serving methods.
type scratch struct {
	bind, payload, trailer []byte
	vis, open              []byte // visibility bits of a gated inventory
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

// call runs an application callback with the callback timeout (never
// beyond the request's deadline) and turns a panic into a *panicError.
func call[Req, Res any](ctx context.Context, inv *Inventory, f func(context.Context, Req) (Res, error), req Req) (res Res, err error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > inv.timeout {
		cc := newCallContext(ctx, time.Now().Add(inv.timeout))
		defer cc.finish()
		ctx = cc
	} // else the request's own deadline is the earlier one: nothing to add
	defer func() {
		if r := recover(); r != nil {
			var zero Res
			res, err = zero, &panicError{value: r, stack: debug.Stack()}
		}
	}()
	res, err = f(ctx, req)
	if err == nil && ctx.Err() != nil {
		// The callback ignored its deadline; its result is not trusted.
		err = ctx.Err()
	}
	return res, err
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
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("method", method), slog.String("source", source))
	var ce *ContractError
	var pe *panicError
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, slog.String("rule", string(ce.Rule)), slog.Int("entry", ce.Entry))
	case errors.As(err, &pe):
		attrs = append(attrs, slog.String("rule", string(RuleCallbackPanic)),
			slog.String("panic", fmt.Sprint(pe.value)), slog.String("stack", string(pe.stack)))
	default:
		attrs = append(attrs, slog.String("rule", string(ruleOf(ctx, err))), slog.String("error", err.Error()))
	}
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: callback failed", attrs...)
	return ErrInternal
}

// failAssembly logs a page that could not be assembled: the transport's
// reserve leaves no room under the byte limit, or (never expected) sealing
// failed. It returns ErrInternal.
func (inv *Inventory) failAssembly(ctx context.Context, method string, err error) error {
	rule := ruleInternal
	if errors.Is(err, errNoRoom) {
		rule = ruleEnvelopeTooLarge
	}
	inv.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "inventory: cannot assemble the response",
		slog.String("method", method), slog.String("rule", string(rule)), slog.String("error", err.Error()))
	return ErrInternal
}

// failRule logs a rule broken outside a page (contents, entry size) and
// returns ErrInternal.
func (inv *Inventory) failRule(ctx context.Context, method, source string, rule Rule, entry int) error {
	return inv.fail(ctx, method, source, &ContractError{Source: source, Rule: rule, Entry: entry})
}

// Package gateview decides an inventory's gates for one request: the
// caller's grants, loaded at most once and only when a gate or an
// override needs them, and each gate's policy, run at most once, with
// panics recovered. It also holds the bit vectors of what a gated
// inventory shows a caller.
//
// The package is internal: inventory is its one user (its GateCheck is
// the public face).
package gateview

import (
	"context"
	"runtime/debug"
	"slices"

	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/principal"
)

// Policy decides whether a caller passes a gate without a grant (nil:
// nobody does).
type Policy func(ctx context.Context, p *principal.Principal) bool

// Gates is what a view needs of an inventory's gates. Set it up once; it
// is then read-only and safe for concurrent use.
type Gates struct {
	// Index maps a gate's name to its index in Policies.
	Index map[string]int
	// Policies are the gates' policies, by index.
	Policies []Policy
	// Load returns the grants of caller, who has a subject: a failure is
	// returned by the view as it is, for every later question (Load
	// logs it and returns what the request answers).
	Load func(ctx context.Context, method string, caller *principal.Principal) (grants.Grants, error)
	// FailPolicy answers gate i's policy that panicked (err is a
	// *callback.PanicError): the view returns what it returns.
	FailPolicy func(ctx context.Context, method string, i int, err error) error
}

// bits is a set of gate indices; gates beyond the first 64 cost an
// allocation.
type bits struct {
	lo uint64
	hi []uint64
}

func (b *bits) has(i int) bool {
	if i < 64 {
		return b.lo&(1<<uint(i)) != 0
	}
	i -= 64
	return i>>6 < len(b.hi) && b.hi[i>>6]&(1<<(uint(i)&63)) != 0
}

func (b *bits) set(i int) {
	if i < 64 {
		b.lo |= 1 << uint(i)
		return
	}
	i -= 64
	for i>>6 >= len(b.hi) {
		b.hi = append(b.hi, 0)
	}
	b.hi[i>>6] |= 1 << (uint(i) & 63)
}

// View is one request's view of the gates: the caller, its grants (loaded
// at most once, and only when needed) and the gate decisions made so far
// (each policy runs at most once). Make one with [Gates.View]; it is not
// safe for concurrent use. The zero View knows no gates.
type View struct {
	gates  *Gates
	ctx    context.Context
	method string
	caller *principal.Principal

	loaded bool
	err    error
	held   grants.Grants

	granted, decided, passed bits
}

// View returns the view of the gates of caller (nil: anonymous) for one
// request of method (named in failures) under ctx, which Load and the
// policies are called with.
func (g *Gates) View(ctx context.Context, method string, caller *principal.Principal) View {
	return View{gates: g, ctx: ctx, method: method, caller: caller}
}

// Load reads the caller's grants once. Anonymous callers and callers
// without a subject have none.
func (v *View) Load() error {
	if v.loaded {
		return v.err
	}
	v.loaded = true
	if v.caller == nil || v.caller.Subject == "" || v.gates == nil || v.gates.Load == nil {
		return nil
	}
	g, err := v.gates.Load(v.ctx, v.method, v.caller)
	if err != nil {
		v.err = err
		return v.err
	}
	v.held = g
	for _, name := range g.Gates {
		if i, ok := v.gates.Index[name]; ok {
			v.granted.set(i)
		}
	}
	return nil
}

// Pass reports whether the caller passes gate i. Load must have
// succeeded.
func (v *View) Pass(i int) (bool, error) {
	if v.granted.has(i) {
		return true, nil
	}
	if v.decided.has(i) {
		return v.passed.has(i), nil
	}
	ok, err := run(v.ctx, v.gates.Policies[i], v.caller)
	if err != nil {
		return false, v.gates.FailPolicy(v.ctx, v.method, i, err)
	}
	v.decided.set(i)
	if ok {
		v.passed.set(i)
	}
	return ok, nil
}

// Open reports whether gates (indices) and the caller's overrides let it
// see the resource or template named key. Errors are Load's and
// FailPolicy's.
func (v *View) Open(key string, gates []int) (bool, error) {
	if err := v.Load(); err != nil {
		return false, err
	}
	if on, ok := v.held.Overrides[key]; ok {
		return on, nil
	}
	for _, i := range gates {
		if ok, err := v.Pass(i); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// run runs policy p for caller, a panic turned into a
// *callback.PanicError.
func run(ctx context.Context, p Policy, caller *principal.Principal) (ok bool, err error) {
	if p == nil {
		return false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, &callback.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return p(ctx, caller), nil
}

// Bit reports bit i of the vector b.
func Bit(b []byte, i int) bool { return b[i>>3]&(1<<(uint(i)&7)) != 0 }

// SetBit sets bit i of the vector b.
func SetBit(b []byte, i int) { b[i>>3] |= 1 << (uint(i) & 7) }

// Zeroed returns buf resized to n zero bytes.
func Zeroed(buf []byte, n int) []byte {
	buf = slices.Grow(buf[:0], n)[:n]
	clear(buf)
	return buf
}

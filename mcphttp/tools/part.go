package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/principal"
)

// Part is the tools part of an endpoint: it serves tools/list and
// tools/call for its tools, declares the tools capability, and watches
// each caller's tools for notifications/tools/list_changed. Make one with
// [New] and give it to mcphttp.New. A Part serves the endpoints of one
// inventory; it is safe for concurrent use once set up.
type Part struct {
	tools  []*tool // in tools/list order
	byName map[string]*tool
	inv    *inventory.Inventory // the inventory of the built-in tools, or the endpoint's
	log    *slog.Logger
}

var _ mcphttp.Part = (*Part)(nil)

// New returns the part serving tools, listed in the order given. It
// returns an error for an invalid tool (see [Tool]) and for a name two
// tools share — a tool of one's own named like a built-in one, say.
func New(tools ...Tool) (*Part, error) {
	p := &Part{byName: make(map[string]*tool, len(tools)), log: slog.Default()}
	for _, t := range tools {
		ct, err := compile(t)
		if err != nil {
			return nil, err
		}
		if p.byName[ct.Name] != nil {
			return nil, fmt.Errorf("tools: tool name %q is taken", ct.Name)
		}
		if ct.inv != nil {
			if p.inv != nil && p.inv != ct.inv {
				return nil, fmt.Errorf("tools: tool %q answers from another inventory than the other built-in tools", ct.Name)
			}
			p.inv = ct.inv
		}
		p.tools = append(p.tools, ct)
		p.byName[ct.Name] = ct
	}
	return p, nil
}

// Setup registers tools/list and tools/call, the tools capability
// ({"listChanged":true} in answers that come with event streams) and the
// watcher of each caller's tools. It fails when the built-in tools answer
// from another inventory than the endpoint's, or a tool names a gate the
// inventory does not define.
func (p *Part) Setup(s *mcphttp.Setup) error {
	inv := s.Inventory()
	if p.inv != nil && p.inv != inv {
		return errors.New("tools: the part's tools answer from another inventory than the endpoint's")
	}
	for _, t := range p.tools {
		for _, g := range t.Gates {
			if !inv.HasGate(g) {
				return fmt.Errorf("tools: tool %q: the inventory defines no gate %q", t.Name, g)
			}
		}
	}
	p.inv, p.log = inv, s.Logger()
	s.Handle("tools/list", p.list, mcphttp.MethodOptions{Class: func([]byte) string { return mcphttp.ClassList }})
	s.Handle("tools/call", p.call, mcphttp.MethodOptions{NameMember: "name", Class: p.class, Claims: p.claims})
	s.Capability("tools", func(notifying bool) string {
		return `{"listChanged":` + strconv.FormatBool(notifying) + `}`
	})
	s.Watch(mcphttp.Watcher{Notification: "notifications/tools/list_changed", Sig: p.signature})
	return nil
}

// Names returns the names of the part's tools, in tools/list order: what a
// handler in front of another MCP server (mcphttp/intercept) routes
// tools/call by, and drops from the other server's tools/list.
func (p *Part) Names() []string {
	out := make([]string, len(p.tools))
	for i, t := range p.tools {
		out[i] = t.Name
	}
	return out
}

// has reports whether the part has a tool named name (compared exactly).
func (p *Part) has(name string) bool { return p.byName[name] != nil }

// appendList appends to dst the Tool objects of the tools caller (nil:
// anonymous) may see, comma-separated, in tools/list order, as protocol
// version encodes them (titles and output schemas from 2025-06-18 on),
// and returns the extended slice: the items of a tools/list result, for a
// handler that merges them with another server's. Errors:
// inventory.ErrInternal (the grant store or a gate policy failed; logged).
func (p *Part) appendList(ctx context.Context, dst []byte, caller *principal.Principal, version string) ([]byte, error) {
	if p.inv == nil {
		return dst, errNotSetUp
	}
	v := view{p: p, ctx: ctx, caller: caller}
	structured := mcpwire.Structured(version)
	n := 0
	for _, t := range p.tools {
		ok, err := v.shown(t)
		if err != nil {
			return dst, err
		}
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		if structured {
			dst = append(dst, t.def...)
		} else {
			dst = append(dst, t.defOld...)
		}
		n++
	}
	return dst, nil
}

// list serves tools/list: the tools the caller may see, on one page.
func (p *Part) list(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	cursor, err := mcpwire.CursorParam(c.Params())
	if err != nil {
		return mcphttp.Result{}, err
	}
	if cursor != "" {
		return mcphttp.Result{}, &inventory.CursorError{Reason: inventory.ReasonInvalid} // one page: no cursor was issued
	}
	b := append(make([]byte, 0, 2048), `"tools":[`...)
	if b, err = p.appendList(ctx, b, c.Principal, c.ProtocolVersion); err != nil {
		return mcphttp.Result{}, err
	}
	b = append(b, ']')
	if room := membersRoom(c); len(b) > room {
		p.tooLarge(ctx, c, "", len(b), room)
		return mcphttp.Result{}, mcpwire.ResultTooLarge{}
	}
	return seam.Answer[mcphttp.Result](c, b, true)
}

// signature names the set of tools the caller may see: it differs exactly
// when that set does.
func (p *Part) signature(ctx context.Context, caller *principal.Principal) (string, bool) {
	v := view{p: p, ctx: ctx, caller: caller}
	b := make([]byte, len(p.tools))
	for i, t := range p.tools {
		ok, err := v.shown(t)
		if err != nil {
			return "", false // a failing grant store (logged): no change to tell
		}
		b[i] = '0'
		if ok {
			b[i] = '1'
		}
	}
	return string(b), true
}

// view is one caller's view of the tools: its reach and its gates,
// decided at most once, when a tool needs them.
type view struct {
	p      *Part
	ctx    context.Context
	caller *principal.Principal

	reach    inventory.Reach
	hasReach bool
	gates    *inventory.GateCheck
}

// shown reports whether the caller sees t: its access and scopes, its
// gates, its reach.
func (v *view) shown(t *tool) (bool, error) {
	if t.admit(v.caller) != nil {
		return false, nil
	}
	if ok, err := v.passes(t); err != nil || !ok {
		return false, err
	}
	if t.Reach == nil {
		return true, nil
	}
	if !v.hasReach {
		r, err := v.p.inv.Reach(v.ctx, v.caller)
		if err != nil {
			return false, err
		}
		v.reach, v.hasReach = r, true
	}
	return t.Reach(&v.reach), nil
}

// passes reports whether the caller passes t's gates.
func (v *view) passes(t *tool) (bool, error) {
	if !t.gated() {
		return true, nil
	}
	if v.gates == nil {
		v.gates = v.p.inv.CheckGates(v.ctx, v.caller)
	}
	return v.gates.Pass(t.Gates...)
}

// class is the Class of tools/call: the called tool's, "" for an unknown
// one.
func (p *Part) class(params []byte) string {
	if name, ok := toolName(params); ok {
		if t := p.byName[name]; t != nil {
			return t.Class
		}
	}
	return ""
}

// claims says a tools/call is the part's: it names one of its tools, or
// has no name the strict reader can read (answered here with -32602: such
// a call never reaches another server, whose reader might name it
// differently).
func (p *Part) claims(params []byte) bool {
	name, ok := toolName(params)
	return !ok || p.byName[name] != nil
}

// tooLarge logs a result over the byte limit.
func (p *Part) tooLarge(ctx context.Context, c *mcphttp.Request, tool string, n, room int) {
	p.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp/tools: response over the byte limit",
		slog.String("method", c.Method), slog.String("tool", tool), slog.Int("bytes", n+c.MaxResultBytes()-room),
		slog.Int("limit", c.MaxResultBytes()))
}

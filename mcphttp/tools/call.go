package tools

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// errUnknownTool: tools/call names no tool the caller may see (the
// specification's protocol error; the name is not echoed).
var errUnknownTool = &mcphttp.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool"}

// call serves tools/call. Protocol errors (-32602) are for a malformed
// request and an unknown (or gated) tool; everything the caller can fix
// by calling again differently — bad arguments, an invalid cursor, a
// resource that is not there — is a tool error result (isError), and so
// is a failure of the application's code, whose details go to the
// operator log only. Authentication and scope failures are the challenges
// of the resource methods.
func (p *Part) call(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	name, rawArgs, meta, err := callParams(c.Params())
	if err != nil {
		return mcphttp.Result{}, err
	}
	t := p.byName[name]
	if t == nil {
		return mcphttp.Result{}, errUnknownTool
	}
	if t.gated() {
		ok, err := p.inv.CheckGates(ctx, c.Principal).Pass(t.Gates...)
		switch {
		case err != nil:
			return mcphttp.Result{}, err
		case !ok:
			return mcphttp.Result{}, errUnknownTool // hidden: as if there were no such tool
		}
	}
	c.NoteTarget(t.Name) // a registered name, never the client's text
	if err := t.admit(c.Principal); err != nil {
		return mcphttp.Result{}, err
	}
	if c.Modern && len(t.headers) > 0 && c.HTTP != nil {
		if err := checkHeaders(c.HTTP.Header, rawArgs, t.headers); err != nil {
			return mcphttp.Result{}, err
		}
	}
	req := &Request{Name: t.Name, Principal: c.Principal, ProtocolVersion: c.ProtocolVersion, SessionID: c.SessionID, call: c}
	if t.args != nil || t.InputSchema == "" {
		var problem string
		if req.Args, problem = decodeArgs(rawArgs, t.args); problem != "" {
			return p.encode(ctx, c, ErrorResult("Invalid arguments: "+problem))
		}
	}
	// The params are the mcphttp.Request's own copy, which nothing
	// modifies: the handler may keep them.
	if rawArgs != nil {
		req.Arguments = rawArgs[:len(rawArgs):len(rawArgs)]
	}
	if meta != nil {
		req.Meta = meta[:len(meta):len(meta)]
	}
	res, err := t.Handler(ctx, req)
	if err != nil {
		return p.failure(ctx, c, err)
	}
	return p.encode(ctx, c, res)
}

// failure answers an error of a tool's handler.
func (p *Part) failure(ctx context.Context, c *mcphttp.Request, err error) (mcphttp.Result, error) {
	var (
		cursorErr *inventory.CursorError
		paramsErr *inventory.ParamsError
		protoErr  *mcphttp.Error
	)
	switch {
	case errors.Is(err, principal.ErrUnauthenticated), errors.As(err, new(*principal.ScopeError)), errors.As(err, &protoErr):
		return mcphttp.Result{}, err // the challenge, or the handler's own protocol error
	case errors.As(err, new(mcphttp.URLElicitation)):
		return mcphttp.Result{}, err // the endpoint asks the client to open the URL
	case errors.Is(err, inventory.ErrNotFound):
		c.NoteOutcome(mcphttp.OutcomeNotFound, "")
		return p.encode(ctx, c, ErrorResult("Resource not found."))
	case errors.As(err, &cursorErr):
		c.NoteOutcome(mcphttp.OutcomeInvalidCursor, cursorErr.Reason)
		return p.encode(ctx, c, ErrorResult("Invalid cursor ("+cursorErr.Reason+")."))
	case errors.As(err, &paramsErr):
		return p.encode(ctx, c, ErrorResult("Invalid arguments: "+strings.Join(paramsErr.Problems, "; ")+"."))
	case errors.Is(err, inventory.ErrInternal), errors.As(err, new(mcpwire.ResultTooLarge)):
		// Logged where it was found (the inventory, the encoder).
	default:
		p.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp/tools: tool failed",
			slog.String("tool", toolOf(c)), slog.String("error", err.Error()))
	}
	return p.failed(ctx, c)
}

// callParams reads params.name (exactly that member, a non-empty string)
// and params.arguments (absent, null or an object) of tools/call. The
// strict decoder has refused repeated and case-variant member names, and
// names are compared exactly here, so "Name" is not "name".
func callParams(params []byte) (name string, args, meta []byte, err error) {
	var rawName []byte
	if len(params) == 0 || mcpwire.Members(params, func(n string, v []byte) bool {
		switch n {
		case "name":
			rawName = v
		case "arguments":
			args = v
		case "_meta":
			meta = v
		}
		return true
	}) != nil {
		return "", nil, nil, mcpwire.InvalidParams("params.name is required")
	}
	name, ok := mcpwire.String(rawName)
	if !ok || name == "" {
		return "", nil, nil, mcpwire.InvalidParams("params.name must be a tool name")
	}
	switch {
	case len(args) == 0 || string(args) == "null":
		args = nil
	case args[0] != '{':
		return "", nil, nil, mcpwire.InvalidParams("params.arguments must be an object")
	}
	if len(meta) == 0 || meta[0] != '{' {
		meta = nil
	}
	return name, args, meta, nil
}

// toolName returns the strictly read params.name of a tools/call, and
// whether there is one.
func toolName(params []byte) (string, bool) {
	name, _, _, err := callParams(params)
	return name, err == nil
}

// decodeArgs checks a tool's arguments (an object, or nil) against its
// string arguments, names compared exactly: no other member, every
// required one present and non-empty, every value a string within its
// length. problem names the first argument at fault (the smallest
// unknown name first), or is "".
func decodeArgs(raw []byte, specs []Arg) (args map[string]string, problem string) {
	var (
		inline [4][]byte
		values = inline[:0]
		extra  string
		nExtra int
	)
	if len(specs) > len(inline) {
		values = make([][]byte, 0, len(specs))
	}
	values = values[:len(specs)]
	if raw != nil {
		if mcpwire.Members(raw, func(n string, v []byte) bool {
			if i := slices.IndexFunc(specs, func(a Arg) bool { return a.Name == n }); i >= 0 {
				values[i] = v
			} else if nExtra++; nExtra == 1 || n < extra {
				extra = n
			}
			return true
		}) != nil {
			return nil, "the arguments must be an object"
		}
	}
	if nExtra > 0 {
		return nil, "unknown argument " + quoteArg(extra) + " (this tool takes " + argList(specs) + ")"
	}
	if len(specs) == 0 {
		return nil, ""
	}
	args = make(map[string]string, len(specs))
	for i, s := range specs {
		v := values[i]
		if v == nil {
			if s.Required {
				return nil, "missing argument " + quoteArg(s.Name)
			}
			continue
		}
		str, ok := mcpwire.String(v)
		switch {
		case !ok:
			return nil, "argument " + quoteArg(s.Name) + " must be a string"
		case str == "" && s.Required:
			return nil, "argument " + quoteArg(s.Name) + " must not be empty"
		case utf16Len(str) > s.MaxLen:
			return nil, "argument " + quoteArg(s.Name) + " is too long (at most " + strconv.Itoa(s.MaxLen) + " characters)"
		}
		args[s.Name] = str
	}
	return args, ""
}

func argList(specs []Arg) string {
	if len(specs) == 0 {
		return "no arguments"
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = strconv.Quote(s.Name)
	}
	return strings.Join(names, ", ")
}

// quoteArg quotes an argument name for a tool error, clipped to 64 bytes
// (a client's name is echoed only as far as it helps).
func quoteArg(name string) string {
	if len(name) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	return strconv.Quote(name)
}

// utf16Len is the length of s in UTF-16 code units, as the inventory
// counts lengths.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// toolOf returns the name of the tool a tools/call being answered names:
// a registered one (the call was routed to it), for the operator log.
func toolOf(c *mcphttp.Request) string {
	name, _ := toolName(c.Params())
	return name
}

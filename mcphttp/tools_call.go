package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// errUnknownTool: tools/call names no tool of the bridge (the
// specification's protocol error; the name is not echoed).
var errUnknownTool = &protoError{code: jsonrpc.CodeInvalidParams, message: "Unknown tool"}

// toolsList serves tools/list: the bridge's tools the caller may use,
// in a fixed order, on one page.
func (e *Endpoint) toolsList(ctx context.Context, c *call) (reply, error) {
	if e.tools == nil {
		return reply{}, errMethodNotFound
	}
	cursor, err := cursorOf(c.params)
	if err != nil {
		return reply{}, err
	}
	if cursor != "" {
		return reply{}, &inventory.CursorError{Reason: inventory.ReasonInvalid} // the list is one page: no cursor was issued
	}
	defs, err := e.toolDefs(ctx, c.caller, c.version, nil)
	if err != nil {
		return reply{}, err
	}
	b := make([]byte, 0, len(defs)+64+len(e.meta(c)))
	b = append(append(append(b, `{"tools":[`...), defs...), ']')
	return resultReply(c.id, closeObject(b, e.meta(c))), nil
}

// toolDefs returns the comma-separated Tool objects the caller may use,
// for the protocol version, leaving out those skip names.
func (e *Endpoint) toolDefs(ctx context.Context, caller *principal.Principal, version string, skip func(string) bool) ([]byte, error) {
	reach, err := e.inv.Reach(ctx, caller)
	if err != nil {
		return nil, err
	}
	var b []byte
	for _, t := range e.tools.tools {
		if !t.shown(&reach) || skip != nil && skip(t.name) {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		if structured(version) {
			b = append(b, t.def...)
		} else {
			b = append(b, t.defOld...)
		}
	}
	return b, nil
}

// structured reports whether a protocol version has titles, output
// schemas and structuredContent (2025-06-18 and later).
func structured(version string) bool { return version >= Version20250618 }

// closeObject ends a result object: (`,` meta) `}`.
func closeObject(b, meta []byte) []byte {
	if len(meta) > 0 {
		b = append(append(b, ','), meta...)
	}
	return append(b, '}')
}

// toolsCall serves tools/call for the bridge's tools. Protocol errors
// (-32602) are for a malformed request and an unknown tool; everything
// the caller can fix by calling again differently — bad arguments, an
// invalid cursor, a resource that is not there — is a tool error result
// (isError), and so is a failure of the application's callbacks, whose
// details go to the operator log only. Authentication and scope failures
// are the same HTTP challenges as for resources/list and resources/read.
func (e *Endpoint) toolsCall(ctx context.Context, c *call) (reply, error) {
	if e.tools == nil {
		return reply{}, errMethodNotFound
	}
	name, rawArgs, err := toolCallParams(c.params)
	if err != nil {
		return reply{}, err
	}
	t := e.tools.byName[name]
	if t == nil {
		return reply{}, errUnknownTool
	}
	c.noteTarget(t.name) // a registered name, never the client's text
	args, problem := decodeArgs(rawArgs, t.args)
	if problem != "" {
		return e.toolError(c, "Invalid arguments: "+problem), nil
	}
	var rep reply
	switch t.kind {
	case kindList:
		cursor, ok := args["cursor"]
		if ok && cursor == "" {
			// The endpoint never issues an empty cursor: "" is not "start over".
			c.noteOutcome(OutcomeInvalidCursor, inventory.ReasonInvalid)
			return e.toolError(c, "Invalid cursor (invalid): call list_resources again without a cursor."), nil
		}
		rep, err = e.toolListResources(ctx, c, cursor)
	case kindRead:
		rep, err = e.toolRead(ctx, c, args["uri"])
	case kindSearch:
		rep, err = e.toolSearch(ctx, c, args["query"])
	case kindFetch:
		rep, err = e.toolFetch(ctx, c, args["id"])
	case kindTemplate:
		uri, xerr := inventory.Expand(t.uriTemplate, args)
		if xerr != nil {
			return e.toolError(c, "Invalid arguments: every variable needs a non-empty value"), nil
		}
		rep, err = e.toolRead(ctx, c, uri)
	}
	if err == nil {
		return rep, nil
	}
	return e.toolFailure(c, err)
}

// toolFailure turns an error of a tool's inventory call into its answer.
func (e *Endpoint) toolFailure(c *call, err error) (reply, error) {
	var (
		cursorErr *inventory.CursorError
		paramsErr *inventory.ParamsError
	)
	switch {
	case errors.Is(err, inventory.ErrUnauthenticated), errors.As(err, new(*principal.ScopeError)):
		return reply{}, err // the challenge, as for resources/list and resources/read
	case errors.Is(err, inventory.ErrNotFound):
		c.noteOutcome(OutcomeNotFound, "")
		return e.toolError(c, "Resource not found."), nil
	case errors.As(err, &cursorErr):
		c.noteOutcome(OutcomeInvalidCursor, cursorErr.Reason)
		return e.toolError(c, "Invalid cursor ("+cursorErr.Reason+"): call list_resources again without a cursor."), nil
	case errors.As(err, &paramsErr):
		return e.toolError(c, "Invalid arguments: "+strings.Join(paramsErr.Problems, "; ")+"."), nil
	}
	// ErrInternal (logged by the inventory), a deadline, a result over the
	// byte limit (logged where it was found).
	c.noteOutcome(OutcomeError, "")
	return e.toolError(c, "The server could not complete this call."), nil
}

// toolCallParams reads params.name (exactly that member, a non-empty
// string) and params.arguments (absent, null or an object) of tools/call.
// The body passed the strict decoder, so no member name repeats another
// under case folding; map keys are compared exactly here, so "Name" is
// not "name".
func toolCallParams(params []byte) (name string, args []byte, err error) {
	var p map[string]json.RawMessage
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p == nil {
		return "", nil, invalidParams("params.name is required")
	}
	raw := bytes.TrimSpace(p["name"])
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &name) != nil || name == "" {
		return "", nil, invalidParams("params.name must be a tool name")
	}
	args = bytes.TrimSpace(p["arguments"])
	if len(args) > 0 && args[0] != '{' && string(args) != "null" {
		return "", nil, invalidParams("params.arguments must be an object")
	}
	return name, args, nil
}

// toolNameOf returns the strictly decoded params.name of a tools/call,
// and whether there is one.
func toolNameOf(params []byte) (string, bool) {
	name, _, err := toolCallParams(params)
	return name, err == nil
}

// decodeArgs checks a tool's arguments against its string parameters
// (names compared exactly): no other member, every required one present,
// every value a string within its length. problem names the first
// argument at fault, or is "".
func decodeArgs(raw []byte, specs []argSpec) (args map[string]string, problem string) {
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if json.Unmarshal(raw, &m) != nil {
			return nil, "the arguments must be an object"
		}
	}
	var extra []string
	for k := range m {
		if !slicesContainsArg(specs, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, "unknown argument " + quoteArg(extra[0]) + " (this tool takes " + argList(specs) + ")"
	}
	args = make(map[string]string, len(specs))
	for _, s := range specs {
		v, ok := m[s.name]
		if !ok {
			if s.required {
				return nil, "missing argument " + quoteArg(s.name)
			}
			continue
		}
		v = bytes.TrimSpace(v)
		var str string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &str) != nil {
			return nil, "argument " + quoteArg(s.name) + " must be a string"
		}
		switch {
		case str == "" && s.required:
			return nil, "argument " + quoteArg(s.name) + " must not be empty"
		case utf16Len(str) > s.maxLen:
			return nil, fmt.Sprintf("argument %s is too long (at most %d characters)", quoteArg(s.name), s.maxLen)
		}
		args[s.name] = str
	}
	return args, ""
}

func slicesContainsArg(specs []argSpec, name string) bool {
	for _, s := range specs {
		if s.name == name {
			return true
		}
	}
	return false
}

func argList(specs []argSpec) string {
	if len(specs) == 0 {
		return "no arguments"
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = strconv.Quote(s.name)
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

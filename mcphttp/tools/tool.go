package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/principal"
)

// Tool is one tool: its definition, who may see and call it, and the
// handler that answers its calls. The built-in tools ([Builtin]) are
// Tools like any other.
type Tool struct {
	// Name is the tool's name: 1..128 characters of A–Z, a–z, 0–9, '_',
	// '-' and '.', unique among the part's tools, compared exactly.
	// Required.
	Name string
	// Title is the tool's name for people, sent in protocol 2025-06-18
	// and later. Empty means none.
	Title string
	// Description tells the model what the tool does. Empty means none.
	Description string

	// InputSchema is the JSON Schema of the arguments: the text of a JSON
	// object. Empty means the schema Args describe (one string property
	// per argument, required ones listed, no other property allowed).
	InputSchema string
	// OutputSchema, when not empty, is the JSON Schema of the results'
	// structured content (the text of a JSON object), sent in protocol
	// 2025-06-18 and later.
	OutputSchema string
	// Args are the tool's arguments, each a string. Before the handler
	// runs, params.arguments must be an object (or absent) holding
	// exactly these: names compared case-sensitively, no other member,
	// every required one present and non-empty, each value a string
	// within its length. A call that breaks this gets a tool error result
	// naming the argument, and the handler is not called. Nil with an
	// InputSchema: the arguments are only checked to be an object, and
	// the handler reads Request.Arguments itself (with mcphttp.Members);
	// nil without one: the tool takes no arguments.
	Args []Arg
	// ReadOnly says the tool changes nothing: annotations.readOnlyHint.
	ReadOnly bool

	// Access is inventory.Protected (the zero value: callers must be
	// authenticated and hold every RequiredScopes entry) or
	// inventory.Public (anonymous callers too; RequiredScopes must then
	// be empty). tools/list shows the tool only to callers it admits; a
	// call of another gets the challenge resources/read gives (401, or
	// 403 naming the scopes).
	Access         inventory.Access
	RequiredScopes []string
	// Gates names inventory gates (inventory.Options.Gates) that guard
	// the tool, on top of the inventory's global gates: a caller who does
	// not pass them does not see the tool, and its calls answer as an
	// unknown tool's (-32602), as a gated resource answers as a missing
	// one. A grant change (inventory.Inventory.Authorize) that opens or closes a
	// tool reaches the caller's event streams as
	// notifications/tools/list_changed.
	Gates []string
	// Reach, when set, shows the tool only to callers whose
	// inventory.Reach it accepts (decided once per tools/list): how the
	// built-in tools follow what the inventory lets each caller do. A
	// call is not checked against it, nor against the global gates
	// (which the reach accounts for): a tool with Reach answers through
	// the inventory calls it makes, which decide as the resource methods
	// do.
	Reach func(r *inventory.Reach) bool

	// Class says what a call of the tool does, for rate limits and
	// observers (mcphttp.Call.Class): mcphttp.ClassList, ClassRead,
	// ClassSearch, or "" (anything else).
	Class string

	// Handler answers the tool's calls. Required.
	Handler Handler

	inv *inventory.Inventory // the inventory a built-in tool answers from
}

// Arg is one string argument of a [Tool].
type Arg struct {
	// Name is the argument's member name in params.arguments, compared
	// exactly. Required, unique in the tool.
	Name string
	// Description describes the argument in the generated InputSchema.
	Description string
	// Required arguments must be present and non-empty.
	Required bool
	// MaxLen is the longest value, in UTF-16 code units (the length of a
	// JavaScript string). Zero means DefaultMaxArgLen.
	MaxLen int
}

// DefaultMaxArgLen is the longest argument value, in UTF-16 code units,
// when Arg.MaxLen is zero: the longest URI the kit reads.
const DefaultMaxArgLen = 2048

// Handler answers a call of a tool. The error, when not nil, is answered
// by the part (see the package documentation): a challenge for
// principal.ErrUnauthenticated and *principal.ScopeError, an *mcphttp.Error
// as itself, a tool error result with a fixed text for the inventory's
// errors (inventory.ErrNotFound, *inventory.ParamsError,
// *inventory.CursorError) and for anything else, which is logged.
type Handler func(ctx context.Context, req *Request) (Result, error)

// Request is one call of a tool, as its handler sees it.
type Request struct {
	// Call is the call being served: the caller (Call.Principal), the
	// protocol version, and the notes for observers (NoteURI,
	// NoteOutcome). Room(mcphttp.CachePrivate) bounds the result.
	Call *mcphttp.Call
	// Args holds the arguments of Tool.Args that the call has, checked;
	// nil when Tool.Args is nil.
	Args map[string]string
	// Arguments is params.arguments as received (client input, strictly
	// decoded): the JSON text of an object, or nil when it was absent or
	// null.
	Arguments []byte
}

// Result is what a handler answers: the MCP CallToolResult in Go values,
// which the part encodes, within the endpoint's byte limit (a result over
// it is a tool error result, logged).
type Result struct {
	// Content are the result's content items, in order.
	Content []Content
	// Structured, when not nil, is the text of a JSON object: the
	// result's structuredContent, sent in protocol 2025-06-18 and later.
	// Older clients get Content alone, so put the same JSON in a text
	// item too, as the specification advises.
	Structured []byte
	// IsError marks a tool error result: the call reached the tool, which
	// could not do what was asked in a way the model can act on (bad
	// arguments, nothing found). Observers see it as error type
	// mcphttp.ErrorTypeToolError.
	IsError bool
}

// Content is one content item of a [Result]: a text item, or an embedded
// resource.
type Content struct {
	// Text is the text of a text item; unused when Resource is set.
	Text string
	// Resource, when set, makes the item an embedded resource: its URI,
	// MIME type, and text or blob (base64-encoded on the wire).
	Resource *inventory.Contents
}

// TextResult returns a result of one text item.
func TextResult(text string) Result { return Result{Content: []Content{{Text: text}}} }

// ErrorResult returns a tool error result of one text item. The text goes
// to the client and its model: a fixed text of the tool's, never internal
// detail.
func ErrorResult(text string) Result {
	return Result{Content: []Content{{Text: text}}, IsError: true}
}

// tool is a checked Tool, its definitions pre-encoded.
type tool struct {
	Tool
	scopes []string
	args   []Arg // MaxLen filled in
	// def is the Tool object for protocol 2025-06-18 and later (title,
	// outputSchema); defOld the one for earlier versions.
	def, defOld []byte
}

// compile checks t and encodes its definitions.
func compile(t Tool) (*tool, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("tools: tool %q: "+format, append([]any{t.Name}, args...)...)
	}
	switch {
	case !validToolName(t.Name):
		return nil, fmt.Errorf("tools: tool %q: tool names are 1..128 characters of A-Z a-z 0-9 _ - .", t.Name)
	case t.Handler == nil:
		return nil, fail("no handler")
	case t.Access > inventory.Public:
		return nil, fail("unknown access mode %d", t.Access)
	case t.Access == inventory.Public && len(t.RequiredScopes) > 0:
		return nil, fail("a public tool cannot require scopes")
	}
	switch t.Class {
	case "", mcphttp.ClassList, mcphttp.ClassRead, mcphttp.ClassSearch:
	default:
		return nil, fail("Class must be mcphttp.ClassList, ClassRead, ClassSearch or empty")
	}
	for _, s := range t.RequiredScopes {
		if !principal.ValidScope(s) {
			return nil, fail("invalid scope %q", s)
		}
	}
	for i, g := range t.Gates {
		if slices.Contains(t.Gates[:i], g) {
			return nil, fail("gate %q named twice", g)
		}
	}
	ct := &tool{Tool: t}
	ct.scopes = slices.Compact(slices.Sorted(slices.Values(t.RequiredScopes)))
	ct.Gates = slices.Clone(t.Gates)
	for i, a := range t.Args {
		switch {
		case a.Name == "":
			return nil, fail("argument %d has no name", i)
		case slices.ContainsFunc(t.Args[:i], func(b Arg) bool { return b.Name == a.Name }):
			return nil, fail("argument %q is named twice", a.Name)
		case a.MaxLen < 0:
			return nil, fail("argument %q: MaxLen must not be negative", a.Name)
		case a.MaxLen == 0:
			a.MaxLen = DefaultMaxArgLen
		}
		ct.args = append(ct.args, a)
	}
	input := t.InputSchema
	if input == "" {
		input = argsSchema(ct.args)
	} else if !isObject(input) {
		return nil, fail("InputSchema must be the text of a JSON object")
	}
	if t.OutputSchema != "" && !isObject(t.OutputSchema) {
		return nil, fail("OutputSchema must be the text of a JSON object")
	}
	ct.defOld = encodeTool(t.Name, "", t.Description, input, "", t.ReadOnly)
	ct.def = encodeTool(t.Name, t.Title, t.Description, input, t.OutputSchema, t.ReadOnly)
	return ct, nil
}

// admit applies the tool's access mode and scopes to the caller: nil, or
// the error answered with the challenge.
func (t *tool) admit(caller *principal.Principal) error {
	if t.Access == inventory.Public {
		return nil
	}
	if caller == nil {
		return principal.ErrUnauthenticated
	}
	if !caller.HasScopes(t.scopes...) {
		return &principal.ScopeError{Required: slices.Clone(t.scopes)}
	}
	return nil
}

// gated reports whether calls and listings check the tool's gates: its
// own, and the global ones unless Reach accounts for them.
func (t *tool) gated() bool { return len(t.Gates) > 0 || t.Reach == nil }

// isObject reports whether s is the text of a JSON object.
func isObject(s string) bool {
	v, err := jsonstrict.Parse([]byte(s))
	return err == nil && v.Kind() == jsonstrict.Object
}

// encodeTool encodes a Tool object; an empty title, description or
// output schema is left out.
func encodeTool(name, title, description, input, output string, readOnly bool) []byte {
	b := mcphttp.AppendString(append(make([]byte, 0, 128+len(description)+len(input)+len(output)), `{"name":`...), name)
	if title != "" {
		b = mcphttp.AppendString(append(b, `,"title":`...), title)
	}
	if description != "" {
		b = mcphttp.AppendString(append(b, `,"description":`...), description)
	}
	b = append(append(b, `,"inputSchema":`...), input...)
	if output != "" {
		b = append(append(b, `,"outputSchema":`...), output...)
	}
	if readOnly {
		b = append(b, `,"annotations":{"readOnlyHint":true}`...)
	}
	return append(b, '}')
}

// argsSchema is the JSON Schema of string arguments: one property each,
// the required ones listed, nothing else allowed.
func argsSchema(args []Arg) string {
	b := []byte(`{"type":"object","properties":{`)
	var required []byte
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(mcphttp.AppendString(b, a.Name), `:{"type":"string"`...)
		if a.Required {
			b = append(b, `,"minLength":1`...)
			if len(required) > 0 {
				required = append(required, ',')
			}
			required = mcphttp.AppendString(required, a.Name)
		}
		b = fmt.Appendf(b, `,"maxLength":%d`, a.MaxLen)
		if a.Description != "" {
			b = mcphttp.AppendString(append(b, `,"description":`...), a.Description)
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	if len(required) > 0 {
		b = append(append(append(b, `,"required":[`...), required...), ']')
	}
	return string(append(b, `,"additionalProperties":false}`...))
}

// validToolName reports a tool name the specification recommends: 1..128
// characters of A-Z, a-z, 0-9, '_', '-' and '.'.
func validToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// errNotSetUp: a Part asked about callers before an endpoint set it up.
var errNotSetUp = errors.New("tools: the part is not set up (give it to mcphttp.New)")

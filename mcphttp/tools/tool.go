package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
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
	// per argument, required ones listed, no other property allowed). A
	// property annotated "x-mcp-header": "Name" (SEP-2243) must be
	// repeated in the Mcp-Param-Name header of a 2026-07-28 call: as it
	// is, or as =?base64?…?=; a call whose header is missing, malformed
	// or disagrees is refused (400, -32020) before the handler runs.
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
	// the handler reads Request.Arguments itself (Request.Bind);
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
	// observers (mcphttp.Request.Class, mcphttp.Call.Class):
	// mcphttp.ClassList, ClassRead, ClassSearch, or "" (anything else).
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
// *inventory.CursorError) and for anything else, which is logged. A
// handler that panics is recovered by the endpoint: the caller gets an
// internal error (-32603), the operator log the stack.
type Handler func(ctx context.Context, req *Request) (Result, error)

// Request is one call of a tool, as its handler sees it: values of its
// own, which the handler may keep after it returns.
type Request struct {
	// Name is the tool's registered name.
	Name string
	// Principal is the authenticated caller, as the inventory's methods
	// take it (Inventory.Read, List, Search); nil for an anonymous call of
	// a public tool. It holds no token, and is shared with the endpoint:
	// do not modify it.
	Principal *principal.Principal
	// Args holds the arguments of Tool.Args that the call has, checked;
	// nil when Tool.Args is nil.
	Args map[string]string
	// Arguments is params.arguments as received (client input, strictly
	// decoded: no duplicate or case-variant member names): the JSON text
	// of an object, or nil when it was absent or null. Decode it with
	// [Request.Bind] or encoding/json.
	Arguments json.RawMessage
	// Meta is params._meta as received (client input): the JSON text of
	// an object, or nil. [Request.MetaString] reads one member.
	Meta json.RawMessage
	// ProtocolVersion is the MCP protocol version of the call
	// ("2025-11-25", "2026-07-28").
	ProtocolVersion string
	// SessionID is the legacy session of the call, empty without one.
	SessionID string

	call *mcphttp.Request // the call being served (made for it, never reused)
}

// Bind decodes Arguments into v with encoding/json (absent arguments
// decode as {}); a member v has no field for is an error. A call whose
// arguments do not bind is the caller's to fix: answer it with an
// [ErrorResult] naming what is wrong.
func (r *Request) Bind(v any) error {
	args := r.Arguments
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// MetaString returns the string member name of Meta ("traceparent",
// say), and whether there is one. It is client input.
func (r *Request) MetaString(name string) (string, bool) {
	var v string
	var found bool
	_ = jsonstrict.Members(r.Meta, func(n []byte, val jsonstrict.Value) bool {
		if string(n) == name {
			v, found = val.Str()
			return false
		}
		return true
	})
	return v, found
}

// NoteURI tells the endpoint's observers the resource URI the call
// concerned (mcphttp.Call.URI; the audit record's uri), as the built-in
// tools do for what they read. Once the call was answered it does
// nothing (see mcphttp.Request.NoteURI).
func (r *Request) NoteURI(uri string) {
	if r.call != nil {
		r.call.NoteURI(uri)
	}
}

// Room returns the bytes an object may take that a handler returns as
// both the result's structuredContent and its one text item (which
// repeats it as a JSON string, whose escapes may double it), so that the
// whole response stays within the endpoint's byte limit: a third of the
// room the response leaves. A handler that fills a page (list_resources,
// a part's listing tool) stops there. It is 0 for a Request the part did
// not make.
func (r *Request) Room() int {
	if r.call == nil {
		return 0
	}
	fixed := textResultOverhead + len(`,"structuredContent":`)
	return max(membersRoom(r.call)-fixed, 0) / 3
}

// NoteEntries tells the endpoint's observers how many items a listing
// tool returned (mcphttp.Call.Entries). Once the call was answered it
// does nothing.
func (r *Request) NoteEntries(n int) {
	if r.call != nil {
		r.call.NoteEntries(n)
	}
}

// Result is what a handler answers: the MCP CallToolResult in Go values,
// which the part encodes, within the endpoint's byte limit (a result over
// it is a tool error result, logged).
type Result struct {
	// Content are the result's content items, in order.
	Content []Content
	// Structured, when not nil, is the result's structuredContent, sent
	// in protocol 2025-06-18 and later: a value encoding/json encodes as
	// a JSON object (a struct, a map), or a json.RawMessage holding one,
	// sent as it is. Older clients get Content alone, so put the same
	// JSON in a text item too, as the specification advises.
	Structured any
	// IsError marks a tool error result: the call reached the tool, which
	// could not do what was asked in a way the model can act on (bad
	// arguments, nothing found). Observers see it as error type
	// mcphttp.ErrorTypeToolError.
	IsError bool
}

// Content is one content item of a [Result]: a text item, or, when one
// of the pointers is set (exactly one may be), an image, an audio clip,
// an embedded resource or a link to a resource. [Text], [Image],
// [Audio], [Embedded] and [Link] make one of each.
type Content struct {
	// Text is the text of a text item; unused when a pointer is set.
	Text string
	// Image and Audio are an image or audio item: the bytes (base64 on
	// the wire) and their MIME type.
	Image, Audio *Media
	// Resource, when set, makes the item an embedded resource: its URI,
	// MIME type, and text or blob (base64-encoded on the wire).
	Resource *inventory.Contents
	// Link, when set, makes the item a resource_link: a resource the
	// client may read (or fetch) itself.
	Link *ResourceLink
}

// Media is the data of an image or audio item.
type Media struct {
	// Data is the raw bytes (sent base64-encoded).
	Data []byte
	// MIMEType is the data's type ("image/png", "audio/wav"). Required.
	MIMEType string
}

// ResourceLink is a resource_link content item: a resource named by URI,
// not embedded.
type ResourceLink struct {
	// URI and Name are required.
	URI, Name string
	// Title, Description and MIMEType are left out when empty.
	Title, Description, MIMEType string
	// Size is the resource's size in bytes; left out when zero.
	Size int64
}

// Text returns a text item.
func Text(text string) Content { return Content{Text: text} }

// Image returns an image item of data of the given MIME type.
func Image(data []byte, mimeType string) Content {
	return Content{Image: &Media{Data: data, MIMEType: mimeType}}
}

// Audio returns an audio item of data of the given MIME type.
func Audio(data []byte, mimeType string) Content {
	return Content{Audio: &Media{Data: data, MIMEType: mimeType}}
}

// Embedded returns an embedded resource item.
func Embedded(c inventory.Contents) Content { return Content{Resource: &c} }

// Link returns a resource_link item.
func Link(l ResourceLink) Content { return Content{Link: &l} }

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
	scopes  []string
	args    []Arg         // MaxLen filled in
	headers []headerParam // arguments bound to Mcp-Param headers (x-mcp-header)
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
		return nil, fmt.Errorf("tools: tool %q: tool names are 1..128 characters, each one of A-Z a-z 0-9 and the three _ - . (underscore, hyphen, dot)", t.Name)
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
	var err error
	if ct.args, err = compileArgs(t.Args, fail); err != nil {
		return nil, err
	}
	input := t.InputSchema
	if input == "" {
		input = argsSchema(ct.args)
	} else if !isObject(input) {
		return nil, fail("InputSchema must be the text of a JSON object")
	} else {
		var bad string
		if ct.headers, bad = headerParams(input); bad != "" {
			return nil, fail("InputSchema: the x-mcp-header of property %q must be a header name token (at most 64 characters)", bad)
		}
	}
	if t.OutputSchema != "" && !isObject(t.OutputSchema) {
		return nil, fail("OutputSchema must be the text of a JSON object")
	}
	ct.defOld = encodeTool(t.Name, "", t.Description, input, "", t.ReadOnly)
	ct.def = encodeTool(t.Name, t.Title, t.Description, input, t.OutputSchema, t.ReadOnly)
	return ct, nil
}

// compileArgs checks the arguments (a name each, no name twice, MaxLen not
// negative) and fills in the default MaxLen; fail words the error.
func compileArgs(args []Arg, fail func(format string, args ...any) error) ([]Arg, error) {
	var out []Arg
	for i, a := range args {
		switch {
		case a.Name == "":
			return nil, fail("argument %d has no name", i)
		case slices.ContainsFunc(args[:i], func(b Arg) bool { return b.Name == a.Name }):
			return nil, fail("argument %q is named twice", a.Name)
		case a.MaxLen < 0:
			return nil, fail("argument %q: MaxLen must not be negative", a.Name)
		case a.MaxLen == 0:
			a.MaxLen = DefaultMaxArgLen
		}
		out = append(out, a)
	}
	return out, nil
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
	b := mcpwire.AppendString(append(make([]byte, 0, 128+len(description)+len(input)+len(output)), `{"name":`...), name)
	if title != "" {
		b = mcpwire.AppendString(append(b, `,"title":`...), title)
	}
	if description != "" {
		b = mcpwire.AppendString(append(b, `,"description":`...), description)
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
		b = append(mcpwire.AppendString(b, a.Name), `:{"type":"string"`...)
		if a.Required {
			b = append(b, `,"minLength":1`...)
			if len(required) > 0 {
				required = append(required, ',')
			}
			required = mcpwire.AppendString(required, a.Name)
		}
		b = fmt.Appendf(b, `,"maxLength":%d`, a.MaxLen)
		if a.Description != "" {
			b = mcpwire.AppendString(append(b, `,"description":`...), a.Description)
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

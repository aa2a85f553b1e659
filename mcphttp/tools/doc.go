// Package tools is the tools part of an mcphttp endpoint: tools/list and
// tools/call for tools that are values — a definition and a handler — the
// built-in ones that offer the private inventory as tools, and a
// service's own beside them.
//
//	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{
//		Templates: map[string]tools.TemplateTool{"documents": {Name: "read_document"}},
//	})
//	part, err := tools.New(append(builtin, tools.Tool{
//		Name: "count_words", Description: "Counts the words of a text.",
//		Args: []tools.Arg{{Name: "text", Required: true}}, ReadOnly: true,
//		RequiredScopes: []string{"docs:read"},
//		Handler: func(ctx context.Context, req *tools.Request) (tools.Result, error) {
//			n := len(strings.Fields(req.Args["text"]))
//			return tools.Result{
//				Content:    []tools.Content{tools.Text(strconv.Itoa(n))},
//				Structured: map[string]int{"words": n},
//			}, nil
//		},
//	})...)
//
// A handler gets a [Request] of its own, which it may keep: the caller
// (Request.Principal, nil for an anonymous one: the same spelling as
// mcphttp.Request and the inventory's methods), the checked string
// arguments, the raw arguments ([Request.Bind]
// decodes them) and _meta. It returns a [Result] of Go values — text,
// image, audio, embedded resource and resource link items, structured
// content (any value that encodes as a JSON object), isError — which the
// part encodes within the endpoint's byte limit. A handler that panics is
// recovered by the endpoint: an internal error (-32603) to the caller,
// the stack to the operator log.
//
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, part)
//
// # The built-in tools
//
// [Builtin] returns the inventory as tools, for clients that call tools
// but never page through resources/list: list_resources (the pages and
// cursors of resources/list, as structuredContent and text), read_resource
// (resources/read), typed per-template tools (BuiltinOptions.Templates),
// and, when some template has a Search callback, search and fetch in the
// contract of ChatGPT connectors and deep research (one text item holding
// {"results":[{"id","title","url"}]}, and {"id","title","text","url",
// "metadata"}). Each is the inventory call the resource methods make,
// with the same caller: the same authentication, scopes, gates, grants,
// owner rule, byte limit and cursors, so a tool never shows or reads more
// than resources/list and resources/read would. They are [Tool] values
// like any other: filter them, or add tools next to them. What each takes
// and returns:
//
//   - list_resources, argument cursor (optional): one page of
//     resources/list, in the same order and with the same cursors (a cursor
//     of one continues the other), as structuredContent
//     {"resources":[…],"nextCursor":…} with an outputSchema, and the same
//     JSON as text.
//   - read_resource, argument uri: resources/read; text contents as text
//     items, binary ones as embedded resources.
//   - a typed tool (read_document), one string argument per template
//     variable (id): resources/read of the URI the arguments expand to,
//     the template's Validate rules applied.
//   - search, argument query: {"results":[{"id","title","url"}]} in one text
//     item, the hits of the templates' Search callbacks; the id is the
//     resource URI.
//   - fetch, argument id: {"id","title","text","url","metadata"} in one text
//     item, resources/read of the id; title is the contents' Title, else the
//     registered one (a static resource's Title or Name, a template's
//     Title), else the URI; metadata is {"uri","mimeType"}, with
//     "truncated":true when the text was cut to the byte limit.
//
// # Seeing and calling a tool
//
// tools/list shows each caller only the tools it may use, on one page: a
// tool's Access and RequiredScopes must admit the caller, the caller must
// pass its Gates (and the inventory's global gates), and its Reach, when
// set, must accept what the inventory lets the caller do (how the
// built-in tools follow it). A call of a tool the caller's gates hide
// answers as an unknown tool's; a call without the tool's access or
// scopes gets the challenge resources/read would give (401, or 403 naming
// the scopes). The tools capability is {"listChanged":true} in answers
// that come with event streams, and a grant change that changes a
// caller's tools reaches its streams as notifications/tools/list_changed.
//
// # Calls and errors
//
// params.name and params.arguments are read with the endpoint's one
// params reader (exact member names, after the strict
// decode). An unknown tool and a malformed call are -32602 protocol
// errors (the name is not echoed). A tool's string arguments (Tool.Args)
// are checked before its handler runs — names case-sensitive, no other
// member, required ones present and non-empty, lengths in UTF-16 code
// units — and a call that breaks them gets a tool error result (isError)
// with a fixed text naming the argument. A handler's error is answered
// so:
//
//	principal.ErrUnauthenticated, *principal.ScopeError  the challenge (401, 403)
//	*mcphttp.Error                                       that protocol error
//	inventory.ErrNotFound                                tool error "Resource not found."
//	*inventory.ParamsError                               tool error "Invalid arguments: …."
//	*inventory.CursorError                               tool error "Invalid cursor (reason)…"
//	anything else (logged; inventory errors are          tool error "The server could not
//	logged where they happen)                            complete this call."
//
// A *principal.ScopeError — from the handler, or from an inventory
// callback the built-in tools call (a record that needs a scope of its
// own) — is the HTTP 403 insufficient_scope challenge in both eras, never
// a tool result: clients step up on the challenge and retry, while a
// tool error would only reach the model.
//
// A result over the endpoint's byte limit is that last tool error too,
// logged. In 2026-07-28, tools/call needs Mcp-Name equal to params.name.
// Protocol 2025-06-18 and later get titles, output schemas and
// structuredContent; older versions do not.
//
// # Classes and observers
//
// Each tool has a class (Tool.Class), which mcphttp.Request.Class and
// mcphttp.Call.Class report for its calls: rate limits count
// list_resources as a list, read_resource,
// fetch and the typed tools as reads, search as a search, and tools/list
// as a list. Observers see a call's Target as the tool's registered name,
// its URI as the resource a built-in tool read, and a tool error result
// as error type mcphttp.ErrorTypeToolError with the outcome it had.
//
// # In front of another server
//
// tools/call claims (mcphttp.MethodOptions.Claims) only calls that name
// one of the part's tools, or whose name cannot be read: a handler in
// front of a legacy MCP server (mcphttp/intercept) forwards the others,
// and merges the endpoint's first tools/list page into the other
// server's (intercept does both).
package tools

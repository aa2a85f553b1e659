package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// The built-in tools: the private inventory offered as MCP tools, for
// clients that call tools but never page through resources/list. Every
// one is an inventory call the endpoint makes for resources/list or
// resources/read, with the same caller, so a tool never shows or reads
// more than those would.

// Names of the built-in tools other than the per-template ones.
const (
	NameListResources = "list_resources"
	NameReadResource  = "read_resource"
	NameSearch        = "search"
	NameFetch         = "fetch"
)

// DefaultSearchLimit is the most results of the search tool when
// BuiltinOptions.SearchLimit is zero.
const DefaultSearchLimit = 20

// BuiltinOptions configures [Builtin]. The zero value offers
// list_resources and read_resource, and search and fetch when some
// template has a Search callback.
type BuiltinOptions struct {
	// Templates turns templates into typed tools, keyed by template name:
	// a tool whose inputSchema has one string property per template
	// variable, and which reads the URI the arguments expand to, exactly
	// as read_resource (and resources/read) would. Builtin fails for an
	// unknown or hidden template, an invalid tool name, or a name another
	// built-in tool has. Nil means no typed tools.
	Templates map[string]TemplateTool

	// SearchLimit bounds the results of one search call. Zero means
	// DefaultSearchLimit; at most inventory.MaxSearchLimit.
	SearchLimit int

	// CitationURL returns the url that search and fetch report for a
	// resource URI: a link a person can open, for clients that cite
	// sources. It must be quick and may not fail. Nil means the URI
	// itself.
	CitationURL func(uri string) string
}

// TemplateTool names the tool of one template.
type TemplateTool struct {
	// Name is the tool's name: 1..128 characters of A–Z, a–z, 0–9, '_',
	// '-' and '.'. Required.
	Name string
	// Title and Description are shown to the client. Empty means ones
	// made from the template's title, description and URI template.
	Title, Description string
}

// Argument length limits of the built-in tools, in UTF-16 code units.
const (
	maxURIArg    = 2048 // a URI, an id, a template variable
	maxCursorArg = 4096 // a sealed cursor is far shorter
)

// Builtin returns the built-in tools over inv, in tools/list order:
// list_resources, read_resource, search and fetch (when some template of
// inv has a Search callback), and the typed tools of opts.Templates
// sorted by template name. Each is shown to the callers inv lets do what
// it does (inventory.Reach) and is of the class of what it does
// (list_resources: list; read_resource, fetch and the typed tools: read;
// search: search). Give them, and tools of one's own, to [New].
func Builtin(inv *inventory.Inventory, opts BuiltinOptions) ([]Tool, error) {
	if inv == nil {
		return nil, fmt.Errorf("tools: Builtin: nil inventory")
	}
	limit := opts.SearchLimit
	switch {
	case limit == 0:
		limit = DefaultSearchLimit
	case limit < 0 || limit > inventory.MaxSearchLimit:
		return nil, fmt.Errorf("tools: BuiltinOptions.SearchLimit must be 0..%d", inventory.MaxSearchLimit)
	}
	cite := opts.CitationURL
	if cite == nil {
		cite = func(uri string) string { return uri }
	}
	b := builtins{inv: inv, searchLimit: limit, cite: cite}
	out := []Tool{
		b.tool(Tool{Name: NameListResources, Title: "List resources", Description: listDescription,
			InputSchema: listInputSchema, OutputSchema: listOutputSchema,
			Args:  []Arg{{Name: "cursor", MaxLen: maxCursorArg}},
			Reach: func(r *inventory.Reach) bool { return r.List }, Class: mcphttp.ClassList, Handler: b.listResources}),
		b.tool(Tool{Name: NameReadResource, Title: "Read a resource", Description: readDescription,
			InputSchema: readInputSchema, Args: []Arg{{Name: "uri", Required: true, MaxLen: maxURIArg}},
			Reach: func(r *inventory.Reach) bool { return r.Read }, Class: mcphttp.ClassRead,
			Handler: func(ctx context.Context, req *Request) (Result, error) { return b.read(ctx, req, req.Args["uri"]) }}),
	}
	if inv.HasSearch() {
		searchable := func(r *inventory.Reach) bool { return r.Search }
		out = append(out,
			b.tool(Tool{Name: NameSearch, Title: "Search", Description: searchDescription,
				InputSchema: searchInputSchema, Args: []Arg{{Name: "query", Required: true, MaxLen: inventory.MaxQueryLen}},
				Reach: searchable, Class: mcphttp.ClassSearch, Handler: b.search}),
			b.tool(Tool{Name: NameFetch, Title: "Fetch a search result", Description: fetchDescription,
				InputSchema: fetchInputSchema, Args: []Arg{{Name: "id", Required: true, MaxLen: maxURIArg}},
				Reach: searchable, Class: mcphttp.ClassRead, Handler: b.fetch}))
	}
	names := make([]string, 0, len(opts.Templates))
	for name := range opts.Templates {
		names = append(names, name)
	}
	sort.Strings(names) // a deterministic order in tools/list
	for _, name := range names {
		tt := opts.Templates[name]
		ti, ok := inv.Template(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("tools: BuiltinOptions.Templates: the inventory has no template %q", name)
		case ti.Hidden:
			return nil, fmt.Errorf("tools: BuiltinOptions.Templates: template %q is hidden; a tool would show its pattern", name)
		case !validToolName(tt.Name):
			return nil, fmt.Errorf("tools: BuiltinOptions.Templates[%q]: tool names are 1..128 characters, each one of A-Z a-z 0-9 and the three _ - . (underscore, hyphen, dot)", name)
		case slices.ContainsFunc(out, func(t Tool) bool { return t.Name == tt.Name }):
			return nil, fmt.Errorf("tools: BuiltinOptions.Templates[%q]: tool name %q is taken", name, tt.Name)
		}
		out = append(out, b.templateTool(ti, tt))
	}
	return out, nil
}

// builtins is what the built-in tools share.
type builtins struct {
	inv         *inventory.Inventory
	searchLimit int
	cite        func(string) string
}

// tool marks t as a built-in tool of b's inventory: read-only, public
// (the inventory decides who may do what), answering from b.inv.
func (b *builtins) tool(t Tool) Tool {
	t.ReadOnly, t.Access, t.inv = true, inventory.Public, b.inv
	return t
}

// templateTool is the typed tool of one template.
func (b *builtins) templateTool(ti inventory.TemplateInfo, tt TemplateTool) Tool {
	args := make([]Arg, len(ti.Variables))
	for i, v := range ti.Variables {
		args[i] = Arg{Name: v, Required: true, MaxLen: maxURIArg, Description: "The {" + v + "} of " + ti.URITemplate + "."}
	}
	title, desc := tt.Title, tt.Description
	if title == "" {
		title = "Read " + cmpStr(ti.Title, ti.Name)
	}
	if desc == "" {
		desc = "Reads one resource " + ti.URITemplate + " by its variables, as resources/read does."
		if ti.Description != "" {
			desc = ti.Description + ". " + desc
		}
	}
	name, pattern := ti.Name, ti.URITemplate
	return b.tool(Tool{
		Name: tt.Name, Title: title, Description: desc, Args: args, // the schema holds no value of any caller: the same for everyone
		Reach: func(r *inventory.Reach) bool { return slices.Contains(r.Templates, name) },
		Class: mcphttp.ClassRead,
		Handler: func(ctx context.Context, req *Request) (Result, error) {
			uri, err := inventory.Expand(pattern, req.Args)
			if err != nil {
				return ErrorResult("Invalid arguments: every variable needs a non-empty value"), nil
			}
			return b.read(ctx, req, uri)
		},
	})
}

// listResources is list_resources: one page of resources/list, with the
// same cursors (the same purpose and binding: a resources/list cursor
// continues here, and the other way round). The page appears twice in the
// result — as structuredContent and as its JSON text for clients that read
// only text, a string in which every byte of the page is escaped to at
// most two (the page's strings are escaped already: what is left to
// escape is quotes and backslashes) — so the inventory fills it under a
// third of the room the response leaves: the whole response stays within
// the byte limit. Below that size the page is exactly the page
// resources/list gives.
func (b *builtins) listResources(ctx context.Context, req *Request) (Result, error) {
	c := req.call
	if c.Principal == nil && b.inv.HasListSources() {
		return Result{}, principal.ErrUnauthenticated
	}
	cursor, ok := req.Args["cursor"]
	if ok && cursor == "" {
		// The endpoint never issues an empty cursor: "" is not "start over".
		c.NoteOutcome(mcphttp.OutcomeInvalidCursor, inventory.ReasonInvalid)
		return ErrorResult(invalidCursorText(inventory.ReasonInvalid)), nil
	}
	room := req.Room()
	pg := page{body: append(make([]byte, 0, min(room, 8<<10)), `{"resources":[`...)}
	pg.limit = room - len(`],"nextCursor":""}`) - b.inv.MaxCursorLen()
	next, err := b.inv.List(ctx, c.Principal, cursor, pg.fit)
	var ce *inventory.CursorError
	switch {
	case errors.As(err, &ce):
		c.NoteOutcome(mcphttp.OutcomeInvalidCursor, ce.Reason)
		return ErrorResult(invalidCursorText(ce.Reason)), nil
	case err != nil:
		return Result{}, err
	}
	obj := append(pg.body, ']')
	if next != "" {
		obj = append(append(append(obj, `,"nextCursor":"`...), next...), '"')
	}
	obj = append(obj, '}')
	c.NoteEntries(pg.items)
	return Result{Content: []Content{{Text: string(obj)}}, Structured: json.RawMessage(obj)}, nil
}

// invalidCursorText is list_resources' tool error for a cursor that did
// not open.
func invalidCursorText(reason string) string {
	return "Invalid cursor (" + reason + "): call list_resources again without a cursor."
}

// page is list_resources' page being filled: each item offered is encoded
// into body, and kept while body stays within limit.
type page struct {
	body  []byte
	limit int
	items int
}

func (pg *page) fit(it *inventory.Item) bool {
	mark := len(pg.body)
	if pg.items > 0 {
		pg.body = append(pg.body, ',')
	}
	pg.body = mcpwire.AppendItem(pg.body, it)
	if len(pg.body) > pg.limit {
		pg.body = pg.body[:mark]
		return false
	}
	pg.items++
	return true
}

// read is read_resource and the typed template tools: resources/read of
// uri, its access checks included. Text contents become text items,
// binary ones embedded resources (with the blob base64-encoded).
func (b *builtins) read(ctx context.Context, req *Request, uri string) (Result, error) {
	req.NoteURI(uri)
	contents, err := b.inv.Read(ctx, req.Principal, uri)
	if err != nil {
		return Result{}, err
	}
	items := make([]Content, len(contents))
	for i := range contents {
		if contents[i].Blob == nil {
			items[i].Text = contents[i].Text
		} else {
			items[i].Resource = &contents[i]
		}
	}
	return Result{Content: items}, nil
}

func cmpStr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// Descriptions and schemas of the fixed tools.
const (
	listDescription = "Lists the resources you may read, one page at a time: the pages of resources/list. " +
		"Call it without a cursor first, then with the nextCursor of the previous page until there is none. " +
		"A cursor is bound to you and expires 15 minutes after the first page; after that, start again without one."
	readDescription = "Reads one resource by its URI (as listed by list_resources), as resources/read does. " +
		"A resource you may not see answers exactly like one that does not exist."
	searchDescription = "Searches the documents you may read. The result is one text item holding JSON " +
		`{"results":[{"id","title","url"}]}; pass an id to fetch for the full text.`
	fetchDescription = "Fetches the full text of one search result by its id. The result is one text item holding JSON " +
		`{"id","title","text","url","metadata"}.`

	listInputSchema = `{"type":"object","properties":{"cursor":{"type":"string","description":"The nextCursor of the previous page; omit it for the first page."}},"additionalProperties":false}`
	readInputSchema = `{"type":"object","properties":{"uri":{"type":"string","minLength":1,"maxLength":2048,"description":"The resource URI."}},"required":["uri"],"additionalProperties":false}`
	// searchInputSchema and fetchInputSchema follow the contract of
	// ChatGPT connectors and deep research: one string argument each.
	searchInputSchema = `{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":1024,"description":"What to search for."}},"required":["query"],"additionalProperties":false}`
	fetchInputSchema  = `{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":2048,"description":"The id of a search result."}},"required":["id"],"additionalProperties":false}`

	listOutputSchema = `{"type":"object","properties":{"resources":{"type":"array","items":{"type":"object","properties":{` +
		`"uri":{"type":"string"},"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},` +
		`"mimeType":{"type":"string"}},"required":["uri","name"]}},` +
		`"nextCursor":{"type":"string","description":"Present when more pages follow."}},"required":["resources"]}`
)

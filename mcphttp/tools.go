package mcphttp

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
)

// The tools bridge: the private inventory offered as MCP tools, for
// clients that call tools but never page through resources/list. Every
// tool is an inventory call the transport already makes for resources/list
// or resources/read, with the same caller, so a tool never shows or reads
// more than those would.

// Names of the bridge's fixed tools.
const (
	ToolListResources = "list_resources"
	ToolReadResource  = "read_resource"
	ToolSearch        = "search"
	ToolFetch         = "fetch"
)

// DefaultSearchLimit is the most results of the search tool when
// ToolOptions.SearchLimit is zero.
const DefaultSearchLimit = 20

// ToolOptions turns on the tools bridge (Options.Tools). The zero value
// offers list_resources and read_resource, and search and fetch when some
// template has a Search callback.
type ToolOptions struct {
	// Templates turns templates into typed tools, keyed by template name:
	// a tool whose inputSchema has one string property per template
	// variable, and which reads the URI the arguments expand to, exactly
	// as read_resource (and resources/read) would. New fails for an
	// unknown or hidden template, an invalid tool name, or a name another
	// tool has. Nil means no typed tools.
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

type toolKind uint8

const (
	kindList toolKind = iota
	kindRead
	kindSearch
	kindFetch
	kindTemplate
)

// tool is one tool of the bridge, its definition pre-encoded.
type tool struct {
	name        string
	kind        toolKind
	args        []argSpec
	tmpl        string // kindTemplate: the template's name
	uriTemplate string // kindTemplate
	// def is the Tool object for protocol 2025-06-18 and later (title,
	// outputSchema); defOld the one for earlier versions.
	def, defOld []byte
}

// argSpec is one string argument of a tool.
type argSpec struct {
	name     string
	required bool
	maxLen   int // in UTF-16 code units
}

// Argument length limits, in UTF-16 code units.
const (
	maxURIArg    = 2048 // a URI, an id, a template variable
	maxCursorArg = 4096 // a sealed cursor is far shorter
)

// toolSet is the bridge's tools, in tools/list order.
type toolSet struct {
	tools       []*tool
	byName      map[string]*tool
	searchLimit int
	citation    func(string) string
}

// newToolSet validates opts against inv and builds the tools.
func newToolSet(inv *inventory.Inventory, opts *ToolOptions) (*toolSet, error) {
	ts := &toolSet{byName: map[string]*tool{}, searchLimit: opts.SearchLimit, citation: opts.CitationURL}
	switch {
	case ts.searchLimit == 0:
		ts.searchLimit = DefaultSearchLimit
	case ts.searchLimit < 0 || ts.searchLimit > inventory.MaxSearchLimit:
		return nil, fmt.Errorf("mcphttp: ToolOptions.SearchLimit must be 0..%d", inventory.MaxSearchLimit)
	}
	if ts.citation == nil {
		ts.citation = func(uri string) string { return uri }
	}
	ts.add(&tool{name: ToolListResources, kind: kindList, args: []argSpec{{name: "cursor", maxLen: maxCursorArg}}},
		"List resources", listDescription, listInputSchema, listOutputSchema)
	ts.add(&tool{name: ToolReadResource, kind: kindRead, args: []argSpec{{name: "uri", required: true, maxLen: maxURIArg}}},
		"Read a resource", readDescription, readInputSchema, "")
	if inv.HasSearch() {
		ts.add(&tool{name: ToolSearch, kind: kindSearch, args: []argSpec{{name: "query", required: true, maxLen: inventory.MaxQueryLen}}},
			"Search", searchDescription, searchInputSchema, "")
		ts.add(&tool{name: ToolFetch, kind: kindFetch, args: []argSpec{{name: "id", required: true, maxLen: maxURIArg}}},
			"Fetch a search result", fetchDescription, fetchInputSchema, "")
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
			return nil, fmt.Errorf("mcphttp: ToolOptions.Templates: the inventory has no template %q", name)
		case ti.Hidden:
			return nil, fmt.Errorf("mcphttp: ToolOptions.Templates: template %q is hidden; a tool would show its pattern", name)
		case !validToolName(tt.Name):
			return nil, fmt.Errorf("mcphttp: ToolOptions.Templates[%q]: tool names are 1..128 characters of A-Z a-z 0-9 _ - .", name)
		case ts.byName[tt.Name] != nil:
			return nil, fmt.Errorf("mcphttp: ToolOptions.Templates[%q]: tool name %q is taken", name, tt.Name)
		}
		t := &tool{name: tt.Name, kind: kindTemplate, tmpl: ti.Name, uriTemplate: ti.URITemplate}
		for _, v := range ti.Variables {
			t.args = append(t.args, argSpec{name: v, required: true, maxLen: maxURIArg})
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
		ts.add(t, title, desc, templateInputSchema(ti), "")
	}
	return ts, nil
}

// add encodes t's definitions and adds it.
func (ts *toolSet) add(t *tool, title, description, input, output string) {
	t.defOld = encodeTool(t.name, "", description, input, "")
	t.def = encodeTool(t.name, title, description, input, output)
	ts.tools = append(ts.tools, t)
	ts.byName[t.name] = t
}

// encodeTool encodes a Tool object; an empty title or output schema is
// left out.
func encodeTool(name, title, description, input, output string) []byte {
	b := append([]byte(`{"name":`), budget.AppendString(nil, name)...)
	if title != "" {
		b = append(b, `,"title":`...)
		b = budget.AppendString(b, title)
	}
	b = append(b, `,"description":`...)
	b = budget.AppendString(b, description)
	b = append(b, `,"inputSchema":`...)
	b = append(b, input...)
	if output != "" {
		b = append(b, `,"outputSchema":`...)
		b = append(b, output...)
	}
	return append(b, `,"annotations":{"readOnlyHint":true}}`...)
}

// names returns the names of the tools.
func (ts *toolSet) names() []string {
	out := make([]string, 0, len(ts.tools))
	for _, t := range ts.tools {
		out = append(out, t.name)
	}
	return out
}

// shown reports whether tools/list shows t to a caller with reach r.
func (t *tool) shown(r *inventory.Reach) bool {
	switch t.kind {
	case kindList:
		return r.List
	case kindRead:
		return r.Read
	case kindSearch, kindFetch:
		return r.Search
	}
	return slices.Contains(r.Templates, t.tmpl)
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

// templateInputSchema is one required string property per variable,
// nothing else. It holds no value of any caller (no completions): the
// list is the same for everyone who may use the tool.
func templateInputSchema(ti inventory.TemplateInfo) string {
	b := []byte(`{"type":"object","properties":{`)
	for i, v := range ti.Variables {
		if i > 0 {
			b = append(b, ',')
		}
		b = budget.AppendString(b, v)
		b = append(b, `:{"type":"string","minLength":1,"maxLength":2048,"description":`...)
		b = budget.AppendString(b, "The {"+v+"} of "+ti.URITemplate+".")
		b = append(b, '}')
	}
	b = append(b, `},"required":[`...)
	for i, v := range ti.Variables {
		if i > 0 {
			b = append(b, ',')
		}
		b = budget.AppendString(b, v)
	}
	return string(append(b, `],"additionalProperties":false}`...))
}

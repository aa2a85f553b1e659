package skills

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// The tools bridge's seam: skills as tools, for clients that call tools
// but do not speak the extension. Like part.go, only this file knows the
// tools part's API.

// Names of the tools Tools returns.
const (
	ToolListSkills = "list_skills"
	ToolGetSkill   = "get_skill"
)

// Tools returns list_skills (a page of skills/list: the caller's skills,
// with a cursor for the next page) and get_skill (skills/get by SKILL.md
// URI), to add to an mcphttp/tools part beside the built-in tools. They
// make the very calls the methods make, with the same caller: they never
// show more than skills/list and skills/get would, and the skill files
// are read with the read_resource tool (resources/read's access checks).
// tools/list shows them only to callers who may read the source's
// template.
func (c *Catalog) Tools() []tools.Tool {
	reach := func(r *inventory.Reach) bool { return slices.Contains(r.Templates, c.src.Template) }
	return []tools.Tool{{
		Name: ToolListSkills, Title: "List skills",
		Description: "Lists your skills (instructions for workflows, each a folder of files with a SKILL.md): " +
			"each one's SKILL.md URI, frontmatter (name, description) and files with their sha256 digests and sizes. " +
			"Pass nextCursor back as cursor for the next page. Read a file with read_resource.",
		Args:     []tools.Arg{{Name: "cursor", Description: "nextCursor of the previous page; omit for the first page."}},
		ReadOnly: true, Reach: reach, Class: mcphttp.ClassList,
		Handler: c.listTool,
	}, {
		Name: ToolGetSkill, Title: "Get a skill",
		Description: "Returns one of your skills by the URI of its SKILL.md: its frontmatter and files with their digests and sizes.",
		Args:        []tools.Arg{{Name: "uri", Description: "The skill's SKILL.md URI.", Required: true}},
		ReadOnly:    true, Reach: reach, Class: mcphttp.ClassRead,
		Handler: c.getTool,
	}}
}

func (c *Catalog) listTool(ctx context.Context, req *tools.Request) (tools.Result, error) {
	// The page goes out twice (structuredContent and a text item holding
	// it as a JSON string): req.Room is what it may take.
	room := req.Room() - pageReserve()
	b, next, items, err := c.appendPage(ctx, req.Principal, req.Args["cursor"], append(make([]byte, 0, 4096), `{"skills":[`...), room)
	if err != nil {
		return tools.Result{}, err
	}
	req.NoteEntries(items)
	b = append(endPage(b, next), '}')
	return structured(b), nil
}

func (c *Catalog) getTool(ctx context.Context, req *tools.Request) (tools.Result, error) {
	uri := req.Args["uri"]
	req.NoteURI(uri)
	s, err := c.Get(ctx, req.Principal, uri)
	if err != nil {
		return tools.Result{}, err // not found: the tools part's "Resource not found." for every such URI
	}
	b := appendSkill(append(make([]byte, 0, 1024), `{"skill":`...), &s)
	return structured(append(b, '}')), nil
}

// structured is a result whose structuredContent is obj, repeated as the
// text item older clients read.
func structured(obj []byte) tools.Result {
	r := tools.TextResult(string(obj))
	r.Structured = json.RawMessage(obj)
	return r
}

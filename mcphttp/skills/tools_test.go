package skills_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

func toolsEndpoint(t *testing.T, s *store, inv *inventory.Inventory) http.Handler {
	t.Helper()
	cat, err := skills.New(inv, s.source(), skills.Options{PageSize: 2})
	require.NoError(t, err)
	part, err := tools.New(cat.Tools()...)
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{}, part, cat)
	require.NoError(t, err)
	return asUser(ep)
}

type toolResult struct {
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
	Content    []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func callTool(t *testing.T, h http.Handler, user, name string, args map[string]any) toolResult {
	t.Helper()
	rpc, _ := call(t, h, user, false, "tools/call", map[string]any{"name": name, "arguments": args})
	require.Nil(t, rpc.Error)
	var r toolResult
	require.NoError(t, json.Unmarshal(rpc.Result, &r))
	return r
}

func toolNames(t *testing.T, h http.Handler, user string) []string {
	t.Helper()
	rpc, _ := call(t, h, user, false, "tools/list", nil)
	require.Nil(t, rpc.Error)
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(rpc.Result, &res))
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// The tools never show more than the methods: alice pages through her own
// skills, and bob's skill is "not found" for her, as a URI that does not
// exist.
func TestSkillTools(t *testing.T) {
	s := seeded()
	s.add("alice", "third-skill", nil)
	h := toolsEndpoint(t, s, s.inventory(t))
	assert.ElementsMatch(t, []string{skills.ToolListSkills, skills.ToolGetSkill}, toolNames(t, h, "alice"))

	var uris []string
	args := map[string]any{}
	for range 5 {
		r := callTool(t, h, "alice", skills.ToolListSkills, args)
		require.False(t, r.IsError, "%+v", r)
		var page struct {
			Skills []struct{ URI string } `json:"skills"`
			Next   string                 `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(r.Structured, &page))
		require.Len(t, r.Content, 1)
		assert.JSONEq(t, string(r.Structured), r.Content[0].Text, "the text item repeats the structured content")
		for _, sk := range page.Skills {
			uris = append(uris, sk.URI)
		}
		if page.Next == "" {
			break
		}
		args = map[string]any{"cursor": page.Next}
	}
	assert.Equal(t, []string{"skill://alice/git-workflow/SKILL.md", "skill://alice/pdf-processing/SKILL.md", "skill://alice/third-skill/SKILL.md"}, uris)

	r := callTool(t, h, "alice", skills.ToolGetSkill, map[string]any{"uri": "skill://alice/git-workflow/SKILL.md"})
	assert.False(t, r.IsError)
	assert.Contains(t, string(r.Structured), `"name":"git-workflow"`)

	bobs := callTool(t, h, "alice", skills.ToolGetSkill, map[string]any{"uri": "skill://bob/bob-secrets/SKILL.md"})
	none := callTool(t, h, "alice", skills.ToolGetSkill, map[string]any{"uri": "skill://bob/no-such/SKILL.md"})
	assert.True(t, bobs.IsError)
	assert.Equal(t, none, bobs, "bob's skill answers as one that does not exist")
	assert.NotContains(t, strings.ToLower(bobs.Content[0].Text), "bob")

	// bob's cursor for alice: invalid.
	first := callTool(t, h, "bob", skills.ToolListSkills, nil)
	assert.False(t, first.IsError)
	r = callTool(t, h, "alice", skills.ToolListSkills, map[string]any{"cursor": "bogus"})
	assert.True(t, r.IsError)
}

// A caller who may not read the source's template does not see the tools.
func TestSkillToolsFollowTheTemplate(t *testing.T) {
	s := seeded()
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}", Read: s.read, Gates: []string{"beta"},
	}}, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}})
	require.NoError(t, err)
	h := toolsEndpoint(t, s, inv)
	assert.Empty(t, toolNames(t, h, "alice"))
}

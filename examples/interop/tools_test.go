package interop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// searchQuery finds four of alice's seeded documents (and bob's none).
const searchQuery = "quarterly"

// toolText returns the single text item of a tool result.
func toolText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "a text item")
	return tc.Text
}

// TestGoSDKToolsBridge: the go-sdk client uses the documents server's
// tools in both eras: list_resources to the end gives the resources/list
// walk, read_resource reads every URI, search and fetch find alice's
// documents, and bob's URIs and ids answer like missing ones.
func TestGoSDKToolsBridge(t *testing.T) {
	d := startDocuments(t)
	bobs := d.bobsDocuments(t)
	for _, era := range []struct{ name, version string }{{"2026-07-28", ""}, {"2025-11-25", "2025-11-25"}} {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			cs := d.connect(t, d.alice, era.version)
			require.NotNil(t, cs.InitializeResult().Capabilities.Tools, "the tools capability")
			want, _ := walk(t, cs)

			tools, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				require.NotNil(t, tl.Annotations)
				assert.True(t, tl.Annotations.ReadOnlyHint, tl.Name)
			}
			assert.Equal(t, []string{"list_resources", "read_resource", "search", "fetch", "read_document", "count_words", "list_skills", "get_skill"}, names,
				"the kit's tools, then the server's own")

			var listed []string
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 1000)
				args := map[string]any{}
				if cursor != "" {
					args["cursor"] = cursor
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_resources", Arguments: args})
				require.NoError(t, err)
				require.False(t, res.IsError)
				var page struct {
					Resources  []struct{ URI string } `json:"resources"`
					NextCursor string                 `json:"nextCursor"`
				}
				require.NoError(t, json.Unmarshal([]byte(toolText(t, res)), &page))
				structured, err := json.Marshal(res.StructuredContent)
				require.NoError(t, err)
				assert.JSONEq(t, toolText(t, res), string(structured), "the text is the structured page")
				for _, r := range page.Resources {
					listed = append(listed, r.URI)
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			assert.Equal(t, want, listed, "list_resources walks exactly resources/list")

			for _, u := range listed {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_resource", Arguments: map[string]any{"uri": u}})
				require.NoError(t, err)
				assert.False(t, res.IsError, u)
				assert.NotEmpty(t, toolText(t, res), u)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": searchQuery}})
			require.NoError(t, err)
			var found struct {
				Results []struct{ ID, Title, URL string } `json:"results"`
			}
			require.NoError(t, json.Unmarshal([]byte(toolText(t, res)), &found))
			require.Len(t, found.Results, 4, "alice's four quarterly reports")
			for _, r := range found.Results {
				assert.Contains(t, listed, r.ID)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"id": r.ID}})
				require.NoError(t, err)
				require.False(t, res.IsError)
				var doc struct{ ID, Title, Text, URL string }
				require.NoError(t, json.Unmarshal([]byte(toolText(t, res)), &doc))
				assert.Equal(t, r.Title, doc.Title)
				assert.Contains(t, doc.Text, "A private document of alice")
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "count_words", Arguments: map[string]any{"id": strings.TrimPrefix(r.ID, documentPrefix)}})
				require.NoError(t, err)
				require.False(t, res.IsError)
				assert.Regexp(t, `^\d+ words, \d+ lines$`, toolText(t, res), "the server's own tool reads alice's document")
			}

			missing, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"id": documentPrefix + "no-such-document"}})
			require.NoError(t, err)
			require.True(t, missing.IsError)
			for _, u := range bobs {
				for _, call := range []mcp.CallToolParams{
					{Name: "fetch", Arguments: map[string]any{"id": u}},
					{Name: "read_resource", Arguments: map[string]any{"uri": u}},
					{Name: "read_document", Arguments: map[string]any{"id": strings.TrimPrefix(u, documentPrefix)}},
					{Name: "count_words", Arguments: map[string]any{"id": strings.TrimPrefix(u, documentPrefix)}},
				} {
					res, err := cs.CallTool(ctx, &call)
					require.NoError(t, err)
					assert.True(t, res.IsError, "%s %v", call.Name, call.Arguments)
					assert.Equal(t, toolText(t, missing), toolText(t, res), "bob's %s answers like a missing one", u)
				}
			}
		})
	}
}

// tsToolsSummary is what tsclient/tools.mjs prints.
type tsToolsSummary struct {
	SDK, SDKVersion, Era, ProtocolVersion string
	ToolsCapability                       bool
	Tools                                 []string
	Pages                                 int
	Listed, ForeignListed                 []string
	Read                                  []struct {
		URI string
		OK  bool
	}
	Search []struct {
		ID, Title, URL, FetchedTitle string
		Fetched                      bool
		TextBytes                    int
	}
	Foreign []struct {
		URI                                string
		ReadError, FetchError, LikeMissing bool
	}
	Problems []string
	OK       bool
}

// TestTypeScriptSDKTools runs tsclient/tools.mjs with the official
// TypeScript SDK clients — v1 in the legacy era, v2 in both — against the
// documents server as alice, with bob's URIs as the foreign ones, and
// checks what they saw against the go-sdk client's resources/list walk.
func TestTypeScriptSDKTools(t *testing.T) {
	node, sdkDir := tsSDK(t)
	d := startDocuments(t)
	bobs := d.bobsDocuments(t)
	goList, _ := walk(t, d.connect(t, d.alice, "2025-11-25"))
	for _, run := range []struct{ sdk, era, protocol string }{
		{"v1", "legacy", "2025-11-25"},
		{"v2", "legacy", "2025-11-25"},
		{"v2", "modern", "2026-07-28"},
	} {
		t.Run(run.sdk+" "+run.era, func(t *testing.T) {
			var s tsToolsSummary
			runErr := runTSClient(t, node, sdkDir, d.alice, &s, "tools.mjs", append([]string{run.sdk, run.era, d.mcpURL, searchQuery}, bobs...)...)
			t.Logf("TypeScript SDK %s %s, protocol %s: %d resources in %d pages, %d search results",
				s.SDK, s.SDKVersion, s.ProtocolVersion, len(s.Listed), s.Pages, len(s.Search))
			assert.Empty(t, s.Problems)
			assert.True(t, s.OK)
			assert.NoError(t, runErr, "exit status 1 means a check failed")

			assert.Equal(t, run.protocol, s.ProtocolVersion)
			assert.True(t, s.ToolsCapability)
			assert.Equal(t, []string{"list_resources", "read_resource", "search", "fetch", "read_document", "count_words", "list_skills", "get_skill"}, s.Tools)
			assert.Greater(t, s.Pages, 1, "list_resources spans several pages")
			assert.Equal(t, goList, s.Listed, "list_resources walks exactly what resources/list does")
			assert.Empty(t, s.ForeignListed)
			require.Len(t, s.Read, len(s.Listed))
			for _, r := range s.Read {
				assert.True(t, r.OK, r.URI)
			}
			require.Len(t, s.Search, 4, "alice's four quarterly reports")
			for _, h := range s.Search {
				assert.True(t, strings.HasPrefix(h.ID, documentPrefix), h.ID)
				assert.Contains(t, goList, h.ID)
				assert.True(t, h.Fetched)
				assert.Equal(t, h.Title, h.FetchedTitle)
				assert.Positive(t, h.TextBytes)
			}
			require.Len(t, s.Foreign, len(bobs))
			for _, f := range s.Foreign {
				assert.True(t, f.ReadError && f.FetchError && f.LikeMissing, "bob's %s answers like a missing one", f.URI)
			}
		})
	}
}

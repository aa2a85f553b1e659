package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// TestToolsByteBudget: no tool response exceeds the endpoint's byte
// limit, however large the entries, titles and texts: list_resources
// fills smaller pages (and still reaches every resource), search drops
// the last results, fetch cuts the text, and a read too large for the
// limit fails as resources/read does. (The limit is the endpoint's now,
// at least one maximal entry's page: the sizes are those of the old test
// scaled to it, names of quotes that escape to twice their size.)
func TestToolsByteBudget(t *testing.T) {
	const limit = 20 << 10
	f := newFixture(t, fixtureOptions{
		maxBytes: limit,
		builtin:  &tools.BuiltinOptions{SearchLimit: inventory.MaxSearchLimit},
		big:      14 << 10, // 14 KiB documents of quotes and backslashes: readable, but over the limit escaped twice
	})
	for _, e := range []era{eraModern, eraLegacy, eraOld} {
		t.Run(string(e), func(t *testing.T) {
			// Every response of the walk stays within the limit.
			var viaTools []string
			cursor, pages := "", 0
			for {
				args := map[string]any{}
				if cursor != "" {
					args["cursor"] = cursor
				}
				w := f.post(t, alicePrincipal, e, "tools/call", map[string]any{"name": "list_resources", "arguments": args})
				require.LessOrEqual(t, w.Body.Len(), limit)
				var res toolResult
				require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
				require.False(t, res.IsError, res.Content)
				var p listPage
				require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &p))
				require.NotEmpty(t, p.Resources)
				for _, r := range p.Resources {
					viaTools = append(viaTools, r.URI)
				}
				pages++
				if cursor = p.NextCursor; cursor == "" {
					break
				}
			}
			assert.Equal(t, f.walkResources(t, alicePrincipal, e), viaTools, "smaller pages, the same resources")
			assert.Greater(t, pages, 1)

			w := f.post(t, alicePrincipal, e, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": `"`}})
			assert.LessOrEqual(t, w.Body.Len(), limit)
			var res toolResult
			require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
			var found struct{ Results []struct{ ID string } }
			require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &found))
			assert.NotEmpty(t, found.Results)
			assert.Less(t, len(found.Results), 12, "the results past the limit are left out")

			w = f.post(t, alicePrincipal, e, "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"id": "docs://documents/alice-0001"}})
			assert.LessOrEqual(t, w.Body.Len(), limit)
			assert.Greater(t, w.Body.Len(), limit*9/10, "the text is cut to what fits, not much less")
			require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
			require.False(t, res.IsError)
			var doc struct {
				Text     string
				Metadata struct{ Truncated bool }
			}
			require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &doc))
			assert.True(t, doc.Metadata.Truncated)
			assert.True(t, strings.HasPrefix(strings.Repeat(`"quoted" \ text `, 3000), doc.Text))

			// read_resource escapes once, like resources/read: it fits.
			w = f.post(t, alicePrincipal, e, "tools/call", map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "docs://documents/alice-0001"}})
			assert.LessOrEqual(t, w.Body.Len(), limit)
			require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
			assert.False(t, res.IsError)
		})
	}

	// Contents over the limit: read_resource fails as resources/read does.
	small := newFixture(t, fixtureOptions{maxBytes: limit, big: 32 << 10})
	w := small.post(t, alicePrincipal, eraModern, "tools/call", map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "docs://documents/alice-0001"}})
	var res toolResult
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
	assert.True(t, res.IsError)
	assert.Equal(t, "The server could not complete this call.", res.Content[0].Text)
	w = small.post(t, alicePrincipal, eraModern, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"})
	assert.NotNil(t, decode(t, w).Error)
}

package interop_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
)

// TestGoSDKClient walks the documents server with the official go-sdk
// client in both protocol eras.
func TestGoSDKClient(t *testing.T) {
	d := startDocuments(t)
	bobs := d.bobsDocuments(t)
	var eraLists [][]string
	for _, era := range []struct{ name, version, negotiated string }{
		{"2026-07-28 (server/discover)", "", "2026-07-28"},
		{"2025-11-25 (initialize)", "2025-11-25", "2025-11-25"},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			cs := d.connect(t, d.alice, era.version)
			require.Equal(t, era.negotiated, cs.InitializeResult().ProtocolVersion)
			require.NotNil(t, cs.InitializeResult().Capabilities.Resources)

			uris, pages := walk(t, cs)
			eraLists = append(eraLists, uris)
			mine := documentsOf(uris)
			require.NotEmpty(t, mine)
			assert.Greater(t, pages, 1, "alice's list spans several pages")
			seen := map[string]bool{}
			for _, u := range uris {
				assert.False(t, seen[u], "%s listed twice", u)
				seen[u] = true
			}
			for _, u := range bobs {
				assert.NotContains(t, uris, u, "bob's document listed to alice")
			}
			for _, u := range uris {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
				if assert.NoError(t, err, u) && assert.NotEmpty(t, res.Contents, u) {
					assert.Equal(t, u, res.Contents[0].URI)
				}
			}
			for _, u := range bobs {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
				assert.Error(t, err, "bob's %s read with alice's token", u)
			}
		})
	}
	if len(eraLists) == 2 {
		assert.Equal(t, eraLists[0], eraLists[1], "both eras list the same resources in the same order")
	}
}

// TestGoSDKWithoutToken: an anonymous go-sdk client may connect but not
// list; the 401 challenge's resource_metadata is fetched and checked by the
// go-sdk's own RFC 9728 discovery (oauthex).
func TestGoSDKWithoutToken(t *testing.T) {
	d := startDocuments(t)
	for _, version := range []string{"", "2025-11-25"} {
		cs := d.connect(t, "", version)
		_, err := cs.ListResources(context.Background(), nil)
		assert.Error(t, err, "version %q: resources/list without a token", version)
	}

	r, err := http.NewRequest(http.MethodPost, d.mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	challenges, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
	require.NoError(t, err)
	require.Len(t, challenges, 1)
	assert.Equal(t, "bearer", challenges[0].Scheme)
	metadataURL := challenges[0].Params["resource_metadata"]
	want, err := authn.MetadataURL(d.app.Resource())
	require.NoError(t, err)
	assert.Equal(t, want, metadataURL)

	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), metadataURL, d.app.Resource(), http.DefaultClient)
	require.NoError(t, err)
	assert.Equal(t, d.app.Resource(), prm.Resource)
	assert.NotEmpty(t, prm.AuthorizationServers)
}

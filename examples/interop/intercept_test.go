package interop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterceptWithRealSDKs wraps real MCP servers from the official go-sdk
// (stateful and stateless) and mcp-go, and drives them with the go-sdk
// client in both protocol eras: the legacy tools keep working through the
// wrapper, and the private inventory is served by mcpkit.
func TestInterceptWithRealSDKs(t *testing.T) {
	legacies := map[string]func() http.Handler{
		"go-sdk stateful": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
		},
		"go-sdk stateless": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
		},
		"go-sdk json responses": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
		},
		"mcp-go": mcpGoServer,
	}
	for name, mk := range legacies {
		for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
			label := version
			if label == "" {
				label = "newest"
			}
			t.Run(name+" "+label, func(t *testing.T) {
				f := newInterceptFixture(t)
				h, err := f.intercept(mk(), false)
				require.NoError(t, err)
				srv := httptest.NewServer(h)
				defer srv.Close()

				ctx := context.Background()
				client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
				hc := &http.Client{Transport: bearer{token: f.token(t, "alice"), next: http.DefaultTransport}}
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc},
					&sdk.ClientSessionOptions{ProtocolVersion: version})
				require.NoError(t, err)
				defer cs.Close()

				caps := cs.InitializeResult().Capabilities
				require.NotNil(t, caps.Resources, "the wrapper must announce resources")
				assert.NotNil(t, caps.Completions, "and completions")
				assert.NotNil(t, caps.Tools, "the legacy capabilities stay")

				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				require.NoError(t, err)
				require.Len(t, res.Content, 1)
				assert.Equal(t, "echo: hi", res.Content[0].(*sdk.TextContent).Text)

				var uris []string
				cursor := ""
				for range 20 {
					page, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
					require.NoError(t, err)
					for _, r := range page.Resources {
						uris = append(uris, r.URI)
					}
					if cursor = page.NextCursor; cursor == "" {
						break
					}
				}
				assert.Len(t, uris, 14, "statics and alice's documents")
				for _, u := range uris {
					assert.NotContains(t, u, "bob")
				}
				read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "docs://documents/alice-0001"})
				require.NoError(t, err)
				assert.Equal(t, "Contents of Document alice-0001", read.Contents[0].Text)
				_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "docs://documents/bob-0001"})
				assert.Error(t, err, "bob's document is not readable with alice's token")

				comp, err := cs.Complete(ctx, &sdk.CompleteParams{
					Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: "test://template/{id}/data"},
					Argument: sdk.CompleteParamsArgument{Name: "id", Value: "2"},
				})
				require.NoError(t, err)
				assert.Equal(t, []string{"200"}, comp.Completion.Values)
			})
		}
	}
}

// TestInterceptToolsWithRealSDKs: the tools bridge in front of real SDK
// servers with a tool of their own. tools/list shows the legacy tool and
// the bridge's; the legacy tool is still called on the legacy server, the
// bridge's are served by mcpkit; a legacy tool named like a bridge tool is
// a construction error.
func TestInterceptToolsWithRealSDKs(t *testing.T) {
	legacies := map[string]func() http.Handler{
		"go-sdk stateful": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
		},
		"go-sdk stateless": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
		},
		"go-sdk json responses": func() http.Handler {
			s := goSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
		},
		"mcp-go": mcpGoServer,
	}
	for name, mk := range legacies {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(name+" "+version, func(t *testing.T) {
				f := newInterceptFixture(t)
				h, err := f.intercept(mk(), true)
				require.NoError(t, err)
				srv := httptest.NewServer(h)
				defer srv.Close()
				ctx := context.Background()
				client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
				hc := &http.Client{Transport: bearer{token: f.token(t, "alice"), next: http.DefaultTransport}}
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc},
					&sdk.ClientSessionOptions{ProtocolVersion: version})
				require.NoError(t, err)
				defer cs.Close()

				tools, err := cs.ListTools(ctx, nil)
				require.NoError(t, err)
				var names []string
				for _, tl := range tools.Tools {
					names = append(names, tl.Name)
				}
				assert.Equal(t, []string{"echo", "list_resources", "read_resource"}, names, "the legacy tool, then the bridge's")

				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				require.NoError(t, err)
				assert.Equal(t, "echo: hi", res.Content[0].(*sdk.TextContent).Text)
				res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_resource", Arguments: map[string]any{"uri": "docs://documents/alice-0001"}})
				require.NoError(t, err)
				assert.Equal(t, "Contents of Document alice-0001", res.Content[0].(*sdk.TextContent).Text)
				res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_resource", Arguments: map[string]any{"uri": "docs://documents/bob-0001"}})
				require.NoError(t, err)
				assert.True(t, res.IsError, "bob's document is not alice's")
				res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_resources", Arguments: map[string]any{}})
				require.NoError(t, err)
				assert.False(t, res.IsError)
			})
		}
	}

	f := newInterceptFixture(t)
	clashing := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
	sdk.AddTool(clashing, &sdk.Tool{Name: "list_resources"}, func(context.Context, *sdk.CallToolRequest, echoInput) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{}, nil, nil
	})
	_, err := f.intercept(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return clashing }, nil), true)
	assert.ErrorContains(t, err, `tool named "list_resources"`)
}

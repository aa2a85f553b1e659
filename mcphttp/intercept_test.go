package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// bearerTransport adds a bearer token to every request, as an MCP client
// configured with an access token does.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func withToken(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token: token, next: http.DefaultTransport}}
}

type echoInput struct {
	Text string `json:"text"`
}

// goSDKServer is an existing go-sdk MCP server with one tool.
func goSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "legacy-go-sdk", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its input"},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoInput) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	return s
}

// mcpGoServer is an existing mcp-go MCP server with one tool.
func mcpGoServer() http.Handler {
	s := mcpgoserver.NewMCPServer("legacy-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its input"), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	return mcpgoserver.NewStreamableHTTPServer(s)
}

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
		for _, version := range []string{"", mcphttp.Version20251125, mcphttp.Version20250618} {
			t.Run(name+" "+cmpOrStr(version, "newest"), func(t *testing.T) {
				f := newFixture(t, fixtureOptions{pageSize: 5})
				h, err := mcphttp.Intercept(f.inv, mk(), mcphttp.Options{Authenticator: f.auth})
				require.NoError(t, err)
				srv := httptest.NewServer(h)
				defer srv.Close()

				ctx := context.Background()
				client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: withToken(f.token(t, "alice"))},
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

func cmpOrStr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// TestInterceptForwardsUntouched checks that a forwarded request reaches the
// legacy handler with the same body and headers.
func TestInterceptForwardsUntouched(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var gotBody, gotSession, gotAuth string
	legacyHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotSession, gotAuth = string(b), r.Header.Get("Mcp-Session-Id"), r.Header.Get("Authorization")
		w.WriteHeader(http.StatusAccepted)
	})
	h, err := mcphttp.Intercept(f.inv, legacyHandler, mcphttp.Options{Authenticator: f.auth})
	require.NoError(t, err)
	body := `{"jsonrpc":"2.0",  "id":9,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3]}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Session-Id", "s-123")
	r.Header.Set("Authorization", "Bearer opaque-for-the-legacy-handler")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.Equal(t, body, gotBody, "byte-identical body")
	assert.Equal(t, "s-123", gotSession)
	assert.Equal(t, "Bearer opaque-for-the-legacy-handler", gotAuth, "forwarded headers are untouched")

	// GET streams go to the legacy handler too.
	r = httptest.NewRequest(http.MethodGet, "/mcp", nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusAccepted, w.Code)

	// Owned methods never reach it.
	gotBody = ""
	w = httptest.NewRecorder()
	r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(legacy(1, "resources/read", map[string]any{"uri": "test://static-text"})))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, gotBody)
}

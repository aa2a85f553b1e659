package interop_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacySecret is what the legacy servers' own resource handlers return:
// in a migration they still serve the documents, without the inventory's
// scopes, gates or ownership checks (here: without any check at all).
const legacySecret = "LEGACY-UNCHECKED-CONTENTS"

const aliceDoc = "docs://documents/alice-0001"

// goSDKWithResources is a stateless go-sdk server (JSON responses) that
// still registers a resource handler of its own for alice's document.
func goSDKWithResources(reads *atomic.Int64) http.Handler {
	s := goSDKServer()
	s.AddResource(&sdk.Resource{URI: aliceDoc, Name: "alice's document (legacy)", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			reads.Add(1)
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: legacySecret}}}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// mcpGoWithResources is a stateless mcp-go server with the same resource.
func mcpGoWithResources(reads *atomic.Int64) http.Handler {
	s := mcpgoserver.NewMCPServer("legacy-mcp-go", "1.0.0",
		mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithResourceCapabilities(false, false))
	s.AddResource(mcp.NewResource(aliceDoc, "alice's document (legacy)", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			reads.Add(1)
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: legacySecret}}, nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its input"), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true))
}

func postTo(h http.Handler, body, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, interceptResource, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if strings.HasPrefix(body, "[") {
		r.Header.Set("MCP-Protocol-Version", "2025-03-26") // the one protocol with batches
	} else {
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Bodies that a lenient JSON decoder (last key wins, case-insensitive
// names) reads as resources/read of alice's document, while a first-key
// peek saw another method. Before the strict decode, Intercept forwarded
// each of them to the legacy handler — which served the document to bob,
// or to nobody at all.
var smuggled = []struct {
	name, body string
	sdks       string // which peers read it as resources/read on their own ("both", "go-sdk", "mcp-go"; mcp-go serves no batches)
}{
	{"duplicate method, the last one resources/read",
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/read","params":{"uri":"` + aliceDoc + `"}}`, "both"},
	{"case variant Method after method",
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read","params":{"uri":"` + aliceDoc + `"}}`, "mcp-go"},
	{"escaped duplicate of method",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","\u006d\u0065thod":"resources/read","params":{"uri":"` + aliceDoc + `"}}`, "both"},
	{"duplicate params, the last one naming the document",
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text"},"params":{"uri":"` + aliceDoc + `"}}`, "both"},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","method":"resources/read","params":{"uri":"` + aliceDoc + `"}}`, "both"},
	{"a 2025-03-26 batch mixing a tool call with resources/read",
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"` + aliceDoc + `"}}]`, "go-sdk"},
	{"a batch whose second element has a duplicate method",
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping","method":"resources/read","params":{"uri":"` + aliceDoc + `"}}]`, "go-sdk"},
}

// TestInterceptNeverForwardsSmuggledResourceMethods puts the inventory in
// front of real go-sdk v1.8.0 and mcp-go v1.2.1 servers that still have
// resource handlers of their own (a migration) and sends, as bob and
// anonymously, each body a lenient decoder reads as resources/read of
// alice's document: none reaches a legacy resource handler. A control
// sends the bodies straight to the legacy servers, to show each row is a
// real bypass for the peer it names.
func TestInterceptNeverForwardsSmuggledResourceMethods(t *testing.T) {
	f := newInterceptFixture(t)
	bob := f.token(t, "bob")
	peers := map[string]func(*atomic.Int64) http.Handler{"go-sdk": goSDKWithResources, "mcp-go": mcpGoWithResources}
	for peer, build := range peers {
		for _, tc := range smuggled {
			t.Run(peer+"/"+tc.name, func(t *testing.T) {
				var reads atomic.Int64
				legacy := build(&reads)

				// Control: straight to the legacy server, the body is a read.
				if tc.sdks == "both" || tc.sdks == peer {
					direct := postTo(legacy, tc.body, "")
					require.Positive(t, reads.Load(), "control: %s reads this body as resources/read (%d %s)", peer, direct.Code, direct.Body.String())
					reads.Store(0)
				}

				h, err := f.intercept(legacy, false)
				require.NoError(t, err)
				for _, tok := range []string{bob, ""} {
					w := postTo(h, tc.body, tok)
					body, _ := io.ReadAll(w.Body)
					assert.Zero(t, reads.Load(), "reached the legacy resource handler (token %v): %d %s", tok != "", w.Code, body)
					assert.NotContains(t, string(body), legacySecret)
					assert.NotContains(t, string(body), "Contents of Document alice", "nor alice's document from the inventory")
				}
			})
		}
	}
}

// The same wrapper still forwards what it should: the legacy tools work,
// and the resource methods are the inventory's, with its ownership rule.
func TestInterceptServesResourcesFromTheInventoryOnly(t *testing.T) {
	f := newInterceptFixture(t)
	for peer, build := range map[string]func(*atomic.Int64) http.Handler{"go-sdk": goSDKWithResources, "mcp-go": mcpGoWithResources} {
		t.Run(peer, func(t *testing.T) {
			var reads atomic.Int64
			h, err := f.intercept(build(&reads), false)
			require.NoError(t, err)
			w := postTo(h, jsonRPC(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}), f.token(t, "bob"))
			assert.Contains(t, w.Body.String(), "echo: hi", "the legacy tool")
			w = postTo(h, jsonRPC(2, "resources/read", map[string]any{"uri": aliceDoc}), f.token(t, "alice"))
			assert.Contains(t, w.Body.String(), "Contents of Document alice-0001", "alice reads her document from the inventory")
			w = postTo(h, jsonRPC(3, "resources/read", map[string]any{"uri": aliceDoc}), f.token(t, "bob"))
			assert.Contains(t, w.Body.String(), `"code":-32002`, "bob does not")
			assert.Zero(t, reads.Load(), "the legacy resource handler is never used")
		})
	}
}

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/principal"
)

// A go-sdk tool behind withTokenInfo reads the caller the kit verified in
// req.Extra.TokenInfo, whatever scheme the request's credential used; an
// anonymous request's TokenInfo stays nil; the legacy handler sees the
// request's own Authorization header.
func TestGoSDKToolSeesTheCaller(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	var seenAuth string
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		text := "anonymous"
		if ti := req.Extra.TokenInfo; ti != nil {
			text = ti.UserID + " " + strings.Join(ti.Scopes, ",")
		}
		seenAuth = req.Extra.Header.Get("Authorization")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, struct{}{}, nil
	})
	legacy := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := withTokenInfo(legacy)

	call := func(p *principal.Principal, authz string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		if p != nil {
			ctx, err := principal.NewContext(r.Context(), *p)
			require.NoError(t, err)
			r = r.WithContext(ctx)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		return w.Body.String()
	}
	alice := principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"texts:read"}, Expires: time.Now().Add(time.Hour)}
	assert.Contains(t, call(&alice, "DPoP abc.def.ghi"), `alice texts:read`)
	assert.Equal(t, "DPoP abc.def.ghi", seenAuth, "the legacy handler sees the request's own header")
	svc := principal.Principal{ClientID: "batch", Audience: "https://r.example/mcp"}
	assert.Contains(t, call(&svc, "Bearer x"), `batch `, "a client's token: its client key")
	assert.Contains(t, call(nil, ""), "anonymous")
}

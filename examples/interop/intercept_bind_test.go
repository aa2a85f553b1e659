package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// whoami is what a legacy tool sees of its caller: principal.FromContext's
// subject and scopes ("anonymous" without one).
func whoami(ctx context.Context) string {
	p, ok := principal.FromContext(ctx)
	if !ok {
		return "anonymous"
	}
	return p.Subject + " " + strings.Join(p.Scopes, ",")
}

// whoamiLegacies are real stateful servers with a whoami tool.
var whoamiLegacies = map[string]func() http.Handler{
	"go-sdk stateful": func() http.Handler {
		s := sdk.NewServer(&sdk.Implementation{Name: "legacy-go-sdk", Version: "1.0.0"}, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "whoami"},
			func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: whoami(ctx)}}}, nil, nil
			})
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	},
	"mcp-go": func() http.Handler {
		s := mcpgoserver.NewMCPServer("legacy-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(false))
		s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(whoami(ctx)), nil
		})
		return mcpgoserver.NewStreamableHTTPServer(s)
	},
}

// rawClient sends MCP requests over HTTP.
type rawClient struct {
	t   *testing.T
	url string
}

func (c rawClient) do(method, token, session, body string) *http.Response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	c.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	c.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// text returns the first text content of a tools/call answer (JSON or
// one SSE event).
func (c rawClient) text(resp *http.Response) string {
	c.t.Helper()
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(v)
				break
			}
		}
	} else {
		data, _ = io.ReadAll(resp.Body)
	}
	var msg struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	require.NoError(c.t, json.Unmarshal(data, &msg), string(data))
	require.NotEmpty(c.t, msg.Result.Content, string(data))
	return msg.Result.Content[0].Text
}

// Intercept in front of real stateful servers (go-sdk, mcp-go), with and
// without the sessions part as its Sessions: bob, with his own valid
// token and alice's Mcp-Session-Id, gets 404 for a legacy tool call, the
// GET stream and DELETE; so does a request without credentials; alice's
// session goes on. Before, bob's tool call ran in her session (go-sdk
// even ran it as alice: principal.FromContext said alice), his GET took
// her stream and his DELETE ended her session (204).
//
// What a legacy tool sees of its caller: mcp-go runs it with the
// request's context, so principal.FromContext is that request's caller
// (a step-up token's wider scopes included). go-sdk runs a stateful
// session's tools with the context of the session's initialize request:
// principal.FromContext is the principal who began the session — with
// the binding, always the same principal (same issuer, subject, client,
// audience) as the request's, but with the scopes and expiry of the
// initialize's token.
func TestInterceptBindsRealLegacySessions(t *testing.T) {
	for name, mk := range whoamiLegacies {
		for _, withSessions := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: " with Sessions"}[withSessions], func(t *testing.T) {
				f := newInterceptFixture(t)
				var parts []mcphttp.Part
				opts := intercept.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				if withSessions {
					part, err := sessions.New(notify.New(notify.Options{}), sessions.Options{KeepAlive: time.Hour})
					require.NoError(t, err)
					parts, opts.Sessions = append(parts, part), part
				}
				ep, err := mcphttp.New(f.inv, mcphttp.Options{Authenticator: f.auth}, parts...)
				require.NoError(t, err)
				h, err := intercept.New(ep, mk(), opts)
				require.NoError(t, err)
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				c := rawClient{t: t, url: srv.URL}
				alice, bob := f.token(t, "alice"), f.token(t, "bob")

				resp := c.do(http.MethodPost, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				sid := resp.Header.Get("Mcp-Session-Id")
				require.NotEmpty(t, sid)
				resp = c.do(http.MethodPost, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				require.Equal(t, http.StatusAccepted, resp.StatusCode)
				call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
				assert.Equal(t, "alice docs:read", c.text(c.do(http.MethodPost, alice, sid, call)))

				for who, tok := range map[string]string{"bob": bob, "anonymous": ""} {
					for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
						body := ""
						if method == http.MethodPost {
							body = call
						}
						assert.Equal(t, http.StatusNotFound, c.do(method, tok, sid, body).StatusCode, "%s %s", who, method)
					}
				}
				assert.Equal(t, http.StatusNotFound, c.do(http.MethodPost, alice, "mcp-session-00000000-0000-0000-0000-000000000000", call).StatusCode, "an id nobody began")

				// A step-up token of alice's, in her session.
				wider, err := f.issuer.Sign("alice", []string{"docs:read", "docs:write"}, time.Hour)
				require.NoError(t, err)
				seen := c.text(c.do(http.MethodPost, wider, sid, call))
				if name == "mcp-go" {
					assert.Equal(t, "alice docs:read,docs:write", seen, "mcp-go: the request's caller")
				} else {
					assert.Equal(t, "alice docs:read", seen, "go-sdk: the initialize request's caller")
				}
				resp = c.do(http.MethodDelete, alice, sid, "")
				assert.Less(t, resp.StatusCode, 300, "alice ends her session")
				assert.Equal(t, http.StatusNotFound, c.do(http.MethodPost, alice, sid, call).StatusCode)
			})
		}
	}
}

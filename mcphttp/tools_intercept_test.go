package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// toolServer is a legacy MCP handler with tools, decoding bodies the lax
// way many do (encoding/json: member names case-insensitive).
type toolServer struct {
	tools     []string // its tool names
	sse       bool     // answer with one-event SSE streams
	noTools   bool     // no tools capability: tools/list is -32601
	needToken bool     // 401 without an Authorization header
	calls     atomic.Int64
	lastCall  atomic.Value // the tool name of the last tools/call
}

func (s *toolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if s.needToken && r.Header.Get("Authorization") == "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage
		Method string
		Params struct {
			Name string
		}
	}
	_ = json.Unmarshal(body, &msg)
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch msg.Method {
	case "initialize":
		caps := `{"tools":{"listChanged":true}}`
		if s.noTools {
			caps = `{}`
		}
		result = `{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"legacy","version":"1"}}`
		w.Header().Set("Mcp-Session-Id", "legacy-session")
	case "tools/list":
		if s.noTools {
			s.write(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		var defs []string
		for _, n := range s.tools {
			defs = append(defs, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
		}
		result = `{"tools":[` + strings.Join(defs, ",") + `]}`
	case "tools/call":
		s.calls.Add(1)
		s.lastCall.Store(msg.Params.Name)
		result = `{"content":[{"type":"text","text":"legacy ` + msg.Params.Name + `"}]}`
	default:
		s.write(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
		return
	}
	s.write(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
}

func (s *toolServer) write(w http.ResponseWriter, msg string) {
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\nid: 1\ndata: %s\n\n", msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, msg)
}

// interceptTools wraps legacy in Intercept with the tools fixture's
// inventory and the bridge on.
func interceptTools(t *testing.T, legacy http.Handler, logs io.Writer) (*toolsFixture, http.Handler, error) {
	t.Helper()
	f := newToolsFixture(t, toolsFixtureOptions{})
	if logs == nil {
		logs = io.Discard
	}
	h, err := mcphttp.Intercept(f.inv, legacy, mcphttp.Options{Authenticator: mustChallengeOnly(t),
		Tools: &mcphttp.ToolOptions{}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	return f, h, err
}

func TestInterceptToolsClashAtConstruction(t *testing.T) {
	for _, sse := range []bool{false, true} {
		_, _, err := interceptTools(t, &toolServer{tools: []string{"echo", "search"}, sse: sse}, nil)
		assert.ErrorContains(t, err, `tool named "search"`, "sse=%v", sse)
	}
	// Without the bridge, the legacy handler's search is nobody's concern.
	f := newToolsFixture(t, toolsFixtureOptions{})
	_, err := mcphttp.Intercept(f.inv, &toolServer{tools: []string{"search"}}, mcphttp.Options{Authenticator: mustChallengeOnly(t)})
	assert.NoError(t, err)
}

func TestInterceptToolsRouting(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			legacy := &toolServer{tools: []string{"echo"}, sse: sse}
			f, h, err := interceptTools(t, legacy, nil)
			require.NoError(t, err)
			f.ep = nil
			post := func(body string) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("MCP-Protocol-Version", "2025-11-25")
				r.Header.Set("Mcp-Session-Id", "legacy-session")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r.WithContext(authnContext(r, alicePrincipal)))
				return w
			}
			// initialize announces tools (the legacy handler's own capability stays).
			w := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			assert.Contains(t, w.Body.String(), `"tools":{"listChanged":true}`)
			assert.Contains(t, w.Body.String(), `"resources":`)

			// tools/list: the legacy tools, then the bridge's for alice.
			w = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			names := toolNames(t, w)
			assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, names)
			assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))

			before := legacy.calls.Load()
			w = post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			assert.Contains(t, w.Body.String(), "legacy echo")
			assert.Equal(t, before+1, legacy.calls.Load())

			w = post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"docs://documents/alice-0001"}}}`)
			assert.Contains(t, w.Body.String(), "Contents of Document alice-0001", "a bridge tool is served here")
			// "Name" reads as name to the legacy handler's decoder, not to
			// the strict one: answered here, never forwarded.
			w = post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"Name":"echo"}}`)
			assert.Equal(t, int64(-32602), decode(t, w).Error.Code)
			// An escaped name is the same name to both decoders.
			w = post(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_r\u0065source","arguments":{"uri":"test://about"}}}`)
			assert.Contains(t, w.Body.String(), "public")
			assert.Equal(t, before+1, legacy.calls.Load(), "neither reached the legacy handler")

			// A batch holding tools/list is refused: the merge is for single messages.
			w = post(`[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`)
			assert.Equal(t, 400, w.Code)
		})
	}
}

func authnContext(r *http.Request, p *principal.Principal) context.Context {
	ctx, err := principal.NewContext(r.Context(), *p)
	if err != nil {
		panic(err) // the test's own principals obey the rules
	}
	return ctx
}

func toolNames(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	body := w.Body.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		i := bytes.Index(body, []byte("data: "))
		require.GreaterOrEqual(t, i, 0, string(body))
		body = bytes.TrimSpace(body[i+len("data: "):])
	}
	var r struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &r), string(body))
	var names []string
	for _, tl := range r.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestInterceptToolsLegacyWithoutTools(t *testing.T) {
	_, h, err := interceptTools(t, &toolServer{noTools: true}, nil)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(authnContext(r, alicePrincipal)))
	assert.Equal(t, []string{"list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
}

// TestInterceptToolsClashAtRunTime: a legacy handler that could not be
// probed (it wants a token) and lists a bridge tool's name: logged once,
// the bridge's tool listed and called instead, never two tools of a name.
func TestInterceptToolsClashAtRunTime(t *testing.T) {
	var logs syncBuffer
	legacy := &toolServer{tools: []string{"echo", "read_resource"}, needToken: true}
	_, h, err := interceptTools(t, legacy, &logs)
	require.NoError(t, err, "a handler that cannot be probed is no construction error")
	assert.Contains(t, logs.String(), "could not list the legacy handler's tools")
	for range 2 {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Set("Authorization", "Bearer x")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(authnContext(r, alicePrincipal)))
		assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, toolNames(t, w))
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "the bridge's tool is listed and called instead"), "logged once")
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"test://about"}}}`))
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "Bearer x")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(authnContext(r, alicePrincipal)))
	assert.Contains(t, w.Body.String(), "public")
	assert.Zero(t, legacy.calls.Load())
}

package tools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// A handler's Request is its own: kept after the handler returned, it
// still holds the call's values while other calls are served (the params
// live in pooled request buffers); an anonymous caller is a nil
// Principal.
func TestRequestIsAValueToKeep(t *testing.T) {
	var (
		mu   sync.Mutex
		kept []*tools.Request
	)
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "keep", Access: inventory.Public, InputSchema: `{"type":"object"}`,
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			mu.Lock()
			kept = append(kept, req)
			mu.Unlock()
			_ = req.Principal // nil for an anonymous caller
			return tools.TextResult("ok"), nil
		},
	}}})
	for i, caller := range []string{"alice", "", "bob"} {
		p := alicePrincipal
		switch caller {
		case "":
			p = nil
		case "bob":
			p = bobPrincipal
		}
		w := post(t, f.ep, p, eraLegacy, "tools/call", map[string]any{
			"name": "keep", "arguments": map[string]any{"n": i, "who": caller},
			"_meta": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0" + string(rune('1'+i))},
		})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	}
	require.Len(t, kept, 3)
	for i, want := range []string{"alice", "", "bob"} {
		req := kept[i]
		assert.Equal(t, "keep", req.Name)
		assert.Equal(t, want == "", req.Principal == nil)
		if want != "" {
			assert.Equal(t, want, req.Principal.Subject)
		}
		var args struct {
			N   int    `json:"n"`
			Who string `json:"who"`
		}
		require.NoError(t, req.Bind(&args))
		assert.Equal(t, i, args.N)
		assert.Equal(t, want, args.Who)
		tp, ok := req.MetaString("traceparent")
		assert.True(t, ok)
		assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0"+string(rune('1'+i)), tp)
		assert.Equal(t, string(eraLegacy), req.ProtocolVersion)
		req.NoteURI("x://after-return") // does nothing, and does not panic
	}
	var strict struct{ N int }
	assert.Error(t, kept[0].Bind(&strict), "an unknown member is an error of Bind")

	// Read and noted on other goroutines while further calls are served
	// (the race detector watches): nothing the endpoint reuses is shared.
	var wg sync.WaitGroup
	for _, req := range kept {
		wg.Go(func() {
			_ = req.Room()
			req.NoteURI("x://late")
			req.NoteEntries(3)
			_, _ = req.MetaString("traceparent")
			_ = string(req.Arguments) + req.SessionID + req.ProtocolVersion
		})
	}
	for i := range 3 {
		w := post(t, f.ep, alicePrincipal, eraLegacy, "tools/call", map[string]any{"name": "keep", "arguments": map[string]any{"n": i, "who": "alice"}})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	}
	wg.Wait()
}

// Every content kind, and structured content from a Go value, encode as
// the specification says; a malformed item is the generic tool error.
func TestResultContentKinds(t *testing.T) {
	var (
		mu  sync.Mutex
		res tools.Result
	)
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "kinds", Access: inventory.Public,
		Handler: func(context.Context, *tools.Request) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			return res, nil
		},
	}}})
	set := func(r tools.Result) { mu.Lock(); res = r; mu.Unlock() }
	set(tools.Result{
		Content: []tools.Content{
			tools.Text("hi"),
			tools.Image([]byte{0x89, 'P', 'N', 'G'}, "image/png"),
			tools.Audio([]byte("RIFF"), "audio/wav"),
			tools.Embedded(inventory.Contents{URI: "test://a", MIMEType: "text/plain", Text: "a"}),
			tools.Link(tools.ResourceLink{URI: "test://b", Name: "b", MIMEType: "text/plain", Size: 3}),
		},
		Structured: struct {
			Sum int `json:"sum"`
		}{3},
	})
	w := post(t, f.ep, nil, eraLegacy, "tools/call", map[string]any{"name": "kinds"})
	var got struct {
		Result struct {
			Content           []map[string]any `json:"content"`
			StructuredContent json.RawMessage  `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got), w.Body.String())
	c := got.Result.Content
	require.Len(t, c, 5, w.Body.String())
	assert.Equal(t, map[string]any{"type": "text", "text": "hi"}, c[0])
	assert.Equal(t, map[string]any{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}, c[1])
	assert.Equal(t, map[string]any{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}, c[2])
	assert.Equal(t, "resource", c[3]["type"])
	assert.Equal(t, map[string]any{"type": "resource_link", "uri": "test://b", "name": "b", "mimeType": "text/plain", "size": 3.0}, c[4])
	assert.JSONEq(t, `{"sum":3}`, string(got.Result.StructuredContent))

	for name, bad := range map[string]tools.Result{
		"two kinds":           {Content: []tools.Content{{Image: &tools.Media{MIMEType: "image/png"}, Audio: &tools.Media{MIMEType: "audio/wav"}}}},
		"image without type":  {Content: []tools.Content{{Image: &tools.Media{Data: []byte("x")}}}},
		"link without a name": {Content: []tools.Content{tools.Link(tools.ResourceLink{URI: "test://b"})}},
		"structured array":    {Structured: []int{1}},
		"structured func":     {Structured: func() {}},
	} {
		set(bad)
		r := callTool(t, f.ep, nil, eraLegacy, "kinds", nil)
		assert.True(t, r.IsError, name)
		assert.Equal(t, "The server could not complete this call.", r.Content[0].Text, name)
	}
	assert.Contains(t, f.logs.String(), "more than one of Image")
}

// A panicking tool handler is recovered by the endpoint: an internal
// error to the caller, and the next call is served.
func TestPanickingToolIsRecovered(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "boom", Access: inventory.Public,
		Handler: func(context.Context, *tools.Request) (tools.Result, error) { panic("boom") },
	}}})
	var w = post(t, f.ep, nil, eraLegacy, "tools/call", map[string]any{"name": "boom"})
	require.Equal(t, http.StatusOK, w.Code)
	r := decode(t, w)
	require.NotNil(t, r.Error, w.Body.String())
	assert.Equal(t, int64(jsonrpc.CodeInternalError), r.Error.Code)
	assert.NotContains(t, w.Body.String(), "boom")
	res := callTool(t, f.ep, alicePrincipal, eraLegacy, "read_resource", map[string]any{"uri": "docs://documents/alice-0001"})
	assert.False(t, res.IsError)
}

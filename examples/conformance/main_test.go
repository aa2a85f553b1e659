package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

const watched = "test://watched-resource"

// fixture is a client session of the go-sdk (protocol 2025-11-25: the
// resources/subscribe era the conformance scenarios use) to the fixture.
type fixture struct {
	cs      *sdk.ClientSession
	hub     *notify.Hub
	updated chan string // URIs of notifications/resources/updated
}

func connect(t *testing.T, mode string) *fixture {
	t.Helper()
	h, hub, err := newHandler(mode, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		if hub != nil {
			hub.Close()
		}
		srv.Close()
	})
	f := &fixture{hub: hub, updated: make(chan string, 16)}
	client := sdk.NewClient(&sdk.Implementation{Name: "conformance-fixture-test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { f.updated <- req.Params.URI },
	})
	f.cs, err = client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.cs.Close() })
	return f
}

// next waits for the next update (a hang guard, not a timing assertion).
func next(t *testing.T, updated <-chan string) string {
	t.Helper()
	select {
	case uri := <-updated:
		return uri
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated arrived")
		return ""
	}
}

// Both modes: resources/subscribe, an update delivered on the session's GET
// stream (in intercept mode the go-sdk server's, the kit's notification
// merged in), resources/unsubscribe.
func TestSubscriptions(t *testing.T) {
	for _, mode := range []string{"endpoint", "intercept"} {
		t.Run(mode, func(t *testing.T) { subscriptions(t, mode) })
	}
}

func subscriptions(t *testing.T, mode string) {
	ctx := context.Background()
	f := connect(t, mode)
	cs := f.cs
	caps := cs.InitializeResult().Capabilities.Resources
	require.NotNil(t, caps)
	assert.True(t, caps.Subscribe)
	assert.True(t, caps.ListChanged)

	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: watched}))
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://static-text"}))
	deadline := time.Now().Add(10 * time.Second)
	for f.hub.Subscribers(fixturePrincipal.Subject) == 0 { // the client's GET stream is open
		require.True(t, time.Now().Before(deadline), "the client never opened its GET stream")
		time.Sleep(5 * time.Millisecond)
	}
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, watched)
	assert.Equal(t, watched, next(t, f.updated))

	require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: watched}))
	// One stream delivers in order: when the second update arrives, the
	// first would have arrived before it.
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, watched)
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, "test://static-text")
	assert.Equal(t, "test://static-text", next(t, f.updated), "the unsubscribed URI's update was delivered")

	// An unknown resource cannot be subscribed to.
	assert.Error(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://no-such-resource"}))
}

// The prompt of the prompts-get-with-args scenario substitutes both of its
// arguments (both required, as the scenario's specification says).
func TestInterceptModePromptWithArguments(t *testing.T) {
	cs := connect(t, "intercept").cs
	ctx := context.Background()
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "testValue1", "arg2": "testValue2"}})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	text, ok := res.Messages[0].Content.(*sdk.TextContent)
	require.True(t, ok, "a text message")
	assert.Equal(t, "Prompt with arguments: arg1='testValue1', arg2='testValue2'", text.Text)

	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	var found bool
	for _, p := range prompts.Prompts {
		if p.Name != "test_prompt_with_arguments" {
			continue
		}
		found = true
		for _, a := range p.Arguments {
			assert.True(t, a.Required, "argument %s is required", a.Name)
		}
	}
	assert.True(t, found, "test_prompt_with_arguments is listed")
}

// In endpoint mode the fixture lists the tools bridge's tools (the
// http-header-validation scenario calls one with an Mcp-Name header).
func TestEndpointModeTools(t *testing.T) {
	cs := connect(t, "endpoint").cs
	require.NotNil(t, cs.InitializeResult().Capabilities.Tools)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "read_resource")
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_resource", Arguments: map[string]any{"uri": "test://static-text"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

// In both modes the suite's test tools are the kit's own (tools.Tool
// values with typed results), and a go-sdk client reads each result as
// the scenario wants it.
func TestSuiteToolsInBothModes(t *testing.T) {
	for _, mode := range []string{"endpoint", "intercept"} {
		t.Run(mode, func(t *testing.T) {
			cs := connect(t, mode).cs
			ctx := context.Background()
			call := func(name string) *sdk.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
				require.NoError(t, err, name)
				return res
			}
			text := call("test_simple_text")
			require.Len(t, text.Content, 1)
			assert.Equal(t, "This is a simple text response for testing.", text.Content[0].(*sdk.TextContent).Text)

			img := call("test_image_content").Content[0].(*sdk.ImageContent)
			assert.Equal(t, "image/png", img.MIMEType)
			assert.Equal(t, pngPixel, img.Data)
			audio := call("test_audio_content").Content[0].(*sdk.AudioContent)
			assert.Equal(t, "audio/wav", audio.MIMEType)
			assert.Equal(t, wavSilence, audio.Data)

			emb := call("test_embedded_resource").Content[0].(*sdk.EmbeddedResource)
			assert.Equal(t, "test://embedded-resource", emb.Resource.URI)
			assert.Equal(t, "This is an embedded resource content.", emb.Resource.Text)

			mixed := call("test_multiple_content_types").Content
			require.Len(t, mixed, 3)
			assert.IsType(t, &sdk.TextContent{}, mixed[0])
			assert.IsType(t, &sdk.ImageContent{}, mixed[1])
			assert.IsType(t, &sdk.EmbeddedResource{}, mixed[2])

			failed := call("test_error_handling")
			assert.True(t, failed.IsError)
			assert.Equal(t, "This tool intentionally returns an error for testing", failed.Content[0].(*sdk.TextContent).Text)

			list, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			var schema map[string]any
			for _, tool := range list.Tools {
				if tool.Name == "json_schema_2020_12_tool" {
					b, err := json.Marshal(tool.InputSchema)
					require.NoError(t, err)
					require.NoError(t, json.Unmarshal(b, &schema))
				}
			}
			require.NotNil(t, schema, "json_schema_2020_12_tool is listed")
			assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
			assert.Contains(t, schema, "$defs")
			assert.Equal(t, false, schema["additionalProperties"])
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "json_schema_2020_12_tool", Arguments: map[string]any{"name": "Ada"}})
			require.NoError(t, err)
			assert.Equal(t, "Hello, Ada.", res.Content[0].(*sdk.TextContent).Text)
		})
	}
}

// -mode sdk serves the go-sdk server of intercept mode alone: the suite's
// prompts and client-facing tools, and none of the kit's.
func TestSDKModeIsTheWrappedServerAlone(t *testing.T) {
	cs := connect(t, "sdk").cs
	ctx := context.Background()
	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, prompts.Prompts, 4)
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "test_tool_with_logging")
	assert.NotContains(t, names, "test_simple_text", "the kit's tools are not there")
	assert.Nil(t, cs.InitializeResult().Capabilities.Resources, "nor its resources")
}

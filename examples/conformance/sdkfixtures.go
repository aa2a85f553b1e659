package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The suite's fixtures that the kit does not serve — prompts, logging and
// the test tools that send requests or notifications to the client
// (logging, progress, sampling, elicitation) — on the go-sdk server of
// intercept mode, after the model of the go-sdk's own conformance server
// (its conformance/everything-server). Served alone (-mode sdk) they are
// the baseline of the comparison in .ci/conformance.sh: whatever passes
// against that server alone must pass through the kit.

// addSuitePrompts adds the prompts of the prompts-get scenarios (the one
// with arguments is promptServer's).
func addSuitePrompts(s *sdk.Server) {
	user := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&sdk.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource",
		Arguments: []*sdk.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				user(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&sdk.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				user(&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"}),
				user(&sdk.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}

// objectSchema is an inputSchema of string properties, the required ones
// named.
func objectSchema(required []string, props ...string) map[string]any {
	p := map[string]any{}
	for _, name := range props {
		p[name] = map[string]any{"type": "string"}
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// textResult is a result of one text item.
func textResult(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// addSuiteTools adds the test tools that talk back to the client during
// the call.
func addSuiteTools(s *sdk.Server) {
	s.AddTool(&sdk.Tool{Name: "test_tool_with_logging", Description: "Sends three log messages", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				//lint:ignore SA1019 the conformance suite's logging scenario needs the deprecated logging feature
				_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: msg})
				time.Sleep(20 * time.Millisecond)
			}
			return textResult("Tool with logging executed successfully"), nil
		})
	s.AddTool(&sdk.Tool{Name: "test_tool_with_progress", Description: "Reports progress three times", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for _, done := range []float64{0, 50, 100} {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: done, Total: 100,
					Message: fmt.Sprintf("%.0f%% done", done)})
				time.Sleep(20 * time.Millisecond)
			}
			return textResult("%v", token), nil
		})
	s.AddTool(&sdk.Tool{Name: "test_sampling", Description: "Asks the client's model", InputSchema: objectSchema([]string{"prompt"}, "prompt")},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Prompt string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			//lint:ignore SA1019 the conformance suite's sampling scenario needs the deprecated sampling types
			msgs := []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Prompt}}}
			//lint:ignore SA1019 the conformance suite's sampling scenario needs the deprecated sampling feature
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 100, Messages: msgs})
			if err != nil {
				return nil, err
			}
			text := "(not text)"
			if t, ok := res.Content.(*sdk.TextContent); ok {
				text = t.Text
			}
			return textResult("LLM response: %s", text), nil
		})
	elicit := func(message func(*sdk.CallToolRequest) string, schema map[string]any) sdk.ToolHandler {
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: message(req), RequestedSchema: schema})
			if err != nil {
				return nil, err
			}
			return textResult("Elicitation result: action=%s, content=%v", res.Action, res.Content), nil
		}
	}
	fixed := func(text string) func(*sdk.CallToolRequest) string {
		return func(*sdk.CallToolRequest) string { return text }
	}
	s.AddTool(&sdk.Tool{Name: "test_elicitation", Description: "Asks the user for a username", InputSchema: objectSchema([]string{"message"}, "message")},
		elicit(func(req *sdk.CallToolRequest) string {
			var in struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return in.Message
		}, map[string]any{"type": "object", "required": []string{"username"},
			"properties": map[string]any{"username": map[string]any{"type": "string", "description": "Your preferred username"}}}))
	prop := func(typ, desc string, def any) map[string]any {
		return map[string]any{"type": typ, "description": desc, "default": def}
	}
	status := prop("string", "User status", "active")
	status["enum"] = []string{"active", "inactive", "pending"}
	s.AddTool(&sdk.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits primitives with defaults", InputSchema: objectSchema(nil)},
		elicit(fixed("Test defaults for primitives"), map[string]any{"type": "object", "properties": map[string]any{
			"name": prop("string", "User name", "John Doe"), "age": prop("integer", "User age", 30),
			"score": prop("number", "User score", 95.5), "status": status, "verified": prop("boolean", "Verification status", true),
		}}))
	options := []map[string]any{{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}}
	s.AddTool(&sdk.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits every enum form", InputSchema: objectSchema(nil)},
		elicit(fixed("Test enum schemas"), map[string]any{"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": options},
			"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": options}},
		}}))
}

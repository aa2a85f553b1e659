package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the "existing" server: a go-sdk MCP server as it was before
// mcpkit, unchanged by the wrapping.

type wordCountIn struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

type wordCountOut struct {
	Words int `json:"words"`
}

// newToolServer returns the go-sdk server with its word_count tool.
func newToolServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy-word-count", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "word_count", Description: "Counts the words of a text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in wordCountIn) (*mcp.CallToolResult, wordCountOut, error) {
			n := len(strings.Fields(in.Text))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d words", n)}}},
				wordCountOut{Words: n}, nil
		})
	return s
}

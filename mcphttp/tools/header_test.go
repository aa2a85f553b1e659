package tools_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// An argument bound to a header (x-mcp-header, SEP-2243) must be repeated
// in its Mcp-Param header in 2026-07-28: as it is or as padded Base64 in
// =?base64?…?=; anything else is refused with 400 and -32020 before the
// handler runs. Legacy calls carry no such header.
func TestParamHeaders(t *testing.T) {
	calls := 0
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "route", Access: inventory.Public,
		InputSchema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
			`"level":{"type":"integer","x-mcp-header":"Level"},"note":{"type":"string"}}}`,
		Handler: func(context.Context, *tools.Request) (tools.Result, error) {
			calls++
			return tools.TextResult("ok"), nil
		},
	}}})
	call := func(args map[string]any, hdr map[string]string) (int, int64) {
		t.Helper()
		body, h := mcptest.Modern(1, "tools/call", map[string]any{"name": "route", "arguments": args})
		h["Mcp-Name"] = "route"
		for k, v := range hdr {
			h[k] = v
		}
		w := f.raw(t, nil, body, h)
		if w.Code != http.StatusOK {
			r := decode(t, w)
			require.NotNil(t, r.Error, w.Body.String())
			return w.Code, r.Error.Code
		}
		r := decode(t, w)
		require.Nil(t, r.Error, w.Body.String())
		return w.Code, 0
	}
	ok := []struct {
		name string
		args map[string]any
		hdr  map[string]string
	}{
		{"literal", map[string]any{"region": "eu-west"}, map[string]string{"Mcp-Param-Region": "eu-west"}},
		{"base64", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8=?="}},
		{"non-ASCII as base64", map[string]any{"region": "Zürich"}, map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?="}},
		{"no suffix: literal", map[string]any{"region": "=?base64?SGVsbG8="}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}},
		{"a number", map[string]any{"region": "x", "level": 3}, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Level": "3"}},
		{"unbound argument absent", map[string]any{"note": "n"}, nil},
	}
	for _, c := range ok {
		status, code := call(c.args, c.hdr)
		assert.Equal(t, http.StatusOK, status, c.name)
		assert.Zero(t, code, c.name)
	}
	assert.Equal(t, len(ok), calls)
	bad := []struct {
		name string
		args map[string]any
		hdr  map[string]string
	}{
		{"missing", map[string]any{"region": "eu"}, nil},
		{"mismatch", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "us"}},
		{"unpadded base64", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}},
		{"non-alphabet base64", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}},
		{"header without argument", map[string]any{}, map[string]string{"Mcp-Param-Region": "eu"}},
		{"number mismatch", map[string]any{"region": "x", "level": 3}, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Level": "4"}},
	}
	for _, c := range bad {
		status, code := call(c.args, c.hdr)
		assert.Equal(t, http.StatusBadRequest, status, c.name)
		assert.Equal(t, int64(jsonrpc.CodeHeaderMismatch), code, c.name)
	}
	assert.Equal(t, len(ok), calls, "no refused call reached the handler")

	// Legacy calls are not checked: the era has no such headers.
	res := callTool(t, f.ep, nil, eraLegacy, "route", map[string]any{"region": "eu"})
	assert.False(t, res.IsError)

	_, err := tools.New(tools.Tool{Name: "x", Handler: func(context.Context, *tools.Request) (tools.Result, error) { return tools.Result{}, nil },
		InputSchema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`})
	assert.ErrorContains(t, err, "x-mcp-header")
}

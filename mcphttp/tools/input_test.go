package tools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// TestToolsBadInput: every malformed call gets a fixed answer — a protocol
// error for a malformed request or an unknown tool, a tool error naming
// the argument for bad arguments — and never a panic. Attack rows say what
// they try.
func TestToolsBadInput(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	const protocol = "protocol error"
	for _, tc := range []struct {
		name   string
		params string // the raw params of tools/call
		want   string // a tool error's text, or protocol
	}{
		{"unknown tool", `{"name":"delete_everything","arguments":{}}`, protocol},
		// Tool names are case-sensitive: no folding onto a real tool.
		{"tool name in another case", `{"name":"List_Resources"}`, protocol},
		{"no name", `{"arguments":{"uri":"test://about"}}`, protocol},
		// encoding/json would read "Name" as name; the exact decoder does not.
		{"name member in another case", `{"Name":"read_resource","arguments":{"uri":"test://about"}}`, protocol},
		{"name not a string", `{"name":7}`, protocol},
		{"name null", `{"name":null}`, protocol},
		{"empty name", `{"name":""}`, protocol},
		{"arguments an array", `{"name":"read_resource","arguments":["test://about"]}`, protocol},
		{"arguments a string", `{"name":"read_resource","arguments":"test://about"}`, protocol},

		{"missing argument", `{"name":"read_resource"}`, `Invalid arguments: missing argument "uri"`},
		{"arguments null", `{"name":"read_resource","arguments":null}`, `Invalid arguments: missing argument "uri"`},
		{"wrong type", `{"name":"read_resource","arguments":{"uri":5}}`, `Invalid arguments: argument "uri" must be a string`},
		{"null value", `{"name":"read_resource","arguments":{"uri":null}}`, `Invalid arguments: argument "uri" must be a string`},
		{"object value", `{"name":"read_resource","arguments":{"uri":{"a":{"b":[1,2,{"c":"test://about"}]}}}}`, `Invalid arguments: argument "uri" must be a string`},
		{"empty value", `{"name":"read_resource","arguments":{"uri":""}}`, `Invalid arguments: argument "uri" must not be empty`},
		// An extra property is refused, not ignored: a client never
		// believes a filter it sent was applied.
		{"extra property", `{"name":"read_resource","arguments":{"uri":"test://about","owner":"bob"}}`,
			`Invalid arguments: unknown argument "owner" (this tool takes "uri")`},
		// "URI" is not "uri": no case-insensitive match onto the real argument.
		{"argument in another case", `{"name":"read_resource","arguments":{"URI":"test://about"}}`,
			`Invalid arguments: unknown argument "URI" (this tool takes "uri")`},
		{"escaped argument name", `{"name":"read_resource","arguments":{"ur\u0069":"test://about"}}`, ""},
		{"long argument name is clipped", `{"name":"read_resource","arguments":{"` + strings.Repeat("x", 300) + `":"a"}}`,
			`Invalid arguments: unknown argument "` + strings.Repeat("x", 64) + `…" (this tool takes "uri")`},
		{"oversized uri", `{"name":"read_resource","arguments":{"uri":"test://` + strings.Repeat("a", 2048) + `"}}`,
			`Invalid arguments: argument "uri" is too long (at most 2048 characters)`},
		// 1025 emoji: 1025 runes, but 2050 UTF-16 code units.
		{"oversized in code units", `{"name":"read_resource","arguments":{"uri":"` + strings.Repeat("😀", 1025) + `"}}`,
			`Invalid arguments: argument "uri" is too long (at most 2048 characters)`},
		{"no arguments for list", `{"name":"list_resources"}`, ""},
		{"garbage cursor", `{"name":"list_resources","arguments":{"cursor":"AAAA"}}`,
			"Invalid cursor (invalid): call list_resources again without a cursor."},
		// The endpoint never issues an empty cursor: "" is not "start over".
		{"empty cursor", `{"name":"list_resources","arguments":{"cursor":""}}`,
			"Invalid cursor (invalid): call list_resources again without a cursor."},
		{"oversized cursor", `{"name":"list_resources","arguments":{"cursor":"` + strings.Repeat("A", 5000) + `"}}`,
			`Invalid arguments: argument "cursor" is too long (at most 4096 characters)`},
		{"empty query", `{"name":"search","arguments":{"query":""}}`, `Invalid arguments: argument "query" must not be empty`},
		{"oversized query", `{"name":"search","arguments":{"query":"` + strings.Repeat("q", 1025) + `"}}`,
			`Invalid arguments: argument "query" is too long (at most 1024 characters)`},
		{"control character in query", `{"name":"search","arguments":{"query":"a\u0000b"}}`,
			"Invalid arguments: the query must be 1..1024 characters without control characters."},
		{"fetch without id", `{"name":"fetch","arguments":{"uri":"docs://documents/alice-0001"}}`,
			`Invalid arguments: unknown argument "uri" (this tool takes "id")`},
		// The template's Validate rule runs: no path tricks through a variable.
		{"invalid variable", `{"name":"read_document","arguments":{"id":"../bob-0001"}}`,
			`Invalid arguments: invalid value for variable "id".`},
		{"variable missing", `{"name":"read_report","arguments":{"year":"2026"}}`, `Invalid arguments: missing argument "id"`},
		// A slash in a {var} value is percent-encoded by Expand: it stays
		// the value of its own variable (what resources/read of
		// docs://reports/2026%2Fx/1 gives), never another URI shape.
		{"slash in a variable", `{"name":"read_report","arguments":{"year":"2026/x","id":"1"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + tc.params + `}`
			caller := *alicePrincipal
			caller.Scopes = []string{"docs:read", "reports:read"}
			w := f.raw(t, &caller, body, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			require.Equal(t, 200, w.Code, w.Body.String())
			r := decode(t, w)
			if tc.want == protocol {
				require.NotNil(t, r.Error, w.Body.String())
				assert.Equal(t, int64(-32602), r.Error.Code)
				assert.NotContains(t, r.Error.Message, "delete_everything", "the name is not echoed")
				return
			}
			require.Nil(t, r.Error, w.Body.String())
			var res toolResult
			require.NoError(t, json.Unmarshal(r.Result, &res))
			if tc.want == "" {
				assert.False(t, res.IsError, w.Body.String())
				return
			}
			assert.True(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, tc.want, res.Content[0].Text)
		})
	}
}

// TestToolsCallbackFailure: a failing callback is a generic tool error;
// its details reach the operator log only.
func TestToolsCallbackFailure(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.searchErr = errors.New("pq: connection to 10.0.0.7 refused (password=hunter2)")
	for _, e := range bothEras {
		w := f.post(t, alicePrincipal, e, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "x"}})
		require.Equal(t, 200, w.Code)
		assert.NotContains(t, w.Body.String(), "hunter2")
		assert.NotContains(t, w.Body.String(), "10.0.0.7")
		var res toolResult
		require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
		assert.True(t, res.IsError)
		assert.Equal(t, "The server could not complete this call.", res.Content[0].Text)
	}
	assert.Contains(t, f.logs.String(), "hunter2", "the operator sees the cause")
	assert.Contains(t, f.logs.String(), `"rule":"callback-error"`)
}

// TestToolsModernHeaders: in 2026-07-28, Mcp-Name must repeat params.name.
func TestToolsModernHeaders(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct {
		name   string
		header string
		status int
	}{
		{"matching", "read_resource", 200},
		{"missing", "", 400},
		// A router or WAF that trusts the header would see another tool.
		{"another tool", "list_resources", 400},
		{"base64 form", "=?base64?cmVhZF9yZXNvdXJjZQ==?=", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, hdr := mcptest.Modern(1, "tools/call", map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "test://about"}})
			delete(hdr, "Mcp-Name") // mcptest.Modern sets it
			if tc.header != "" {
				hdr["Mcp-Name"] = tc.header
			}
			w := f.raw(t, alicePrincipal, body, hdr)
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.status == 400 {
				assert.Equal(t, int64(-32020), decode(t, w).Error.Code)
			}
		})
	}
}

// FuzzToolsCall: no params of tools/call panics or answers outside the
// two shapes.
func FuzzToolsCall(f *testing.F) {
	for _, s := range []string{
		`{"name":"read_resource","arguments":{"uri":"test://about"}}`,
		`{"name":"list_resources","arguments":{"cursor":"AQ"}}`,
		`{"name":"search","arguments":{"query":"Document"}}`,
		`{"name":"fetch","arguments":{"id":"docs://documents/alice-0001"}}`,
		`{"name":"read_report","arguments":{"year":"2026","id":"%2F"}}`,
		`{"Name":"x"}`, `{"name":"read_resource","arguments":[]}`, `{}`,
	} {
		f.Add(s)
	}
	tf := newFixture(f, fixtureOptions{})
	f.Fuzz(func(t *testing.T, params string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
		w := tf.raw(t, alicePrincipal, body, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		if w.Code != 200 {
			return // a body the strict decoder refuses, or a challenge
		}
		var r struct {
			Result *toolResult      `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r), w.Body.String())
		require.True(t, (r.Result == nil) != (r.Error == nil), w.Body.String())
	})
}

package mcphttp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Client notifications in the 2026-07-28 protocol are accepted without
// _meta and without the Mcp-Method header: the schema puts those on
// requests. (The go-sdk v1.8.0 client closes its session for good when
// notifications/cancelled gets 400.)
func TestModernClientNotificationsAreAccepted(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for name, rq := range map[string]request{
		"cancelled without _meta or Mcp-Method": {
			body:    `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`,
			headers: map[string]string{"MCP-Protocol-Version": "2026-07-28"},
		},
		"cancelled with _meta, no Mcp-Method": {
			body:    `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			headers: map[string]string{"MCP-Protocol-Version": "2026-07-28"},
		},
		"no params at all": {
			body:    `{"jsonrpc":"2.0","method":"notifications/progress"}`,
			headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/progress"},
		},
	} {
		w := f.do(t, rq)
		assert.Equal(t, 202, w.Code, name)
		assert.Empty(t, w.Body.String(), name)
	}
	// Requests still need _meta and the headers.
	w := f.do(t, request{body: `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`,
		headers: map[string]string{"MCP-Protocol-Version": "2026-07-28"}})
	assert.Equal(t, 400, w.Code)
}

// JSON-RPC §6: notifications in a batch get no response; a batch of only
// notifications (and client responses) gets 202 without a body — also
// when they would be refused as requests.
func TestBatchNotificationsAreNotAnswered(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for name, body := range map[string]string{
		"initialized":             `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
		"modern _meta":            `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}]`,
		"unknown method":          `[{"jsonrpc":"2.0","method":"no/such/thing"}]`,
		"a resource method":       `[{"jsonrpc":"2.0","method":"resources/list"}]`,
		"and a client response":   `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":5,"result":{}}]`,
		"with an unknown session": `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	} {
		w := f.do(t, request{body: body, headers: map[string]string{"Mcp-Session-Id": "none"}})
		assert.Equal(t, 202, w.Code, name)
		assert.Empty(t, w.Body.String(), name)
	}
	w := f.do(t, request{body: `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"nope"}]`})
	require.Equal(t, 200, w.Code)
	var out []rpc
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out, 1, "only the request is answered")
	assert.JSONEq(t, `1`, string(out[0].ID))
}

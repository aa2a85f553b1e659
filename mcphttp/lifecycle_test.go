package mcphttp_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLegacyInitialize(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	cases := []struct{ requested, want string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2024-11-05"},
		{"1999-01-01", "2025-11-25"}, // not spoken: the newest legacy version
		{"2026-07-28", "2025-11-25"}, // the modern protocol has no initialize
		{"", "2025-11-25"},
	}
	for _, tc := range cases {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{
			"protocolVersion": tc.requested, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "t", "version": "1"}})})
		require.Equal(t, 200, w.Code, w.Body.String())
		assert.Empty(t, w.Header().Get("Mcp-Session-Id"), "the endpoint is stateless: no session id")
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Resources *struct {
					Subscribe   *bool `json:"subscribe"`
					ListChanged *bool `json:"listChanged"`
				} `json:"resources"`
				Completions *struct{} `json:"completions"`
				Tools       any       `json:"tools"`
			} `json:"capabilities"`
			ServerInfo   map[string]string `json:"serverInfo"`
			Instructions string            `json:"instructions"`
		}
		require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
		assert.Equal(t, tc.want, res.ProtocolVersion, "requested %q", tc.requested)
		require.NotNil(t, res.Capabilities.Resources)
		assert.False(t, *res.Capabilities.Resources.Subscribe)
		assert.False(t, *res.Capabilities.Resources.ListChanged)
		assert.NotNil(t, res.Capabilities.Completions, "a template completes")
		assert.Nil(t, res.Capabilities.Tools)
		assert.Equal(t, map[string]string{"name": "fixture", "version": "1.0.0"}, res.ServerInfo)
		assert.Equal(t, "Private documents.", res.Instructions)
	}
}

func TestLegacyPingAndInitialized(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	w := f.Do(t, mcptest.Request{Body: `{"jsonrpc":"2.0","id":"123","method":"ping"}`})
	require.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"123","result":{}}`, w.Body.String())

	w = f.Do(t, mcptest.Request{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	assert.Equal(t, 202, w.Code)
	assert.Empty(t, w.Body.Bytes())
}

// TestIDsEchoedExactly: large integers and unusual strings come back byte
// for byte.
func TestIDsEchoedExactly(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	for _, id := range []string{`123456789012345678901234567890`, `-7`, `"\u00e9\n"`, `""`, `"a\"b"`} {
		w := f.Do(t, mcptest.Request{Body: `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`})
		require.Equal(t, 200, w.Code)
		assert.Equal(t, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, w.Body.String())
	}
}

func TestLegacyBatch(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	body := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text"}},{"jsonrpc":"2.0","id":3}]`
	// Without MCP-Protocol-Version the request is 2025-03-26: batches allowed.
	w := f.Do(t, mcptest.Request{Body: body})
	require.Equal(t, 200, w.Code, w.Body.String())
	var out []mcptest.RPC
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out, 3, "one response per request, an error for the invalid element")
	assert.JSONEq(t, `1`, string(out[0].ID))
	assert.JSONEq(t, `2`, string(out[1].ID))
	assert.Contains(t, string(out[1].Result), "static text resource")
	require.NotNil(t, out[2].Error)
	assert.Equal(t, int64(-32600), out[2].Error.Code)

	w = f.Do(t, mcptest.Request{Body: body, Headers: map[string]string{"MCP-Protocol-Version": "2025-03-26"}})
	assert.Equal(t, 200, w.Code)

	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		w = f.Do(t, mcptest.Request{Body: body, Headers: map[string]string{"MCP-Protocol-Version": v}})
		assert.Equal(t, 400, w.Code, v)
		assert.Equal(t, int64(-32600), mcptest.Decode(t, w).Error.Code)
	}

	w = f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`})
	assert.Equal(t, 202, w.Code, "a batch of notifications only")
	w = f.Do(t, mcptest.Request{Body: `[]`})
	assert.Equal(t, 400, w.Code, "an empty batch")
	w = f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]`})
	require.Equal(t, 200, w.Code)
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	assert.Equal(t, int64(-32600), out[0].Error.Code, "initialize must not be batched")
	// A batch element needing authentication challenges the whole batch.
	w = f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","id":1,"method":"resources/list"}]`})
	assert.Equal(t, 401, w.Code)
}

func TestLegacyResourceErrors(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": "test://nothing"}), Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	require.Equal(t, 200, w.Code)
	r := mcptest.Decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32002), r.Error.Code)
	assert.JSONEq(t, `{"uri":"test://nothing"}`, string(r.Error.Data))

	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{})})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code, "missing uri")
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": 5})})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code, "uri of the wrong type")
}

func TestModernDiscover(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	body, hdr := mcptest.Modern(1, "server/discover", nil)
	hdr["Mcp-Session-Id"] = "ignored"
	hdr["Last-Event-ID"] = "ignored"
	w := f.Do(t, mcptest.Request{Body: body, Headers: hdr})
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Empty(t, w.Header().Get("Mcp-Session-Id"))
	var res struct {
		ResultType        string                       `json:"resultType"`
		SupportedVersions []string                     `json:"supportedVersions"`
		Capabilities      json.RawMessage              `json:"capabilities"`
		Instructions      string                       `json:"instructions"`
		TTLMs             *int                         `json:"ttlMs"`
		CacheScope        string                       `json:"cacheScope"`
		Meta              map[string]map[string]string `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	assert.Equal(t, "complete", res.ResultType)
	assert.Equal(t, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, res.SupportedVersions)
	assert.JSONEq(t, `{"resources":{"subscribe":false,"listChanged":false},"completions":{}}`, string(res.Capabilities))
	require.NotNil(t, res.TTLMs)
	assert.Equal(t, "public", res.CacheScope, "discovery is the same for every caller")
	assert.Equal(t, "fixture", res.Meta["io.modelcontextprotocol/serverInfo"]["name"])
}

func TestModernHeaders(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	read, readHdr := mcptest.Modern(1, "resources/read", map[string]any{"uri": "test://static-text"})
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
		code   int64
	}{
		{"all headers match", readHdr, 200, 0},
		{"protocol version header missing", merge(readHdr, map[string]string{"MCP-Protocol-Version": ""}), 400, -32020},
		{"protocol version header differs", merge(readHdr, map[string]string{"MCP-Protocol-Version": "2025-11-25"}), 400, -32020},
		{"method header missing", merge(readHdr, map[string]string{"Mcp-Method": ""}), 400, -32020},
		{"method header differs", merge(readHdr, map[string]string{"Mcp-Method": "resources/list"}), 400, -32020},
		{"method header case", merge(readHdr, map[string]string{"Mcp-Method": "Resources/Read"}), 400, -32020},
		{"name header missing", merge(readHdr, map[string]string{"Mcp-Name": ""}), 400, -32020},
		{"name header differs", merge(readHdr, map[string]string{"Mcp-Name": "test://static-binary"}), 400, -32020},
		{"name header base64", merge(readHdr, map[string]string{"Mcp-Name": "=?base64?" + base64.StdEncoding.EncodeToString([]byte("test://static-text")) + "?="}), 200, 0},
		{"name header bad base64", merge(readHdr, map[string]string{"Mcp-Name": "=?base64?***?="}), 400, -32020},
		// Go's strict Base64 skips line breaks; the header form holds none.
		{"name header base64 with a line break", merge(readHdr, map[string]string{"Mcp-Name": "=?base64?" + func() string {
			e := base64.StdEncoding.EncodeToString([]byte("test://static-text"))
			return e[:8] + "\r\n" + e[8:]
		}() + "?="}), 400, -32020},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := f.Do(t, mcptest.Request{Body: read, Headers: tc.hdr})
			require.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.code != 0 {
				assert.Equal(t, tc.code, mcptest.Decode(t, w).Error.Code)
			}
		})
	}
}

func TestModernVersionsAndMeta(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`
	w := f.Do(t, mcptest.Request{Body: body, Headers: map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"}})
	require.Equal(t, 400, w.Code)
	r := mcptest.Decode(t, w)
	assert.Equal(t, int64(-32022), r.Error.Code)
	assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2099-01-01"}`, string(r.Error.Data))

	// A modern header without _meta is a malformed modern request.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", map[string]any{}), Headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/list"}})
	assert.Equal(t, 400, w.Code)
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code)

	// Modern requests have no ping and no initialize.
	for _, m := range []string{"ping", "initialize"} {
		b, h := mcptest.Modern(1, m, nil)
		w = f.Do(t, mcptest.Request{Body: b, Headers: h})
		assert.Equal(t, 404, w.Code, m)
		assert.Equal(t, int64(-32601), mcptest.Decode(t, w).Error.Code, m)
	}
}

func TestModernResults(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	alice := f.Token(t, "alice")
	type cacheable struct {
		ResultType string                       `json:"resultType"`
		TTLMs      *int                         `json:"ttlMs"`
		CacheScope string                       `json:"cacheScope"`
		Meta       map[string]map[string]string `json:"_meta"`
	}
	for _, method := range []string{"resources/list", "resources/templates/list"} {
		b, h := mcptest.Modern(1, method, nil)
		w := f.Do(t, mcptest.Request{Body: b, Headers: h, Token: alice})
		require.Equal(t, 200, w.Code, w.Body.String())
		var res cacheable
		require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
		assert.Equal(t, "complete", res.ResultType, method)
		require.NotNil(t, res.TTLMs, method)
		assert.Equal(t, 0, *res.TTLMs, method)
		assert.Equal(t, "private", res.CacheScope, method)
		assert.Equal(t, "fixture", res.Meta["io.modelcontextprotocol/serverInfo"]["name"], method)
	}
	b, h := mcptest.Modern(1, "resources/read", map[string]any{"uri": "test://template/123/data"})
	w := f.Do(t, mcptest.Request{Body: b, Headers: h})
	require.Equal(t, 200, w.Code, w.Body.String())
	var res cacheable
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	assert.Equal(t, "private", res.CacheScope)

	// Not found is -32602 with data.uri in the modern protocol.
	b, h = mcptest.Modern(1, "resources/read", map[string]any{"uri": "test://nothing"})
	w = f.Do(t, mcptest.Request{Body: b, Headers: h})
	require.Equal(t, 200, w.Code)
	r := mcptest.Decode(t, w)
	assert.Equal(t, int64(-32602), r.Error.Code)
	assert.JSONEq(t, `{"uri":"test://nothing"}`, string(r.Error.Data))

	b, h = mcptest.Modern(1, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "12"}})
	w = f.Do(t, mcptest.Request{Body: b, Headers: h})
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.JSONEq(t, `{"completion":{"values":["123","124"],"total":2,"hasMore":false},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture","version":"1.0.0"}}}`, string(mcptest.Decode(t, w).Result))
}

package sessions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// needsGrant is what a callback returns for a caller who has not
// connected the upstream (authn/upstream's *ElicitationError).
type needsGrant struct{ id, url string }

func (e *needsGrant) Error() string { return "needs a grant: internal detail" }
func (e *needsGrant) URLElicitation() (string, string, string) {
	return e.id, e.url, "Connect your photos account."
}

const elicitURL = "https://mcp.example.com/connect/photos?link=abc"

func elicitFixture(t *testing.T) *fixture {
	el := &needsGrant{id: "el-1", url: elicitURL}
	photos := inventory.Template{
		Name: "photos", URITemplate: "photos://{id}", MIMEType: "image/jpeg", Access: inventory.Protected,
		List: func(context.Context, inventory.ListRequest) (inventory.Page, error) { return inventory.Page{}, el },
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) { return nil, el },
	}
	tp, err := tools.New(tools.Tool{Name: "photos_sync", Handler: func(context.Context, *tools.Request) (tools.Result, error) {
		return tools.Result{}, el
	}})
	require.NoError(t, err)
	return newFixture(t, fixtureOptions{mcp: mcptest.Options{Templates: []inventory.Template{photos}}, parts: []mcphttp.Part{tp}})
}

func initializeWith(t *testing.T, f *fixture, token string, caps map[string]any) string {
	resp := f.Post(t, token, "", mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
		"clientInfo": map[string]any{"name": "t", "version": "1"}}), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

func TestURLElicitationLegacy(t *testing.T) {
	f := elicitFixture(t)
	alice := f.Token(t, "alice")
	read := mcptest.Legacy(2, "resources/read", map[string]any{"uri": "photos://1"})

	session := initializeWith(t, f, alice, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	resp := f.Post(t, alice, session, read, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	require.Equal(t, 200, resp.StatusCode)
	r := decodeResp(t, resp)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32042, r.Error.Code)
	assert.JSONEq(t, `{"elicitations":[{"mode":"url","elicitationId":"el-1","url":"`+elicitURL+`","message":"Connect your photos account."}]}`, string(r.Error.Data))
	assert.NotContains(t, r.Error.Message, "internal detail")

	// A tool's handler answers the same way.
	resp = f.Post(t, alice, session, mcptest.Legacy(5, "tools/call", map[string]any{"name": "photos_sync", "arguments": map[string]any{}}), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	r = decodeResp(t, resp)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32042, r.Error.Code)

	// resources/list answers the same way.
	resp = f.Post(t, alice, session, mcptest.Legacy(3, "resources/list", nil), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	r = decodeResp(t, resp)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32042, r.Error.Code)

	// A client that declared form-mode elicitation only, and one without a session: the URL in the message.
	formOnly := initializeWith(t, f, alice, map[string]any{"elicitation": map[string]any{}})
	for name, sess := range map[string]string{"form only": formOnly, "no session": ""} {
		resp = f.Post(t, alice, sess, read, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		r = decodeResp(t, resp)
		require.NotNil(t, r.Error, name)
		assert.EqualValues(t, -32603, r.Error.Code, name)
		assert.Contains(t, r.Error.Message, elicitURL, name)
	}

	// Another principal naming alice's session is not alice's client.
	resp = f.Post(t, f.Token(t, "bob"), session, read, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	assert.Equal(t, 404, resp.StatusCode)
	resp.Body.Close()
}

func TestURLElicitationCompleteNotification(t *testing.T) {
	f := elicitFixture(t)
	alice := f.Token(t, "alice")
	session := initializeWith(t, f, alice, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	s := openStream(t, f.Get(t, alice, session, nil))
	defer s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	ctx := context.Background()
	f.Hub.ElicitationComplete(ctx, "bob", "el-bob")
	f.Hub.ElicitationComplete(ctx, "alice", "el-1")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"el-1"}}`, s.Next(t))
}

func TestURLElicitationModern(t *testing.T) {
	f := elicitFixture(t)
	alice := f.Token(t, "alice")
	modern := func(id int, method string, params map[string]any, caps map[string]any) (string, map[string]string) {
		body, hdr := mcptest.Modern(id, method, params)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &m))
		m["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/clientCapabilities"] = caps
		b, _ := json.Marshal(m)
		return string(b), hdr
	}
	withURL := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}

	body, hdr := modern(4, "resources/read", map[string]any{"uri": "photos://1"}, withURL)
	resp := f.Post(t, alice, "", body, hdr)
	require.Equal(t, 200, resp.StatusCode)
	r := decodeResp(t, resp)
	require.Nil(t, r.Error)
	var res map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Result, &res))
	assert.JSONEq(t, `"input_required"`, string(res["resultType"]))
	assert.JSONEq(t, `{"el-1":{"method":"elicitation/create","params":{"mode":"url","elicitationId":"el-1","url":"`+elicitURL+`","message":"Connect your photos account."}}}`, string(res["inputRequests"]))
	assert.NotContains(t, res, "ttlMs", "an input_required result carries no caching hints")

	// A tool's handler answers the same way.
	body, hdr = modern(7, "tools/call", map[string]any{"name": "photos_sync", "arguments": map[string]any{}}, withURL)
	resp = f.Post(t, alice, "", body, hdr)
	require.Equal(t, 200, resp.StatusCode)
	r = decodeResp(t, resp)
	require.Nil(t, r.Error)
	assert.Contains(t, string(r.Result), `"resultType":"input_required"`)

	// Without the capability: -32021 naming what is missing, and the URL.
	body, hdr = modern(5, "resources/read", map[string]any{"uri": "photos://1"}, map[string]any{"elicitation": map[string]any{}})
	resp = f.Post(t, alice, "", body, hdr)
	assert.Equal(t, 400, resp.StatusCode)
	r = decodeResp(t, resp)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32021, r.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{"url":{}}}}`, string(r.Error.Data))
	assert.Contains(t, r.Error.Message, elicitURL)

	// resources/list cannot ask for input in 2026-07-28: the URL in the message.
	body, hdr = modern(6, "resources/list", map[string]any{}, withURL)
	resp = f.Post(t, alice, "", body, hdr)
	r = decodeResp(t, resp)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32603, r.Error.Code)
	assert.Contains(t, r.Error.Message, elicitURL)
}

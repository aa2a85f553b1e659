package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
)

// exchange is one HTTP request a client sent, and the status it got.
type exchange struct {
	HTTPMethod   string // POST, GET, DELETE
	RPCMethod    string // the JSON-RPC method of a POST ("" for a response or batch)
	Notification bool   // a JSON-RPC message without id
	HasMeta      bool   // params._meta present
	McpMethod    string // the Mcp-Method header
	Version      string // the MCP-Protocol-Version header
	Status       int
}

// recorder is an http.RoundTripper that notes every exchange: what a real
// client really sends, and what the server answered.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	log  []exchange
}

func (rc *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	ex := exchange{HTTPMethod: r.Method, McpMethod: r.Header.Get("Mcp-Method"), Version: r.Header.Get("MCP-Protocol-Version")}
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			ex.RPCMethod, ex.Notification, ex.HasMeta = msg.Method, msg.Method != "" && msg.ID == nil, msg.Params.Meta != nil
		}
	}
	res, err := rc.next.RoundTrip(r)
	if err == nil {
		ex.Status = res.StatusCode
	}
	rc.mu.Lock()
	rc.log = append(rc.log, ex)
	rc.mu.Unlock()
	return res, err
}

// exchanges returns a copy of the log.
func (rc *recorder) exchanges() []exchange {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]exchange(nil), rc.log...)
}

// waitFor polls the log until an exchange satisfies ok (a hang guard of
// 10 s, not a timing assertion).
func (rc *recorder) waitFor(t *testing.T, what string, ok func(exchange) bool) exchange {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, ex := range rc.exchanges() {
			if ok(ex) {
				return ex
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client never sent %s; it sent: %+v", what, rc.exchanges())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The official go-sdk client in the 2026-07-28 era, against the documents
// server with notifications: Subscribe opens a subscriptions/listen stream
// (and an update of the document arrives on it), Unsubscribe cancels it
// with notifications/cancelled, which the server accepts with 202; the
// session then goes on working. Before the server accepted modern client
// notifications, that notification got 400 and the client closed its
// session for good ("client is closing").
func TestGoSDKModernSubscribeUnsubscribe(t *testing.T) {
	d := startDocuments(t)
	ctx := context.Background()
	rec := &recorder{next: bearer{token: d.alice, next: http.DefaultTransport}}
	updated := make(chan string, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: &http.Client{Transport: rec}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe)

	uris, _ := walk(t, cs)
	mine := documentsOf(uris)
	require.NotEmpty(t, mine)
	doc := mine[0]

	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: doc}))
	listen := rec.waitFor(t, "subscriptions/listen", func(ex exchange) bool { return ex.RPCMethod == "subscriptions/listen" })
	assert.Equal(t, http.StatusOK, listen.Status)
	// Alice edits her document; her listen stream carries the update.
	put(t, d, d.alice, doc, "Edited while subscribed.")
	select {
	case got := <-updated:
		assert.Equal(t, doc, got)
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated on the listen stream")
	}

	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: doc}))
	cancelled := rec.waitFor(t, "notifications/cancelled", func(ex exchange) bool {
		return ex.RPCMethod == "notifications/cancelled" && ex.Status != 0
	})
	t.Logf("go-sdk notifications/cancelled: %+v", cancelled)
	assert.True(t, cancelled.Notification)
	assert.Equal(t, http.StatusAccepted, cancelled.Status, "a client notification is accepted")

	// The session goes on: further calls succeed.
	for range 3 {
		page, err := cs.ListResources(ctx, nil)
		require.NoError(t, err, "the session still works after unsubscribe")
		assert.NotEmpty(t, page.Resources)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: doc})
		require.NoError(t, err)
		assert.Contains(t, res.Contents[0].Text, "Edited while subscribed.")
	}
	// Subscribing again works too.
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: doc}))
	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: doc}))
	_, err = cs.ListResources(ctx, nil)
	require.NoError(t, err)

	for _, ex := range rec.exchanges() {
		assert.NotEqual(t, http.StatusBadRequest, ex.Status, "%+v", ex)
	}
}

// put replaces the body of owner's document through the REST API.
func put(t *testing.T, d *documents, token, uri, body string) {
	t.Helper()
	b, err := json.Marshal(map[string]string{"body": body})
	require.NoError(t, err)
	id := strings.TrimPrefix(uri, documentPrefix)
	req, err := http.NewRequest(http.MethodPut, d.app.URL()+"/api/documents/"+id, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
}

// tsExchange is one request of listen.mjs's summary.
type tsExchange struct {
	HTTPMethod   string `json:"httpMethod"`
	RPCMethod    string `json:"rpcMethod"`
	Notification bool   `json:"notification"`
	HasMeta      bool   `json:"hasMeta"`
	McpMethod    string `json:"mcpMethod"`
	Version      string `json:"version"`
	Status       int    `json:"status"`
}

// The official TypeScript SDK v2 client (@modelcontextprotocol/client) in
// the 2026-07-28 era: listen() opens a subscriptions/listen stream, the
// subscription's close() sends notifications/cancelled (without an
// Mcp-Method header), which the server accepts with 202, and the client
// goes on listing. Nothing the client sends is answered with 400, and the
// server logs nothing above Info.
func TestTypeScriptV2ListenClose(t *testing.T) {
	node, sdkDir := tsSDK(t)
	logs := &syncBuffer{}
	d := startDocumentsWith(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var s struct {
		SDKVersion          string `json:"sdkVersion"`
		ProtocolVersion     string `json:"protocolVersion"`
		SubscribeCapability bool   `json:"subscribeCapability"`
		HonoredFilter       struct {
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"honoredFilter"`
		Closed         string       `json:"closed"`
		ListAfterClose int          `json:"listAfterClose"`
		Exchanges      []tsExchange `json:"exchanges"`
		Problems       []string     `json:"problems"`
		OK             bool         `json:"ok"`
	}
	runErr := runTSClient(t, node, sdkDir, d.alice, &s, "listen.mjs", d.mcpURL)
	assert.Empty(t, s.Problems)
	assert.True(t, s.OK)
	assert.NoError(t, runErr, "exit status 1 means a check failed")

	assert.Equal(t, "2026-07-28", s.ProtocolVersion)
	assert.True(t, s.SubscribeCapability)
	assert.True(t, s.HonoredFilter.ResourcesListChanged)
	require.Len(t, s.HonoredFilter.ResourceSubscriptions, 1)
	assert.True(t, strings.HasPrefix(s.HonoredFilter.ResourceSubscriptions[0], documentPrefix))
	assert.Equal(t, "local", s.Closed)
	assert.Equal(t, 13, s.ListAfterClose, "docs://about and alice's 12 documents, listed after the close")

	var cancelled []tsExchange
	for _, ex := range s.Exchanges {
		assert.NotEqual(t, http.StatusBadRequest, ex.Status, "%+v", ex)
		assert.Equal(t, "2026-07-28", ex.Version, "%+v", ex)
		if ex.RPCMethod == "notifications/cancelled" {
			cancelled = append(cancelled, ex)
		}
	}
	require.Len(t, cancelled, 1, "close() sends one notifications/cancelled")
	t.Logf("TypeScript SDK v2 %s notifications/cancelled: %+v", s.SDKVersion, cancelled[0])
	assert.True(t, cancelled[0].Notification)
	assert.Equal(t, http.StatusAccepted, cancelled[0].Status)

	// The server's side: the cancelled notification logged as 202, no 400,
	// nothing above Info.
	log := logs.String()
	assert.Contains(t, log, "status=202")
	assert.NotContains(t, log, "status=400")
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			assert.Contains(t, line, "DEVELOPMENT MODE", "the only warning is development mode's")
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (loggers).
type syncBuffer = logbuf.Buffer

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startApp(t *testing.T, mode string) *app {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := start(ctx, config{addr: "127.0.0.1:0", mode: mode, dataDir: t.TempDir()}, io.Discard)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// mcpClient is a minimal MCP client over HTTP as one caller.
type mcpClient struct {
	t       *testing.T
	a       *app
	token   string
	session string
}

func (a *app) client(t *testing.T, user string) *mcpClient {
	tok, err := a.dev.Sign(user, []string{scopeMCP}, time.Hour)
	require.NoError(t, err)
	return &mcpClient{t: t, a: a, token: tok}
}

func (c *mcpClient) post(body string, hdr map[string]string) (*http.Response, rpcResponse) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.a.base+"/mcp", strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var r rpcResponse
	b, _ := io.ReadAll(resp.Body)
	require.NoError(c.t, json.Unmarshal(b, &r), "%s", b)
	return resp, r
}

func legacy(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

func modern(id int, method string, params map[string]any, caps map[string]any) (string, map[string]string) {
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "t", "version": "1"}}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if uri, ok := params["uri"].(string); ok {
		h["Mcp-Name"] = uri
	}
	return string(b), h
}

var urlElicitation = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}

func (c *mcpClient) initialize() {
	c.t.Helper()
	resp, r := c.post(legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": urlElicitation,
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}}), nil)
	require.Nil(c.t, r.Error)
	c.session = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(c.t, c.session)
}

// list returns the URIs of the caller's resources, or the error.
func (c *mcpClient) list() ([]string, *rpcResponse) {
	c.t.Helper()
	_, r := c.post(legacy(2, "resources/list", map[string]any{}), nil)
	if r.Error != nil {
		return nil, &r
	}
	var res struct{ Resources []struct{ URI string } }
	require.NoError(c.t, json.Unmarshal(r.Result, &res))
	var uris []string
	for _, x := range res.Resources {
		uris = append(uris, x.URI)
	}
	return uris, nil
}

type elicitation struct {
	Mode, ElicitationID, URL, Message string
}

func elicitationOf(t *testing.T, r *rpcResponse) elicitation {
	t.Helper()
	require.NotNil(t, r)
	require.NotNil(t, r.Error)
	require.EqualValues(t, -32042, r.Error.Code, r.Error.Message)
	var data struct{ Elicitations []elicitation }
	require.NoError(t, json.Unmarshal(r.Error.Data, &data))
	require.Len(t, data.Elicitations, 1)
	require.Equal(t, "url", data.Elicitations[0].Mode)
	return data.Elicitations[0]
}

var formField = regexp.MustCompile(`name="(request|csrf)" value="([^"]*)"`)

// approve follows an elicitation URL in a browser and signs in at the
// photos service as user, approving; it returns the last page.
func approve(t *testing.T, a *app, link, user string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &http.Client{Jar: jar}
	resp, err := b.Get(link)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%s", page)
	require.Contains(t, resp.Request.URL.Path, "/photos/oauth/authorize", "the photos service's own consent page")
	form := url.Values{"user": {user}, "decision": {"approve"}}
	for _, m := range formField.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	resp, err = b.PostForm(a.base+"/photos/oauth/consent", form)
	require.NoError(t, err)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%s", page)
	return string(page)
}

// readURI reads uri and returns the text or the error code.
func (c *mcpClient) read(uri string) (string, int64) {
	_, r := c.post(legacy(3, "resources/read", map[string]any{"uri": uri}), nil)
	if r.Error != nil {
		return "", r.Error.Code
	}
	var res struct{ Contents []struct{ Text string } }
	require.NoError(c.t, json.Unmarshal(r.Result, &res))
	require.Len(c.t, res.Contents, 1)
	return res.Contents[0].Text, 0
}

// events opens the session's GET stream and returns its data lines.
func (c *mcpClient) events() <-chan string {
	req, _ := http.NewRequest(http.MethodGet, c.a.base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	require.Equal(c.t, 200, resp.StatusCode)
	c.t.Cleanup(func() { resp.Body.Close() })
	out := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(d) != "" {
				out <- d
			}
		}
		close(out)
	}()
	return out
}

func TestExampleElicitMode(t *testing.T) {
	a := startApp(t, "elicit")
	alice, bob := a.client(t, "alice"), a.client(t, "bob")
	alice.initialize()
	bob.initialize()
	stream := alice.events()
	for a.hub.Subscribers("alice") == 0 {
		time.Sleep(5 * time.Millisecond)
	}

	_, r := alice.list()
	el := elicitationOf(t, r)
	assert.True(t, strings.HasPrefix(el.URL, a.base+"/upstream/connect/photos?link="), el.URL)
	assert.NotEmpty(t, el.Message)
	page := approve(t, a, el.URL, "alice")
	assert.Contains(t, page, "Connected to photos")
	select {
	case msg := <-stream:
		assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"`+el.ElicitationID+`"}}`, msg)
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/elicitation/complete")
	}

	uris, r := alice.list()
	require.Nil(t, r)
	assert.Equal(t, []string{"photos://a1", "photos://a2", "photos://a3"}, uris)
	text, code := alice.read("photos://a1")
	assert.Zero(t, code)
	assert.Contains(t, text, "Alice at the lake")
	_, code = alice.read("photos://b1")
	assert.EqualValues(t, -32002, code, "bob's photo is not alice's to read")

	_, r = bob.list()
	bobEl := elicitationOf(t, r)
	assert.NotEqual(t, el.ElicitationID, bobEl.ElicitationID, "alice's grant is hers alone")
	assert.Contains(t, approve(t, a, bobEl.URL, "bob"), "Connected to photos")
	uris, r = bob.list()
	require.Nil(t, r)
	assert.Equal(t, []string{"photos://b1", "photos://b2"}, uris)

	// The photos API refuses an MCP token.
	req, _ := http.NewRequest(http.MethodGet, a.base+"/photos/api/photos", nil)
	req.Header.Set("Authorization", "Bearer "+alice.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)

	// 2026-07-28: carol has not connected; her read asks for input.
	carol := a.client(t, "carol")
	body, hdr := modern(9, "resources/read", map[string]any{"uri": "photos://c1"}, urlElicitation)
	_, r2 := carol.post(body, hdr)
	require.Nil(t, r2.Error)
	assert.Contains(t, string(r2.Result), `"resultType":"input_required"`)
	assert.Contains(t, string(r2.Result), `"method":"elicitation/create"`)

	// A client without elicitation.url is told the URL in the message.
	body, hdr = modern(10, "resources/read", map[string]any{"uri": "photos://c1"}, map[string]any{})
	_, r2 = carol.post(body, hdr)
	require.NotNil(t, r2.Error)
	assert.Contains(t, r2.Error.Message, a.base+"/upstream/connect/photos?link=")

	// Disconnect: alice is asked again.
	_, r3 := alice.post(legacy(11, "tools/call", map[string]any{"name": "photos_disconnect", "arguments": map[string]any{}}), nil)
	require.Nil(t, r3.Error)
	_, r = alice.list()
	elicitationOf(t, r)
	uris, r = bob.list()
	require.Nil(t, r, "bob's grant stays")
	assert.Len(t, uris, 2)
}

func TestExampleExchangeMode(t *testing.T) {
	a := startApp(t, "exchange")
	alice, bob := a.client(t, "alice"), a.client(t, "bob")
	alice.initialize()
	uris, r := alice.list()
	require.Nil(t, r)
	assert.Equal(t, []string{"photos://a1", "photos://a2", "photos://a3"}, uris)
	uris, r = bob.list() // stateless, no session
	require.Nil(t, r)
	assert.Equal(t, []string{"photos://b1", "photos://b2"}, uris)
	text, code := bob.read("photos://b2")
	assert.Zero(t, code)
	assert.Contains(t, text, "Bob hiking")
	_, code = bob.read("photos://a1")
	assert.EqualValues(t, -32002, code)

	req, _ := http.NewRequest(http.MethodGet, a.base+"/photos/api/photos", nil)
	req.Header.Set("Authorization", "Bearer "+alice.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode, "the photos API refuses an MCP token")
}

func TestExampleTokenCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"-data-dir", dir, "token", "alice"}, &out, &errOut), "no server yet")
	assert.Equal(t, 2, run(context.Background(), []string{"-mode", "other"}, &out, &errOut))

	// The program: "listening on http://ADDR" first; then "token USER"
	// prints a token that server accepts.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data-dir", dir}, pw, io.Discard)
		pw.Close()
	}()
	defer func() {
		cancel()
		assert.Equal(t, 0, <-done)
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan())
	base, ok := strings.CutPrefix(lines.Text(), "listening on ")
	require.True(t, ok, "the first line: %q", lines.Text())
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	out.Reset()
	require.Equal(t, 0, run(context.Background(), []string{"-data-dir", dir, "token", "dave"}, &out, &errOut), errOut.String())
	tok := strings.TrimSpace(out.String())
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "the printed token is the running server's")
}

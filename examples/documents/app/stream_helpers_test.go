package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

// sseStream is an open notification stream: a legacy session's GET, or a
// modern subscriptions/listen response.
type sseStream struct {
	resp   *http.Response
	events chan string // the data of each message event, in order
	done   chan struct{}
}

func readStream(t *testing.T, resp *http.Response) *sseStream {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	st := &sseStream{resp: resp, events: make(chan string, 1000), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" { // empty: a priming event
				st.events <- data
			}
		}
	}()
	t.Cleanup(st.close)
	return st
}

// next returns the data of the next message, failing the test after 10 s.
func (st *sseStream) next(t *testing.T) string {
	t.Helper()
	select {
	case e := <-st.events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return ""
	}
}

// ended waits for the stream's end (the server closed it).
func (st *sseStream) ended(t *testing.T) {
	t.Helper()
	select {
	case <-st.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
}

func (st *sseStream) close() { st.resp.Body.Close(); <-st.done }

// note is a notification reduced to what the tests compare.
type note struct {
	Method string // "list_changed", "updated", or the whole method
	URI    string
}

func (n note) String() string { return n.Method + " " + n.URI }

// parseNote decodes one notification of either era.
func parseNote(t *testing.T, data string) note {
	t.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &m), data)
	n := note{Method: m.Method, URI: m.Params.URI}
	switch m.Method {
	case "notifications/resources/list_changed":
		n.Method = "list_changed"
	case "notifications/resources/updated":
		n.Method = "updated"
	}
	return n
}

func listChangedNote() note       { return note{Method: "list_changed"} }
func updatedNote(uri string) note { return note{Method: "updated", URI: uri} }

// untilMarker reads the stream's notifications up to (not including) the
// marker: an update of AboutURI, which the test publishes last.
func (st *sseStream) untilMarker(t *testing.T) []note {
	t.Helper()
	var out []note
	for {
		n := parseNote(t, st.next(t))
		if n == updatedNote(AboutURI) {
			return out
		}
		out = append(out, n)
	}
}

// rpc sends one JSON-RPC request, in a legacy session when session is not
// empty, with extra headers, and returns the HTTP response (body unread).
func (s *testServer) rpc(t *testing.T, token, session string, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.mcpURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return res
}

func rpcBody(t *testing.T, id int, method string, params any) string {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// initialize opens a legacy session and returns its id.
func (s *testServer) initialize(t *testing.T, token string) string {
	t.Helper()
	res := s.rpc(t, token, "", rpcBody(t, 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	}), nil)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resources":{"subscribe":true,"listChanged":true}`)
	id := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

// subscribe subscribes a legacy session to uri.
func (s *testServer) subscribe(t *testing.T, token, session, uri string) {
	t.Helper()
	res := s.rpc(t, token, session, rpcBody(t, 2, "resources/subscribe", map[string]any{"uri": uri}), nil)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out rpcResponse
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Nil(t, out.Error, uri)
}

// openGET opens a legacy session's stream and waits until the hub counts
// its subscription (want: the subject's subscriptions once it is open).
func (s *testServer) openGET(t *testing.T, token, subject, session string, want int) *sseStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.mcpURL(), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	st := readStream(t, res)
	waitSubscribers(t, s.app.hub, subject, want)
	return st
}

// listen opens a modern subscriptions/listen stream for list changes and
// updates of uris, checks the acknowledgement, and waits for the hub.
func (s *testServer) listen(t *testing.T, token, subject string, uris []string, want int) *sseStream {
	t.Helper()
	params := map[string]any{
		"notifications": map[string]any{"resourcesListChanged": true, "resourceSubscriptions": uris},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
		},
	}
	res := s.rpc(t, token, "", rpcBody(t, 7, "subscriptions/listen", params),
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	st := readStream(t, res)
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Notifications struct {
				ResourcesListChanged  bool     `json:"resourcesListChanged"`
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(st.next(t)), &ack))
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	require.True(t, ack.Params.Notifications.ResourcesListChanged)
	require.ElementsMatch(t, uris, ack.Params.Notifications.ResourceSubscriptions)
	waitSubscribers(t, s.app.hub, subject, want)
	return st
}

// waitSubscribers polls until the hub holds n subscriptions of subject.
func waitSubscribers(t *testing.T, hub *notify.Hub, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for hub.Subscribers(subject) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d subscriptions, want %d", subject, hub.Subscribers(subject), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// api calls the REST API and returns the status and the body.
func (s *testServer) api(t *testing.T, token, method, path, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.app.URL()+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(bytes.TrimSpace(b))
}

func (s *testServer) share(t *testing.T, token, id, with string) {
	t.Helper()
	res, body := s.api(t, token, http.MethodPost, "/api/documents/"+id+"/shares", `{"with":"`+with+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
}

func (s *testServer) unshare(t *testing.T, token, id, user string) {
	t.Helper()
	res, body := s.api(t, token, http.MethodDelete, "/api/documents/"+id+"/shares/"+user, "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
}

func (s *testServer) update(t *testing.T, token, id, text string) {
	t.Helper()
	b, err := json.Marshal(map[string]string{"body": text})
	require.NoError(t, err)
	res, body := s.api(t, token, http.MethodPut, "/api/documents/"+id, string(b))
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
}

// firstDocs returns the ids of subject's first n documents.
func (s *testServer) firstDocs(t *testing.T, subject string, n int) []string {
	t.Helper()
	rows, err := s.app.db.List(t.Context(), subject, "", n)
	require.NoError(t, err)
	require.Len(t, rows, n)
	ids := make([]string, n)
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

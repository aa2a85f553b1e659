package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The clients of the fleet test: the go-sdk client, plain JSON-RPC posts
// and event streams read by hand.

// bearer adds a token to every request of a go-sdk client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk session: version "" negotiates 2026-07-28
// (server/discover), "2025-11-25" a legacy session.
func connect(t *testing.T, endpoint, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-fleet", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// walkPages lists every page, calling between(n) after page n.
func walkPages(t *testing.T, cs *mcp.ClientSession, between func(page int)) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for page := 1; ; page++ {
		res, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
		require.NoError(t, err, "page %d", page)
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			return uris
		}
		require.Less(t, page, 100, "the traversal must end")
		if between != nil {
			between(page)
		}
	}
}

// readAll reads every URI and returns their texts.
func readAll(t *testing.T, cs *mcp.ClientSession, uris []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range uris {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: u})
		require.NoError(t, err, u)
		require.NotEmpty(t, res.Contents, u)
		require.Equal(t, u, res.Contents[0].URI)
		out[u] = res.Contents[0].Text
	}
	return out
}

// post sends one JSON-RPC request with extra headers; the body is read.
func post(t *testing.T, endpoint string, hdr map[string]string, method string, params any) (*http.Response, string) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func auth(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// initializeParams opens a legacy session.
var initializeParams = map[string]any{
	"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "fleet-test", "version": "1"},
}

// stream is an event stream read in the background: the data of each
// event, in order; closed when the stream ends.
type stream struct {
	res    *http.Response
	events chan string
}

// listen opens a modern subscriptions/listen stream for the caller's list
// changes and updates of uris, and returns it after its acknowledgement.
func listen(t *testing.T, endpoint, token string, uris []string) *stream {
	t.Helper()
	params := map[string]any{
		"notifications": map[string]any{"resourcesListChanged": true, "resourceSubscriptions": uris},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "fleet-test", "version": "1"},
		},
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	s := &stream{res: res, events: make(chan string, 64)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				s.events <- strings.TrimSpace(d)
			}
		}
	}()
	t.Cleanup(func() { res.Body.Close() })
	require.Contains(t, s.next(t), "notifications/subscriptions/acknowledged")
	return s
}

// next returns the next event's data (10 s at most).
func (s *stream) next(t *testing.T) string {
	t.Helper()
	select {
	case d, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no event on the stream within 10 s")
		return ""
	}
}

// ended waits until the stream ends (10 s at most).
func (s *stream) ended(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end")
		}
	}
}

// note is the method and URI of a notification.
type note struct{ method, uri string }

func parseNote(t *testing.T, data string) note {
	t.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &m), data)
	return note{m.Method, m.Params.URI}
}

// untilUpdated receives notes until the update of uri, and returns the
// others seen before it: list_changed may come first (a change the
// caller's view saw while no stream was open).
func (s *stream) untilUpdated(t *testing.T, uri string) []note {
	t.Helper()
	var before []note
	for {
		n := parseNote(t, s.next(t))
		if n == (note{"notifications/resources/updated", uri}) {
			return before
		}
		before = append(before, n)
		require.Less(t, len(before), 10, "no update of %s among %v", uri, before)
	}
}

// idEvent is a message of a legacy GET stream with its SSE id ("" when it
// carries none).
type idEvent struct {
	id   string
	note note
}

// getStream is a legacy session's GET stream, read in the background;
// events is closed when the stream ends.
type getStream struct {
	res    *http.Response
	events chan idEvent
	// primed receives the id of each priming event (an id and empty
	// data: no message).
	primed chan string
}

// openGET opens the GET stream of a legacy session, with Last-Event-ID
// lastID when not empty.
func openGET(t *testing.T, endpoint, token, session, lastID string) *getStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, endpoint, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	s := &getStream{res: res, events: make(chan idEvent, 64), primed: make(chan string, 4)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id:"):
				id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.TrimSpace(line) == "data:":
				select {
				case s.primed <- id:
				default:
				}
			case strings.HasPrefix(line, "data:"):
				s.events <- idEvent{id: id, note: decodeNote(strings.TrimSpace(strings.TrimPrefix(line, "data:")))}
			case line == "":
				id = ""
			}
		}
	}()
	t.Cleanup(func() { res.Body.Close() })
	return s
}

// next returns the next message (10 s at most).
func (s *getStream) next(t *testing.T) idEvent {
	t.Helper()
	select {
	case e, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event on the stream within 10 s")
		return idEvent{}
	}
}

// nextChange returns the next message but list_changed ones that carry
// an id (10 s at most each): the hub delivers an event at least once, so
// a list_changed whose recording or publishing overran the instances'
// Redis timeout (500 ms, under load) is recorded and sent again later,
// with a newer id, and may come between any two others (the share of
// TestFleetStreamCutBeforeItsFirstEvent). A clean restart's list_changed
// carries no id, and is returned.
func (s *getStream) nextChange(t *testing.T) idEvent {
	t.Helper()
	for range 10 {
		e := s.next(t)
		if e.note.method != "notifications/resources/list_changed" || e.id == "" {
			return e
		}
		t.Logf("a list_changed sent again (id %s): skipped", e.id)
	}
	t.Fatal("only list_changed on the stream")
	return idEvent{}
}

// decodeNote is parseNote for a reading goroutine, which must not fail
// the test: a message it cannot decode is a note of its own.
func decodeNote(data string) note {
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return note{method: "undecodable: " + data}
	}
	return note{m.Method, m.Params.URI}
}

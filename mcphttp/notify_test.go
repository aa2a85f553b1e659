package mcphttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

// notifyFixture is the fixture's inventory served with notifications on.
type notifyFixture struct {
	*fixture
	hub    *notify.Hub
	srv    *httptest.Server
	notify *mcphttp.Endpoint // the endpoint with notifications, behind srv
}

func newNotifyFixture(t testing.TB, queue int) *notifyFixture {
	return newNotifyFixtureLimits(t, queue, mcphttp.SessionLimits{})
}

func newNotifyFixtureLimits(t testing.TB, queue int, lim mcphttp.SessionLimits) *notifyFixture {
	t.Helper()
	f := newFixture(t, fixtureOptions{})
	hub := notify.New(notify.Options{QueueSize: queue})
	ep, err := mcphttp.New(f.inv, mcphttp.Options{
		ServerInfo: mcphttp.Implementation{Name: "fixture", Version: "1.0.0"}, Authenticator: f.auth,
		Notifications: hub, KeepAlive: time.Hour, Sessions: lim,
	})
	require.NoError(t, err)
	srv := httptest.NewServer(ep)
	t.Cleanup(func() { hub.Close(); srv.Close() })
	return &notifyFixture{fixture: f, hub: hub, srv: srv, notify: ep}
}

// post sends a JSON-RPC body over HTTP.
func (f *notifyFixture) post(t testing.TB, token, session, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
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
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

func (f *notifyFixture) initialize(t testing.TB, token string) string {
	t.Helper()
	resp := f.post(t, token, "", legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var r rpc
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	assert.Contains(t, string(r.Result), `"resources":{"subscribe":true,"listChanged":true}`)
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	for _, c := range id {
		require.True(t, c > 0x20 && c < 0x7f, "session ids are visible ASCII")
	}
	return id
}

// stream is an open SSE response.
type stream struct {
	resp   *http.Response
	events chan string // the data of each message event
	done   chan struct{}
}

func openStream(t testing.TB, resp *http.Response) *stream {
	t.Helper()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	s := &stream{resp: resp, events: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.events <- data
			}
		}
	}()
	return s
}

func (f *notifyFixture) get(t testing.TB, token, session string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

func (s *stream) next(t testing.TB) string {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return ""
	}
}

// quiet asserts that nothing arrives while a marker event is sent through.
func (s *stream) none(t testing.TB) {
	t.Helper()
	select {
	case e := <-s.events:
		t.Fatalf("unexpected event %s", e)
	case <-time.After(50 * time.Millisecond):
	}
}

func (s *stream) close() { s.resp.Body.Close(); <-s.done }

// waitSubscribers waits until the hub has n subscriptions of subject: the
// server side of a stream subscribes right before its first write.
func waitSubscribers(t testing.TB, hub *notify.Hub, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for hub.Subscribers(subject) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d subscribers, want %d", subject, hub.Subscribers(subject), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLegacySessionStream(t *testing.T) {
	f := newNotifyFixture(t, 0)
	alice, bob := f.token(t, "alice"), f.token(t, "bob")
	session := f.initialize(t, alice)
	s := openStream(t, f.get(t, alice, session))
	defer s.close()
	waitSubscribers(t, f.hub, "alice", 1)
	ctx := context.Background()

	f.hub.ListChanged(ctx, "bob") // another principal's change: never delivered here
	f.hub.ListChanged(ctx, "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, s.next(t))

	uri := "docs://documents/alice-0001"
	resp := f.post(t, alice, session, legacy(2, "resources/subscribe", map[string]any{"uri": uri}), nil)
	require.Equal(t, 200, resp.StatusCode)
	resp.Body.Close()
	f.hub.ResourceUpdated(ctx, "alice", "docs://documents/alice-0002") // not subscribed
	f.hub.ResourceUpdated(ctx, "alice", uri)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`, s.next(t))

	resp = f.post(t, alice, session, legacy(3, "resources/unsubscribe", map[string]any{"uri": uri}), nil)
	resp.Body.Close()
	f.hub.ResourceUpdated(ctx, "alice", uri)
	s.none(t)

	// A19-style reuse: bob's token on alice's session is not found, on
	// POST, GET and DELETE alike.
	resp = f.post(t, bob, session, legacy(4, "ping", nil), nil)
	assert.Equal(t, 404, resp.StatusCode)
	resp.Body.Close()
	resp = f.get(t, bob, session)
	assert.Equal(t, 404, resp.StatusCode)
	resp.Body.Close()
	resp = f.get(t, "", session)
	assert.Equal(t, 401, resp.StatusCode, "nor anonymously: streams need a principal")
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata=")
	resp.Body.Close()

	// DELETE ends the session and its stream.
	req, _ := http.NewRequest(http.MethodDelete, f.srv.URL, nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream must end with its session")
	}
	resp = f.post(t, alice, session, legacy(5, "ping", nil), nil)
	assert.Equal(t, 404, resp.StatusCode)
	resp.Body.Close()
	waitSubscribers(t, f.hub, "alice", 0)
}

func TestSessionRules(t *testing.T) {
	f := newNotifyFixture(t, 0)
	alice := f.token(t, "alice")
	// Sessions are optional: requests without one are served statelessly.
	resp := f.post(t, alice, "", legacy(1, "resources/list", nil), nil)
	assert.Equal(t, 200, resp.StatusCode)
	resp.Body.Close()
	// resources/subscribe needs one.
	resp = f.post(t, alice, "", legacy(1, "resources/subscribe", map[string]any{"uri": "test://static-text"}), nil)
	var r rpc
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	assert.Equal(t, int64(-32600), r.Error.Code)
	// Unknown sessions are 404; GET without a session is 400.
	resp = f.post(t, alice, "no-such-session", legacy(1, "ping", nil), nil)
	assert.Equal(t, 404, resp.StatusCode)
	resp.Body.Close()
	resp = f.get(t, alice, "")
	assert.Equal(t, 400, resp.StatusCode)
	resp.Body.Close()
	// An anonymous initialize is answered without a session (nothing
	// could be delivered to nobody), so anonymous callers cannot subscribe.
	resp = f.post(t, "", "", legacy(1, "initialize", nil), nil)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	assert.Contains(t, string(r.Result), `"subscribe":false,"listChanged":false`, "no notifications without a session")
	resp = f.post(t, "", "", legacy(2, "resources/subscribe", map[string]any{"uri": "test://static-text"}), nil)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	assert.Equal(t, int64(-32600), r.Error.Code)
	// Subscribing to what the caller may not read is not found: here a
	// protected template without its scope.
	noScope := f.token(t, "alice", "other:scope")
	session := f.initialize(t, noScope)
	resp = f.post(t, noScope, session, legacy(3, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0001"}), nil)
	r = rpc{}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32002), r.Error.Code, "a caller without the scope cannot subscribe")
}

func TestModernListen(t *testing.T) {
	f := newNotifyFixture(t, 0)
	alice := f.token(t, "alice")
	uri := "docs://documents/alice-0001"
	body, hdr := modern(7, "subscriptions/listen", map[string]any{"notifications": map[string]any{
		"resourcesListChanged": true, "toolsListChanged": true,
		"resourceSubscriptions": []string{uri, "docs://documents/x", "test://nothing"}}})
	s := openStream(t, f.post(t, alice, "", body, hdr))
	defer s.close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
		"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["`+uri+`","docs://documents/x"]},
		"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t), "only what the server honours and the caller may read")
	waitSubscribers(t, f.hub, "alice", 1)
	ctx := context.Background()
	f.hub.ListChanged(ctx, "bob")
	f.hub.ListChanged(ctx, "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t))
	f.hub.ResourceUpdated(ctx, "alice", "docs://documents/alice-0009") // not asked for
	f.hub.ResourceUpdated(ctx, "alice", uri)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t))

	// Shutting the hub down completes the listen request, then ends the stream.
	f.hub.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t))
	<-s.done
}

func TestModernListenFilter(t *testing.T) {
	f := newNotifyFixture(t, 0)
	alice := f.token(t, "alice")
	body, hdr := modern(8, "subscriptions/listen", map[string]any{"notifications": map[string]any{}})
	s := openStream(t, f.post(t, alice, "", body, hdr))
	defer s.close()
	s.next(t) // the acknowledgement
	waitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	s.none(t) // not requested, not sent

	// Without a filter, the request is invalid; without the SSE media type, 406.
	body, hdr = modern(9, "subscriptions/listen", nil)
	resp := f.post(t, alice, "", body, hdr)
	assert.Equal(t, 200, resp.StatusCode)
	var r rpc
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	assert.Equal(t, int64(-32602), r.Error.Code)
	body, hdr = modern(10, "subscriptions/listen", map[string]any{"notifications": map[string]any{}})
	hdr["Accept"] = "application/json"
	resp = f.post(t, alice, "", body, hdr)
	assert.Equal(t, 406, resp.StatusCode)
	resp.Body.Close()
}

// TestStreamLifecycle: a client disconnecting mid-stream, and a slow
// consumer whose queue fills up, both end the server side of the stream.
func TestStreamLifecycle(t *testing.T) {
	f := newNotifyFixture(t, 2)
	alice := f.token(t, "alice")
	session := f.initialize(t, alice)

	s := openStream(t, f.get(t, alice, session))
	waitSubscribers(t, f.hub, "alice", 1)
	s.close() // the client goes away
	waitSubscribers(t, f.hub, "alice", 0)

	// A slow consumer: events arrive faster than the stream delivers them
	// (the client does not read), the queue (2) fills, and the server ends
	// the stream instead of buffering without bound.
	resp := f.get(t, alice, session)
	require.Equal(t, 200, resp.StatusCode)
	waitSubscribers(t, f.hub, "alice", 1)
	deadline := time.Now().Add(10 * time.Second)
	for f.hub.Subscribers("alice") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow stream was not ended")
		}
		f.hub.ListChanged(context.Background(), "alice")
	}
	resp.Body.Close()

	// A new GET on the same session replaces the previous stream: a message
	// is never sent on two streams.
	first := openStream(t, f.get(t, alice, session))
	waitSubscribers(t, f.hub, "alice", 1)
	second := openStream(t, f.get(t, alice, session))
	select {
	case <-first.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the first stream must end when the session opens another")
	}
	waitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	second.next(t)
	second.close()
}

// TestThousandStreams opens 1,000 concurrent streams of 100 principals on
// loopback, checks that a notification reaches exactly the streams of its
// principal, and reports the memory an idle stream costs.
func TestThousandStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	f := newNotifyFixture(t, 0)
	const principals, perPrincipal = 125, mcphttp.DefaultMaxStreamsPerPrincipal
	tokens := make([]string, principals)
	for i := range tokens {
		tokens[i] = f.token(t, fmt.Sprintf("user-%03d", i))
	}
	tr := &http.Transport{MaxIdleConnsPerHost: principals * perPrincipal, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	type open struct {
		subject string
		s       *stream
	}
	streams := make([]open, 0, principals*perPrincipal)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range principals {
		for range perPrincipal {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, hdr := modern(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
				req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+tokens[i])
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				s := openStream(t, resp)
				s.next(t) // acknowledged
				mu.Lock()
				streams = append(streams, open{fmt.Sprintf("user-%03d", i), s})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	require.Len(t, streams, principals*perPrincipal)
	for i := range principals {
		waitSubscribers(t, f.hub, fmt.Sprintf("user-%03d", i), perPrincipal)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	used := (after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse)
	t.Logf("%d idle streams: %.1f KiB per stream (server and client sides in one process)",
		len(streams), float64(used)/float64(len(streams))/1024)

	f.hub.ListChanged(context.Background(), "user-042")
	for _, o := range streams {
		if o.subject == "user-042" {
			assert.Contains(t, o.s.next(t), "list_changed")
		}
	}
	for _, o := range streams {
		select {
		case e := <-o.s.events:
			t.Fatalf("%s received %s", o.subject, e)
		default:
		}
		o.s.close()
	}
}

// TestStreamsEndWhenTheTokenExpires: a stream authorized by a token does
// not outlive it; the client reconnects with a fresh token.
func TestStreamsEndWhenTheTokenExpires(t *testing.T) {
	f := newNotifyFixture(t, 0)
	short := f.issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"},
		ExpiresAt: time.Now().Add(1500 * time.Millisecond)})
	session := f.initialize(t, short)
	legacyStream := openStream(t, f.get(t, short, session))
	body, hdr := modern(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
	modernStream := openStream(t, f.post(t, short, "", body, hdr))
	modernStream.next(t) // acknowledged
	for name, s := range map[string]*stream{"legacy": legacyStream, "modern": modernStream} {
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s stream outlived its token", name)
		}
	}
	waitSubscribers(t, f.hub, "alice", 0)
}

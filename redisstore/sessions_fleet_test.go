package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// node is one instance of a fleet: an endpoint with the sessions part,
// its hub on the Redis broker, its sessions in the Redis store, behind an
// HTTP server.
type node struct {
	srv *httptest.Server
	hub *notify.Hub
}

const (
	welcome = "notes://welcome"
	second  = "notes://second"
)

// newNodes starts n instances on one redis-server, with one issuer.
func newNodes(t *testing.T, redisSrv *redistest.Server, n int) (*testissuer.Issuer, []*node) {
	t.Helper()
	return newNodesAt(t, redisSrv.Addr(), n)
}

// newNodesAt starts n instances on the redis-server at addr (a cutProxy's,
// say), with one issuer.
func newNodesAt(t *testing.T, addr string, n int) (*testissuer.Issuer, []*node) {
	t.Helper()
	is := testissuer.Start(t, testissuer.Options{Audience: testResource})
	quiet := slog.New(slog.DiscardHandler)
	var out []*node
	for range n {
		client := redis.NewClient(redistest.ClientOptions(addr))
		t.Cleanup(func() { _ = client.Close() })
		v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: testResource, JWKSURL: is.JWKSURL()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = v.Close() })
		auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: testResource, Logger: quiet})
		require.NoError(t, err)
		inv, err := inventory.New([]inventory.Resource{{URI: welcome, Name: "welcome", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "Hello!")}, {URI: second, Name: "second", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "Hi again")}}, nil, inventory.Options{})
		require.NoError(t, err)
		broker, err := redisstore.NewBroker(client, redisstore.BrokerOptions{Logger: quiet, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		require.NoError(t, err)
		elog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
		require.NoError(t, err)
		hub := notify.New(notify.Options{Broker: broker, Log: elog, Logger: quiet})
		store, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
		require.NoError(t, err)
		part, err := sessions.New(hub, sessions.Options{Store: store, KeepAlive: time.Hour})
		require.NoError(t, err)
		ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth, Logger: quiet}, part)
		require.NoError(t, err)
		srv := httptest.NewServer(ep)
		t.Cleanup(func() { hub.Close(); srv.Close() })
		waitStats(t, broker, func(s redisstore.BrokerStats) bool { return s.Connects == 1 }, "not listening")
		out = append(out, &node{srv: srv, hub: hub})
	}
	return is, out
}

func (n *node) do(t *testing.T, method, token, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, n.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := n.srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

// call posts a legacy request and returns the status, the session header
// and the decoded error code (0 for none).
func (n *node) call(t *testing.T, token, session, method string, params map[string]any) (status int, minted string, code int64) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	resp := n.do(t, http.MethodPost, token, session, string(body))
	defer resp.Body.Close()
	var r struct {
		Error *struct{ Code int64 } `json:"error"`
	}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
		if r.Error != nil {
			code = r.Error.Code
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), code
}

func (n *node) initialize(t *testing.T, token string) string {
	t.Helper()
	status, id, _ := n.call(t, token, "", "initialize", map[string]any{"protocolVersion": "2025-11-25"})
	require.Equal(t, http.StatusOK, status)
	return id
}

// sseData returns a channel of the data lines of an SSE response.
func sseData(resp *http.Response) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" { // empty: a priming event
				ch <- d
			}
		}
	}()
	return ch
}

// sseEvent is one SSE message event: its id ("" for none) and data.
type sseEvent struct{ id, data string }

// sseEvents returns a channel of the message events of an SSE response.
func sseEvents(resp *http.Response) <-chan sseEvent {
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				e.id = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.data = v
			} else if line == "" {
				if e.data != "" { // a priming event (empty data) dispatches nothing
					ch <- e
				}
				e = sseEvent{}
			}
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case e, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("nothing on the stream")
	}
	return sseEvent{}
}

func nextData(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case d, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("nothing on the stream")
	}
	return ""
}

// Three instances sharing sessions, subscriptions and notifications in
// one Redis, as a load balancer without affinity spreads a client: a
// session minted by A works on B and C, bound to its principal; a
// subscription made through C reaches the stream open on B when the
// change lands on A; a DELETE through C ends the session everywhere.
func TestSessionsAcrossAFleet(t *testing.T) {
	srv, _ := startRedis(t)
	is, nodes := newNodes(t, srv, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	alice := is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1"})
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "client-1"})

	session := a.initialize(t, alice)
	require.NotEmpty(t, session, "a session, from the shared store")
	for _, n := range nodes {
		status, _, _ := n.call(t, alice, session, "ping", nil)
		assert.Equal(t, http.StatusOK, status)
		status, _, _ = n.call(t, bob, session, "ping", nil)
		assert.Equal(t, http.StatusNotFound, status, "bound to alice on every instance")
	}

	resp := b.do(t, http.MethodGet, alice, session, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	defer resp.Body.Close()
	events := sseData(resp)
	require.Eventually(t, func() bool { return b.hub.Subscribers("alice") == 1 }, 5*time.Second, time.Millisecond)

	status, _, code := c.call(t, alice, session, "resources/subscribe", map[string]any{"uri": welcome})
	require.Equal(t, http.StatusOK, status)
	require.Zero(t, code)
	a.hub.ResourceUpdated(context.Background(), "alice", welcome) // the change lands on A
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+welcome+`"}}`, nextData(t, events))

	del := c.do(t, http.MethodDelete, alice, session, "")
	del.Body.Close()
	assert.Equal(t, http.StatusNoContent, del.StatusCode)
	for _, n := range nodes {
		status, _, _ := n.call(t, alice, session, "ping", nil)
		assert.Equal(t, http.StatusNotFound, status, "ended everywhere")
	}
}

// Redis down: sessions degrade as the part documents — initialize is
// answered without a session, a GET stream is 503 with Retry-After, a
// subscribe is an internal error — and come back by themselves (a new
// session, on every instance) when Redis does.
func TestSessionsAcrossARedisRestart(t *testing.T) {
	srv, _ := startRedis(t)
	is, nodes := newNodes(t, srv, 2)
	a, b := nodes[0], nodes[1]
	alice := is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1"})
	session := a.initialize(t, alice)
	require.NotEmpty(t, session)

	srv.Stop()
	assert.Empty(t, a.initialize(t, alice), "initialize without a session")
	resp := b.do(t, http.MethodGet, alice, session, "")
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	status, _, code := b.call(t, alice, session, "resources/subscribe", map[string]any{"uri": welcome})
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, int64(-32603), code, "an internal error")
	status, _, _ = b.call(t, alice, session, "resources/list", nil)
	assert.Equal(t, http.StatusOK, status, "what needs no session is served")

	srv.Restart(t)
	var fresh string
	require.Eventually(t, func() bool { fresh = a.initialize(t, alice); return fresh != "" }, 10*time.Second, 20*time.Millisecond, "sessions come back")
	// B's store may still be in its outage gate for a moment (a request
	// naming a session is then served without one: 200): the forgotten
	// session answers 404 once B reaches Redis again.
	require.Eventually(t, func() bool { s, _, _ := b.call(t, alice, session, "ping", nil); return s == http.StatusNotFound }, 10*time.Second, 20*time.Millisecond,
		"the session Redis forgot is unknown: the client initializes again")
	status, _, _ = b.call(t, alice, fresh, "ping", nil)
	assert.Equal(t, http.StatusOK, status)
}

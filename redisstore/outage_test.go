package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// frame is one SSE event of a stream, or (end) the stream's end.
type frame struct {
	id, data, retry string
	end             bool
}

// sseFrames returns a channel of every SSE event of resp, priming events
// and retry fields included, then one frame with end set.
func sseFrames(resp *http.Response) <-chan frame {
	ch := make(chan frame, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var f frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				f.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				f.data = line[len("data: "):]
			case strings.HasPrefix(line, "retry: "):
				f.retry = line[len("retry: "):]
			case line == "":
				if f != (frame{}) {
					ch <- f
				}
				f = frame{}
			}
		}
		ch <- frame{end: true}
	}()
	return ch
}

// updatedURI returns the uri of a resources/updated message, or "".
func updatedURI(data string) string {
	var m struct {
		Method string
		Params struct{ URI string }
	}
	if json.Unmarshal([]byte(data), &m) != nil || m.Method != "notifications/resources/updated" {
		return ""
	}
	return m.Params.URI
}

// listenBody is a modern subscriptions/listen request for updates of uris.
func listenBody(uris ...string) (string, map[string]string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": uris},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
		}}})
	return string(b), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
}

// Redis out of reach of every instance (its network, say: connections
// cut, new ones refused) while bob's streams are open on a healthy
// instance (B), and two edits land on another (A): nothing is lost
// without a sign. The legacy GET stream gets both updates with event ids
// (A records and sends them again when Redis is back; B's listener
// catches up from the log), or is ended with a retry field, and then
// resuming with Last-Event-ID gives what it missed; the
// subscriptions/listen stream gets both updates, live or in a start-over.
// Before the change: 0 of 2 on both streams. (A Redis that comes back
// from a snapshot instead has lost data, and says so: see
// TestStreamsAcrossARedisRestart.)
func TestStreamsAcrossARedisOutage(t *testing.T) {
	srv, _ := startRedis(t)
	proxy := newCutProxy(t, srv.Addr())
	is, nodes := newNodesAt(t, proxy.ln.Addr().String(), 2)
	a, b := nodes[0], nodes[1]
	ctx := context.Background()
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "client-1"})
	session := b.initialize(t, bob)
	require.NotEmpty(t, session)
	for _, u := range []string{welcome, second} {
		status, _, code := b.call(t, bob, session, "resources/subscribe", map[string]any{"uri": u})
		require.Equal(t, http.StatusOK, status)
		require.Zero(t, code)
	}
	get := b.do(t, http.MethodGet, bob, session, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	defer get.Body.Close()
	legacy := sseFrames(get)

	body, hdr := listenBody(welcome, second)
	req, err := http.NewRequest(http.MethodPost, b.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bob)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	lresp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer lresp.Body.Close()
	require.Equal(t, http.StatusOK, lresp.StatusCode)
	modern := sseFrames(lresp)
	require.Eventually(t, func() bool { return b.hub.Subscribers("bob") == 2 }, 5*time.Second, time.Millisecond)

	proxy.cut(true)
	a.hub.ResourceUpdated(ctx, "bob", welcome) // the edits, during the outage
	a.hub.ResourceUpdated(ctx, "bob", second)
	proxy.cut(false)

	// The legacy stream: each update with an id, or the stream ends with
	// a retry field and the client resumes.
	got := map[string]bool{}
	last := ""
	deadline := time.After(20 * time.Second)
	for len(got) < 2 {
		select {
		case f := <-legacy:
			switch {
			case f.end:
				require.NotEmpty(t, last, "the stream had an id to resume from")
				resume := resumeGET(t, b, bob, session, last)
				defer resume.Body.Close()
				legacy = sseFrames(resume)
			case f.retry != "":
				last = lastOr(last, f.id) // the server closes the stream next
			case f.data == "":
				last = lastOr(last, f.id) // a priming event
			default:
				if u := updatedURI(f.data); u != "" {
					got[u] = true
				}
				last = lastOr(last, f.id)
			}
		case <-deadline:
			t.Fatalf("legacy stream: %d of 2 updates, and not ended", len(got))
		}
	}
	assert.Equal(t, map[string]bool{welcome: true, second: true}, got)

	// The listen stream: both updates.
	got = map[string]bool{}
	for len(got) < 2 {
		select {
		case f := <-modern:
			require.False(t, f.end, "the listen stream ended: %d of 2", len(got))
			if u := updatedURI(f.data); u != "" {
				got[u] = true
			}
		case <-deadline:
			t.Fatalf("listen stream: %d of 2 updates", len(got))
		}
	}
}

// Redis restarted from a snapshot taken before two edits (SAVE, kill,
// the edits on A during the outage, restart from the dump) while bob's
// streams are open on B: that Redis may have lost data (here it lost
// what followed the snapshot), so the stores do not trust what it holds
// (see the package documentation, "A Redis that may have lost data"):
// bob's session is forgotten. Nothing is lost without a sign: the legacy
// GET stream gets both updates, or ends with a retry field and the
// resume answers 404 (the client initializes again); the listen stream
// gets both updates or ends. Before the stores distrusted such a Redis
// the resume was answered 200, on a session the snapshot brought back.
func TestStreamsAcrossARedisRestart(t *testing.T) {
	srv, client := startRedis(t)
	is, nodes := newNodes(t, srv, 2)
	a, b := nodes[0], nodes[1]
	ctx := context.Background()
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "client-1"})
	session := b.initialize(t, bob)
	require.NotEmpty(t, session)
	for _, u := range []string{welcome, second} {
		status, _, code := b.call(t, bob, session, "resources/subscribe", map[string]any{"uri": u})
		require.Equal(t, http.StatusOK, status)
		require.Zero(t, code)
	}
	get := b.do(t, http.MethodGet, bob, session, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	defer get.Body.Close()
	legacy := sseFrames(get)
	body, hdr := listenBody(welcome, second)
	req, err := http.NewRequest(http.MethodPost, b.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bob)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	lresp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer lresp.Body.Close()
	require.Equal(t, http.StatusOK, lresp.StatusCode)
	modern := sseFrames(lresp)
	require.Eventually(t, func() bool { return b.hub.Subscribers("bob") == 2 }, 5*time.Second, time.Millisecond)

	require.NoError(t, client.Save(ctx).Err())
	srv.Stop()
	a.hub.ResourceUpdated(ctx, "bob", welcome)
	a.hub.ResourceUpdated(ctx, "bob", second)
	srv.Restart(t)

	got := map[string]bool{}
	last, ended := "", false
	deadline := time.After(20 * time.Second)
	for len(got) < 2 && !ended {
		select {
		case f := <-legacy:
			last = lastOr(last, f.id)
			if u := updatedURI(f.data); u != "" {
				got[u] = true
			}
			ended = f.end
		case <-deadline:
			t.Fatalf("legacy stream: %d of 2 updates, and not ended", len(got))
		}
	}
	if ended {
		require.NotEmpty(t, last, "the stream had an id to resume from")
		req, err := http.NewRequest(http.MethodGet, b.srv.URL, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+bob)
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Last-Event-ID", last)
		resp, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the session is forgotten: the client initializes again")
	}
	t.Logf("legacy stream: %d of 2 updates, ended %v", len(got), ended)

	got, ended = map[string]bool{}, false
	for len(got) < 2 && !ended {
		select {
		case f := <-modern:
			if u := updatedURI(f.data); u != "" {
				got[u] = true
			}
			ended = f.end
		case <-deadline:
			t.Fatalf("listen stream: %d of 2 updates, and not ended", len(got))
		}
	}
	t.Logf("listen stream: %d of 2 updates, ended %v", len(got), ended)
}

func lastOr(last, id string) string {
	if id != "" {
		return id
	}
	return last
}

// resumeGET opens session's GET stream again with Last-Event-ID.
func resumeGET(t *testing.T, n *node, token, session, last string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, n.srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Last-Event-ID", last)
	resp, err := n.srv.Client().Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp
}

// Redis comes back empty while bob's GET stream is open on B (a restart
// without persistence, FLUSHALL, a replica promoted before it synced):
// his session is gone, and the stream is ended with a retry field within
// moments (B's listener cannot catch bob up: the log forgot the stream's
// start), not left open and silent; the client, resuming, learns that its
// session is gone (404) and initializes again. Before the change the
// stream stayed open until its next refresh (a quarter of the session's
// idle time).
func TestStreamEndsWhenRedisLosesItsSession(t *testing.T) {
	srv, _ := startRedis(t)
	is, nodes := newNodes(t, srv, 2)
	b := nodes[1]
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "client-1"})
	session := b.initialize(t, bob)
	require.NotEmpty(t, session)
	get := b.do(t, http.MethodGet, bob, session, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	defer get.Body.Close()
	frames := sseFrames(get)
	require.Eventually(t, func() bool { return b.hub.Subscribers("bob") == 1 }, 5*time.Second, time.Millisecond)

	srv.Stop()
	srv.Restart(t) // empty
	last, retried := "", false
	deadline := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case f := <-frames:
			last = lastOr(last, f.id)
			retried = retried || f.retry != ""
			done = f.end
		case <-deadline:
			t.Fatal("the stream of a session Redis lost is still open")
		}
	}
	assert.True(t, retried, "ended with a retry field")
	req, err := http.NewRequest(http.MethodGet, b.srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Last-Event-ID", last)
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the session is unknown: the client initializes again")
}

// cutProxy forwards loopback TCP connections to a Redis, and can cut an
// instance off from it (existing connections closed, new ones refused)
// and let it back.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); p.cut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	return p
}

// cut closes every connection and refuses new ones while down.
func (p *cutProxy) cut(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
	}
}

// One instance of a fleet cut off from Redis (its network, say) while the
// others are fine: the edits made on it reach the streams open on
// another instance, with their ids, once it reaches Redis again. Before
// the change: 0 of 2.
func TestAnInstanceThatCannotPublish(t *testing.T) {
	srv, client := startRedis(t)
	proxy := newCutProxy(t, srv.Addr())
	ctx := context.Background()
	aClient := redis.NewClient(redistest.ClientOptions(proxy.ln.Addr().String()))
	t.Cleanup(func() { _ = aClient.Close() })
	aLog, err := redisstore.NewEventLog(aClient, redisstore.EventLogOptions{})
	require.NoError(t, err)
	bLog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	require.NoError(t, err)
	a := newInstance(t, aClient, redisstore.BrokerOptions{Log: aLog, MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	b := newInstance(t, client, redisstore.BrokerOptions{Log: bLog})
	_, err = b.hub.Mark(ctx, "bob") // as bob's stream opens on B
	require.NoError(t, err)
	bob := b.hub.Subscribe("bob")
	defer bob.Close()

	proxy.cut(true)
	a.hub.ResourceUpdated(ctx, "bob", "docs://documents/one")
	a.hub.ResourceUpdated(ctx, "bob", "docs://documents/two")
	select {
	case e := <-bob.Events():
		t.Fatalf("delivered while A is cut off: %+v", e)
	case <-time.After(100 * time.Millisecond):
	}
	proxy.cut(false)
	for _, u := range []string{"one", "two"} {
		select {
		case e := <-bob.Events():
			assert.True(t, notify.ValidID(e.ID), "with an id")
			e.ID = ""
			assert.Equal(t, updated("bob", "docs://documents/"+u), e)
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: never delivered", u)
		}
	}
}

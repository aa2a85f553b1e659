package sessions_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

func TestLegacySessionStream(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	session := f.initialize(t, alice)
	s := openStream(t, f.Get(t, alice, session, nil))
	defer s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	ctx := context.Background()

	f.Hub.ListChanged(ctx, "bob") // another principal's change: never delivered here
	f.Hub.ListChanged(ctx, "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, s.Next(t))

	uri := "docs://documents/alice-0001"
	resp := f.Post(t, alice, session, mcptest.Legacy(2, "resources/subscribe", map[string]any{"uri": uri}), nil)
	require.Equal(t, 200, resp.StatusCode)
	assert.JSONEq(t, `{}`, string(decodeResp(t, resp).Result))
	f.Hub.ResourceUpdated(ctx, "alice", "docs://documents/alice-0002") // not subscribed
	f.Hub.ResourceUpdated(ctx, "alice", uri)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`, s.Next(t))

	resp = f.Post(t, alice, session, mcptest.Legacy(3, "resources/unsubscribe", map[string]any{"uri": uri}), nil)
	resp.Body.Close()
	f.Hub.ResourceUpdated(ctx, "alice", uri)
	s.None(t)

	// A19-style reuse: bob's token on alice's session is not found, on
	// POST, GET and DELETE alike.
	assert.Equal(t, 404, status(f.Post(t, bob, session, mcptest.Legacy(4, "ping", nil), nil)))
	assert.Equal(t, 404, status(f.Get(t, bob, session, nil)))
	assert.Equal(t, 404, status(f.del(t, bob, session)))
	resp = f.Get(t, "", session, nil)
	assert.Equal(t, 401, resp.StatusCode, "nor anonymously: streams need a principal")
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata=")
	resp.Body.Close()

	// DELETE ends the session and its stream.
	resp = f.del(t, alice, session)
	assert.Equal(t, http.StatusNoContent, status(resp))
	assert.Equal(t, "private, max-age=0", resp.Header.Get("Cache-Control"))
	ended(t, s, "the stream must end with its session")
	assert.Equal(t, 404, status(f.Post(t, alice, session, mcptest.Legacy(5, "ping", nil), nil)))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
}

func TestSessionRules(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := f.Token(t, "alice")
	// Sessions are optional: requests without one are served statelessly.
	assert.Equal(t, 200, status(f.Post(t, alice, "", mcptest.Legacy(1, "resources/list", nil), nil)))
	// resources/subscribe needs one.
	r := decodeResp(t, f.Post(t, alice, "", mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": "test://static-text"}), nil))
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32600), r.Error.Code)
	// Unknown sessions are 404; GET without a session is 400.
	assert.Equal(t, 404, status(f.Post(t, alice, "no-such-session", mcptest.Legacy(1, "ping", nil), nil)))
	assert.Equal(t, 400, status(f.Get(t, alice, "", nil)))
	assert.Equal(t, 400, status(f.del(t, alice, "")), "nor DELETE")
	// An anonymous initialize is answered without a session (nothing
	// could be delivered to nobody), so anonymous callers cannot subscribe.
	resp := f.Post(t, "", "", mcptest.Legacy(1, "initialize", nil), nil)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	r = decodeResp(t, resp)
	assert.Contains(t, string(r.Result), `"subscribe":false,"listChanged":false`, "no notifications without a session")
	r = decodeResp(t, f.Post(t, "", "", mcptest.Legacy(2, "resources/subscribe", map[string]any{"uri": "test://static-text"}), nil))
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32600), r.Error.Code)
	// Subscribing to what the caller may not read is not found: here a
	// protected template without its scope.
	noScope := f.Token(t, "alice", "other:scope")
	session := f.initialize(t, noScope)
	r = decodeResp(t, f.Post(t, noScope, session, mcptest.Legacy(3, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0001"}), nil))
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32002), r.Error.Code, "a caller without the scope cannot subscribe")
}

// A session that is not found is answered before anything else, as
// before: for a subscribe whose params or URI would be refused too, and
// for a notification (404 as well, never 202).
func TestSessionIsCheckedFirst(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	session := f.initialize(t, alice)
	for name, tc := range map[string]struct {
		token, session, body string
		status               int
		code                 int64
	}{
		"subscribe, bad params, foreign session": {bob, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": 5}), 404, -32600},
		"subscribe, bad params, own session":     {alice, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": 5}), 200, -32602},
		"subscribe, no uri, unknown session":     {alice, "nope", mcptest.Legacy(1, "resources/subscribe", map[string]any{}), 404, -32600},
		"subscribe, unreadable, foreign session": {bob, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": "test://nothing"}), 404, -32600},
		"subscribe, unreadable, own session":     {alice, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": "test://nothing"}), 200, -32002},
		"unsubscribe, foreign session":           {bob, session, mcptest.Legacy(1, "resources/unsubscribe", map[string]any{"uri": "test://static-text"}), 404, -32600},
		"subscribe, anonymous, a session":        {"", session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": "test://static-text"}), 404, -32600},
		"an unknown method, foreign session":     {bob, session, mcptest.Legacy(1, "no/such/method", nil), 404, -32600},
		"an unknown method, own session":         {alice, session, mcptest.Legacy(1, "no/such/method", nil), 200, -32601},
	} {
		t.Run(name, func(t *testing.T) {
			resp := f.Post(t, tc.token, tc.session, tc.body, nil)
			require.Equal(t, tc.status, resp.StatusCode)
			r := decodeResp(t, resp)
			require.NotNil(t, r.Error)
			assert.Equal(t, tc.code, r.Error.Code)
		})
	}
	for name, tc := range map[string]struct {
		token, session string
		status         int
	}{
		"own session":     {alice, session, 202},
		"no session":      {bob, "", 202},
		"foreign session": {bob, session, 404},
		"unknown session": {alice, "nope", 404},
		"anonymous":       {"", session, 404},
	} {
		t.Run("notification, "+name, func(t *testing.T) {
			resp := f.Post(t, tc.token, tc.session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			assert.Equal(t, tc.status, status(resp))
		})
	}
	// A modern request never looks at Mcp-Session-Id.
	body, hdr := mcptest.Modern(1, "server/discover", nil)
	hdr["Mcp-Session-Id"] = "ignored"
	assert.Equal(t, 200, status(f.Post(t, "", "", body, hdr)))
	// Nor does initialize: it mints a new session whatever the header says.
	resp := f.Post(t, bob, session, mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	assert.Equal(t, 200, status(resp))
	assert.NotEqual(t, session, resp.Header.Get("Mcp-Session-Id"))
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
}

func TestModernListen(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := f.Token(t, "alice")
	uri := "docs://documents/alice-0001"
	body, hdr := mcptest.Modern(7, "subscriptions/listen", map[string]any{"notifications": map[string]any{
		"resourcesListChanged": true, "toolsListChanged": true,
		"resourceSubscriptions": []string{uri, "docs://documents/x", "test://nothing", uri}}})
	s := openStream(t, f.Post(t, alice, "", body, hdr))
	defer s.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
		"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["`+uri+`","docs://documents/x"]},
		"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.Next(t), "only what the server honours and the caller may read")
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	ctx := context.Background()
	f.Hub.ListChanged(ctx, "bob")
	f.Hub.ListChanged(ctx, "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.Next(t))
	f.Hub.ResourceUpdated(ctx, "alice", "docs://documents/alice-0009") // not asked for
	f.Hub.ResourceUpdated(ctx, "alice", uri)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.Next(t))

	// Shutting the hub down completes the listen request, then ends the stream.
	f.Hub.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.Next(t))
	<-s.Done()
}

func TestModernListenFilter(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := f.Token(t, "alice")
	body, hdr := mcptest.Modern(8, "subscriptions/listen", map[string]any{"notifications": map[string]any{}})
	s := openStream(t, f.Post(t, alice, "", body, hdr))
	defer s.Close()
	s.Next(t) // the acknowledgement
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.Hub.ListChanged(context.Background(), "alice")
	s.None(t) // not requested, not sent

	// Without a filter, the request is invalid; without the SSE media type, 406.
	body, hdr = mcptest.Modern(9, "subscriptions/listen", nil)
	resp := f.Post(t, alice, "", body, hdr)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, int64(-32602), decodeResp(t, resp).Error.Code)
	body, hdr = mcptest.Modern(10, "subscriptions/listen", map[string]any{"notifications": map[string]any{}})
	hdr["Accept"] = "application/json"
	assert.Equal(t, 406, status(f.Post(t, alice, "", body, hdr)))
	// A filter that does not fit, and too many URIs, are invalid params.
	for _, n := range []map[string]any{
		{"resourcesListChanged": "yes"},
		{"resourceSubscriptions": make([]string, 101)},
	} {
		body, hdr = mcptest.Modern(11, "subscriptions/listen", map[string]any{"notifications": n})
		resp = f.Post(t, alice, "", body, hdr)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, int64(-32602), decodeResp(t, resp).Error.Code)
	}
	// Legacy clients have no listen, modern ones no subscribe and no GET.
	assert.Equal(t, int64(-32601), decodeResp(t, f.Post(t, alice, "", mcptest.Legacy(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}), nil)).Error.Code)
	body, hdr = mcptest.Modern(12, "resources/subscribe", map[string]any{"uri": "test://static-text"})
	resp = f.Post(t, alice, "", body, hdr)
	assert.Equal(t, 404, resp.StatusCode)
	assert.Equal(t, int64(-32601), decodeResp(t, resp).Error.Code)
	// Refused listens hold no stream: alice's whole share is still hers.
	for range sessions.DefaultMaxStreamsPerPrincipal - 1 {
		o := openStream(t, f.listen(t, alice))
		o.Next(t)
		defer o.Close()
	}
}

// TestStreamLifecycle: a client disconnecting mid-stream, and a slow
// consumer whose queue fills up, both end the server side of the stream.
func TestStreamLifecycle(t *testing.T) {
	f := newFixture(t, fixtureOptions{queue: 2})
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)

	s := openStream(t, f.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	s.Close() // the client goes away
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)

	// A slow consumer: events arrive faster than the stream delivers them
	// (the client does not read), the queue (2) fills, and the server ends
	// the stream instead of buffering without bound.
	resp := f.Get(t, alice, session, nil)
	require.Equal(t, 200, resp.StatusCode)
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	deadline := time.Now().Add(10 * time.Second)
	for f.Hub.Subscribers("alice") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow stream was not ended")
		}
		f.Hub.ListChanged(context.Background(), "alice")
	}
	resp.Body.Close()

	// A new GET on the same session replaces the previous stream: a message
	// is never sent on two streams.
	first := openStream(t, f.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	second := openStream(t, f.Get(t, alice, session, nil))
	ended(t, first, "the first stream must end when the session opens another")
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.Hub.ListChanged(context.Background(), "alice")
	second.Next(t)
	// A GET refused for another caller ends no stream of the session.
	assert.Equal(t, 404, status(f.Get(t, f.Token(t, "bob"), session, nil)))
	f.Hub.ListChanged(context.Background(), "alice")
	second.Next(t)
	second.Close()
}

// TestThousandStreams opens 1,000 concurrent streams of 125 principals on
// loopback, checks that a notification reaches exactly the streams of its
// principal, and reports the memory an idle stream costs.
func TestThousandStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	f := newFixture(t, fixtureOptions{})
	const principals, perPrincipal = 125, sessions.DefaultMaxStreamsPerPrincipal
	streams, perStream := openIdleStreams(t, f, principals, perPrincipal)
	t.Logf("%d idle streams: %.1f KiB per stream (server and client sides in one process)", len(streams), perStream/1024)

	f.Hub.ListChanged(context.Background(), "user-042")
	for _, o := range streams {
		if o.subject == "user-042" {
			assert.Contains(t, o.s.Next(t), "list_changed")
		}
	}
	for _, o := range streams {
		if e, ok := o.s.TryNext(); ok {
			t.Fatalf("%s received %s", o.subject, e.Data)
		}
		o.s.Close()
	}
}

type openedStream struct {
	subject string
	s       *mcptest.Stream
}

// openIdleStreams opens perPrincipal listen streams for each of
// principals callers and returns them with the heap and stack they added,
// per stream, once all are idle.
func openIdleStreams(t testing.TB, f *fixture, principals, perPrincipal int) ([]openedStream, float64) {
	t.Helper()
	tokens := make([]string, principals)
	for i := range tokens {
		tokens[i] = f.Token(t, fmt.Sprintf("user-%03d", i))
	}
	tr := &http.Transport{MaxIdleConnsPerHost: principals * perPrincipal}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	streams := make([]openedStream, 0, principals*perPrincipal)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range principals {
		for range perPrincipal {
			wg.Go(func() {
				body, hdr := listenBody(1)
				req, _ := http.NewRequest(http.MethodPost, f.Srv.URL, strings.NewReader(body))
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
				s := mcptest.OpenStream(t, resp)
				s.Next(t) // acknowledged
				mu.Lock()
				streams = append(streams, openedStream{fmt.Sprintf("user-%03d", i), s})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	require.Len(t, streams, principals*perPrincipal)
	for i := range principals {
		mcptest.WaitSubscribers(t, f.Hub, fmt.Sprintf("user-%03d", i), perPrincipal)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	used := (after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse)
	return streams, float64(used) / float64(len(streams))
}

// TestStreamsEndWhenTheTokenExpires: a stream authorized by a token does
// not outlive it; the client reconnects with a fresh token.
func TestStreamsEndWhenTheTokenExpires(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	short := f.Issuer.Token(t, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"},
		ExpiresAt: time.Now().Add(1500 * time.Millisecond)})
	session := f.initialize(t, short)
	legacyStream := openStream(t, f.Get(t, short, session, nil))
	body, hdr := listenBody(3)
	modernStream := openStream(t, f.Post(t, short, "", body, hdr))
	modernStream.Next(t) // acknowledged
	for name, s := range map[string]*mcptest.Stream{"legacy": legacyStream, "modern": modernStream} {
		ended(t, s, "the "+name+" stream outlived its token")
	}
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
}

// An open GET stream keeps its session from idling out, however long the
// session has no request; once the stream is closed, the session idles
// out.
func TestAnOpenStreamKeepsItsSession(t *testing.T) {
	const idle = time.Second
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{IdleTimeout: idle}})
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	s := openStream(t, f.Get(t, alice, session, nil))
	time.Sleep(3 * idle)
	assert.Equal(t, 200, status(f.Post(t, alice, session, mcptest.Legacy(1, "ping", nil), nil)), "alive with its stream")
	time.Sleep(3 * idle)
	s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 0)
	assert.Equal(t, 200, status(f.Post(t, alice, session, mcptest.Legacy(2, "ping", nil), nil)), "alive right after its stream")
	time.Sleep(2 * idle) // no request, no stream
	assert.Equal(t, 404, status(f.Post(t, alice, session, mcptest.Legacy(3, "ping", nil), nil)), "idled out")
}

// An update reaches a stream only while its caller may read the resource:
// a subscription made while a grant held delivers nothing once the grant
// is revoked, on legacy and modern streams alike.
func TestUpdatesFollowAccess(t *testing.T) {
	hub := notify.New(notify.Options{})
	base := mcptest.New(t, mcptest.Options{})
	inv, err := inventory.New([]inventory.Resource{{
		URI: "docs://beta", Name: "beta", Access: inventory.Public, Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta"),
	}}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}, Notifier: hub})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: base.Auth}, newPart(t, hub))
	require.NoError(t, err)
	fx := *base
	fx.EP = ep
	f := &fixture{Server: fx.Serve(t, ep, hub)}
	ctx := context.Background()
	_, err = inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	require.Nil(t, decodeResp(t, f.Post(t, alice, session, mcptest.Legacy(2, "resources/subscribe", map[string]any{"uri": "docs://beta"}), nil)).Error)
	legacyStream := openStream(t, f.Get(t, alice, session, nil))
	defer legacyStream.Close()
	body, hdr := mcptest.Modern(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"docs://beta"}}})
	modernStream := openStream(t, f.Post(t, alice, "", body, hdr))
	defer modernStream.Close()
	assert.Contains(t, modernStream.Next(t), `"resourceSubscriptions":["docs://beta"]`)
	mcptest.WaitSubscribers(t, hub, "alice", 2)

	hub.ResourceUpdated(ctx, "alice", "docs://beta")
	assert.Contains(t, legacyStream.Next(t), "notifications/resources/updated")
	assert.Contains(t, modernStream.Next(t), "notifications/resources/updated")
	_, err = inv.Revoke(ctx, "alice", "beta")
	require.NoError(t, err)
	legacyStream.Next(t) // the revocation's list_changed
	hub.ResourceUpdated(ctx, "alice", "docs://beta")
	legacyStream.None(t)
	modernStream.None(t)
	_, err = inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	legacyStream.Next(t)
	hub.ResourceUpdated(ctx, "alice", "docs://beta")
	assert.Contains(t, legacyStream.Next(t), "notifications/resources/updated")
	assert.Contains(t, modernStream.Next(t), "notifications/resources/updated")
}

// Open streams, modern and legacy, get keep-alive comments from the
// part's wheel, each stream its own.
func TestStreamsKeepAlive(t *testing.T) {
	f := newFixture(t, fixtureOptions{keepAlive: 40 * time.Millisecond})
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	for name, resp := range map[string]*http.Response{"legacy GET": f.Get(t, alice, session, nil), "listen": f.listen(t, alice)} {
		require.Equal(t, 200, resp.StatusCode, name)
		r := bufio.NewReader(resp.Body)
		done := make(chan error, 1)
		go func() {
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					done <- err
					return
				}
				if line == ": keep-alive\n" {
					done <- nil
					return
				}
			}
		}()
		select {
		case err := <-done:
			require.NoError(t, err, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no keep-alive", name)
		}
		resp.Body.Close()
	}
}

package mcphttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

// detachFixture serves the fixture's inventory with notifications on a
// server of the test's choosing, counting hijacked connections.
type detachFixture struct {
	*fixture
	hub      *notify.Hub
	ep       *mcphttp.Endpoint
	srv      *httptest.Server
	hijacked atomic.Int32
}

func newDetachFixture(t *testing.T, http2 bool) *detachFixture {
	t.Helper()
	f := &detachFixture{fixture: newFixture(t, fixtureOptions{}), hub: notify.New(notify.Options{})}
	ep, err := mcphttp.New(f.inv, mcphttp.Options{Authenticator: f.auth, Notifications: f.hub, KeepAlive: time.Hour})
	require.NoError(t, err)
	f.ep = ep
	f.srv = httptest.NewUnstartedServer(ep)
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateHijacked {
			f.hijacked.Add(1)
		}
	}
	if http2 {
		f.srv.EnableHTTP2 = true
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(func() { f.hub.Close(); f.srv.Close() })
	return f
}

func (f *detachFixture) listen(t *testing.T, id int) *stream {
	t.Helper()
	body, hdr := modern(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
	req, err := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.token(t, "alice"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	s := openStream(t, resp)
	assert.Contains(t, s.next(t), "notifications/subscriptions/acknowledged")
	return s
}

// On HTTP/1.1 a stream detaches from its handler (the connection is
// hijacked) and goes on: notifications arrive, the client closing the
// stream ends the subscription, and WaitStreams sees it end.
func TestStreamsDetachOnHTTP1(t *testing.T) {
	f := newDetachFixture(t, false)
	s := f.listen(t, 1)
	require.Eventually(t, func() bool { return f.hijacked.Load() == 1 }, 5*time.Second, time.Millisecond, "the stream's connection is taken over")
	waitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.next(t), "notifications/resources/list_changed")
	assert.Equal(t, 1, s.resp.ProtoMajor)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, f.ep.WaitStreams(ctx), context.DeadlineExceeded, "the stream is open")
	s.close()
	waitSubscribers(t, f.hub, "alice", 0)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.NoError(t, f.ep.WaitStreams(ctx))
}

// Over HTTP/2 (no hijacking) the stream stays in its handler and works
// as before, completion on shutdown included.
func TestStreamsStayInTheHandlerOnHTTP2(t *testing.T) {
	f := newDetachFixture(t, true)
	s := f.listen(t, 2)
	assert.Equal(t, 2, s.resp.ProtoMajor)
	waitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.next(t), "notifications/resources/list_changed")
	f.hub.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`, s.next(t))
	<-s.done
	assert.Zero(t, f.hijacked.Load())
}

// The documented shutdown: the hub's Close on the server's Shutdown, then
// WaitStreams: the modern streams are completed before it returns.
func TestShutdownCompletesDetachedStreams(t *testing.T) {
	f := newDetachFixture(t, false)
	streams := []*stream{f.listen(t, 3), f.listen(t, 4)}
	waitSubscribers(t, f.hub, "alice", 2)
	f.srv.Config.RegisterOnShutdown(f.hub.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, f.srv.Config.Shutdown(ctx))
	require.NoError(t, f.ep.WaitStreams(ctx))
	for i, s := range streams {
		assert.Contains(t, s.next(t), `"resultType":"complete"`, "stream %d", i)
		<-s.done // the stream ended
	}
}

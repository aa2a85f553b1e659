package sessions_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// detachFixture serves mcptest's endpoint with the sessions part on a
// server of the test's choosing, counting hijacked connections.
type detachFixture struct {
	*mcptest.Fixture
	hub      *notify.Hub
	part     *sessions.Part
	srv      *httptest.Server
	hijacked atomic.Int32
}

func newDetachFixture(t *testing.T, http2 bool) *detachFixture {
	t.Helper()
	return newWrappedDetachFixture(t, http2, nil)
}

// newWrappedDetachFixture serves the endpoint behind wrap (a user's
// middleware), nil for none.
func newWrappedDetachFixture(t *testing.T, http2 bool, wrap func(http.Handler) http.Handler) *detachFixture {
	t.Helper()
	f := &detachFixture{hub: notify.New(notify.Options{})}
	var err error
	f.part, err = sessions.New(f.hub, sessions.Options{KeepAlive: time.Hour})
	require.NoError(t, err)
	f.Fixture = mcptest.New(t, mcptest.Options{}, f.part)
	var h http.Handler = f.EP
	if wrap != nil {
		h = wrap(h)
	}
	f.srv = httptest.NewUnstartedServer(h)
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

func (f *detachFixture) listen(t *testing.T, id int) *mcptest.Stream {
	t.Helper()
	body, hdr := listenBody(id)
	req, err := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.Token(t, "alice"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	s := openStream(t, resp)
	assert.Contains(t, s.Next(t), "notifications/subscriptions/acknowledged")
	return s
}

// On HTTP/1.1 a stream detaches from its handler (the connection is
// hijacked) and goes on: notifications arrive, the client closing the
// stream ends the subscription, and Wait sees it end.
func TestStreamsDetachOnHTTP1(t *testing.T) {
	f := newDetachFixture(t, false)
	s := f.listen(t, 1)
	require.Eventually(t, func() bool { return f.hijacked.Load() == 1 }, 5*time.Second, time.Millisecond, "the stream's connection is taken over")
	mcptest.WaitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.Next(t), "notifications/resources/list_changed")
	assert.Equal(t, 1, s.Resp.ProtoMajor)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, f.part.Wait(ctx), context.DeadlineExceeded, "the stream is open")
	s.Close()
	mcptest.WaitSubscribers(t, f.hub, "alice", 0)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.NoError(t, f.part.Wait(ctx))
}

// Over HTTP/2 (no hijacking) the stream stays in its handler and works
// as before, completion on shutdown included.
func TestStreamsStayInTheHandlerOnHTTP2(t *testing.T) {
	f := newDetachFixture(t, true)
	s := f.listen(t, 2)
	assert.Equal(t, 2, s.Resp.ProtoMajor)
	mcptest.WaitSubscribers(t, f.hub, "alice", 1)
	f.hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.Next(t), "notifications/resources/list_changed")
	f.hub.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`, s.Next(t))
	<-s.Done()
	assert.Zero(t, f.hijacked.Load())
}

// The documented shutdown: the hub's Close on the server's Shutdown, then
// Wait: the modern streams are completed before it returns.
func TestShutdownCompletesDetachedStreams(t *testing.T) {
	f := newDetachFixture(t, false)
	streams := []*mcptest.Stream{f.listen(t, 3), f.listen(t, 4)}
	mcptest.WaitSubscribers(t, f.hub, "alice", 2)
	f.srv.Config.RegisterOnShutdown(f.hub.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, f.srv.Config.Shutdown(ctx))
	require.NoError(t, f.part.Wait(ctx))
	for i, s := range streams {
		assert.Contains(t, s.Next(t), `"resultType":"complete"`, "stream %d", i)
		<-s.Done() // the stream ended
	}
}

// gzipWriter is a user's compressing middleware's ResponseWriter: what
// the handler writes goes through gzip (Flush flushes it), reachable by
// http.ResponseController through Unwrap.
type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (w *gzipWriter) WriteHeader(code int) {
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(code)
}

func (w *gzipWriter) Write(b []byte) (int, error) { return w.gz.Write(b) }

func (w *gzipWriter) Flush() {
	_ = w.gz.Flush()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// hijackingGzipWriter is gzipWriter with a Hijack of its own, forwarded
// to the writer it wraps, as common gzip middleware does.
type hijackingGzipWriter struct{ *gzipWriter }

func (w hijackingGzipWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func gzipMiddleware(hijack bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				next.ServeHTTP(w, r)
				return
			}
			gw := &gzipWriter{ResponseWriter: w, gz: gzip.NewWriter(w)}
			defer func() { _ = gw.gz.Close() }()
			if hijack {
				next.ServeHTTP(hijackingGzipWriter{gw}, r)
				return
			}
			next.ServeHTTP(gw, r)
		})
	}
}

// countingWriter is a logging middleware's ResponseWriter: it passes the
// bytes through as they are, and lets ResponseController reach the
// writer it wraps.
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += n
	return n, err
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A stream detaches only when what it writes to the connection is what
// the client reads: a middleware that encodes the body (Content-Encoding)
// would otherwise see the rest of the stream bypass it, and the client
// would decode raw chunks as gzip. Behind such a middleware the stream
// stays in its handler and goes on arriving intact; behind one that
// passes bytes through, it still detaches.
func TestStreamsDetachOnlyBehindPassThroughMiddleware(t *testing.T) {
	for name, tc := range map[string]struct {
		wrap   func(http.Handler) http.Handler
		detach bool
	}{
		// attack: gzip with Unwrap; a Hijack through it skips the compressor
		"gzip middleware with Unwrap": {wrap: gzipMiddleware(false)},
		// attack: gzip forwarding Hijack to the writer it wraps
		"gzip middleware forwarding Hijack": {wrap: gzipMiddleware(true)},
		"pass-through logging middleware": {wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(&countingWriter{ResponseWriter: w}, r)
			})
		}, detach: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newWrappedDetachFixture(t, false, tc.wrap)
			s := f.listen(t, 5)
			defer s.Close()
			mcptest.WaitSubscribers(t, f.hub, "alice", 1)
			if tc.detach {
				require.Eventually(t, func() bool { return f.hijacked.Load() == 1 }, 5*time.Second, time.Millisecond)
			} else {
				assert.True(t, s.Resp.Uncompressed, "the client decompressed the stream")
			}
			f.hub.ListChanged(context.Background(), "alice")
			assert.Contains(t, s.Next(t), "notifications/resources/list_changed")
			f.hub.ListChanged(context.Background(), "alice")
			assert.Contains(t, s.Next(t), "notifications/resources/list_changed")
			if !tc.detach {
				assert.Zero(t, f.hijacked.Load(), "an encoded stream stays in its handler")
			}
		})
	}
}

// A detached stream closes its connection when it ends, so its response
// says so (Connection: close): otherwise a client takes the connection
// back into its pool when the stream ends, and its next request (a POST,
// which it does not retry) can go out on a connection the server has
// just closed. Here the server ends each stream (a new GET replaces the
// session's stream) and the client posts at once, 100 times: no request
// fails.
func TestDetachedStreamsCloseTheirConnection(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	old := openStream(t, f.Get(t, alice, session, nil))
	assert.True(t, old.Resp.Close, "an HTTP/1.1 stream's response has Connection: close")
	for i := range 100 {
		next := f.Get(t, alice, session, nil) // replaces old: the server ends it
		<-old.Done()                          // old's body ended: a pooled connection would be reused now
		rq, err := http.NewRequest(http.MethodPost, f.Srv.URL, strings.NewReader(mcptest.Legacy(1, "resources/templates/list", nil)))
		require.NoError(t, err)
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Accept", "application/json, text/event-stream")
		rq.Header.Set("Authorization", "Bearer "+alice)
		resp, err := f.Srv.Client().Do(rq)
		require.NoError(t, err, "request %d after a stream the server ended", i)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		old = openStream(t, next)
	}
	old.Close()
}

// requestScoped is a value a service's middleware puts in the request's
// context and releases when the request is over (a transaction, a pooled
// router context).
type requestScoped struct{ released atomic.Bool }

type requestScopedKey struct{}

// A detached stream outlives its request: the checks it makes later (here
// a gate's policy, asked again before each resources/updated) get the
// caller in their context and none of the request's values, which the
// middleware has released by then.
func TestDetachedStreamDropsRequestValues(t *testing.T) {
	base := mcptest.New(t, mcptest.Options{})
	hub := notify.New(notify.Options{})
	type seen struct {
		scoped  *requestScoped
		subject string
	}
	checks := make(chan seen, 16)
	const uri = "docs://beta"
	inv, err := inventory.New([]inventory.Resource{{
		URI: uri, Name: "beta", Access: inventory.Public, Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta"),
	}}, nil, inventory.Options{Notifier: hub, Gates: []inventory.Gate{{Name: "beta", Policy: func(ctx context.Context, p *principal.Principal) bool {
		v, _ := ctx.Value(requestScopedKey{}).(*requestScoped)
		from, _ := principal.FromContext(ctx)
		select {
		case checks <- seen{scoped: v, subject: from.Subject}:
		default:
		}
		return p != nil && p.Subject == "alice"
	}}}})
	require.NoError(t, err)
	part, err := sessions.New(hub, sessions.Options{KeepAlive: time.Hour})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: base.Auth}, part)
	require.NoError(t, err)
	var hijacked atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := &requestScoped{}
		defer v.released.Store(true)
		ep.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestScopedKey{}, v)))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateHijacked {
			hijacked.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(func() { hub.Close(); srv.Close() })

	body, hdr := mcptest.Modern(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+base.Token(t, "alice"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	s := openStream(t, resp)
	defer s.Close()
	assert.Contains(t, s.Next(t), "notifications/subscriptions/acknowledged")
	require.Eventually(t, func() bool { return hijacked.Load() == 1 }, 5*time.Second, time.Millisecond, "the stream detached")
	for len(checks) > 0 {
		<-checks // the checks made while the request was still being served
	}

	hub.ResourceUpdated(context.Background(), "alice", uri)
	assert.Contains(t, s.Next(t), "notifications/resources/updated")
	select {
	case c := <-checks:
		assert.Nil(t, c.scoped, "a detached stream's check never sees the finished request's values")
		assert.Equal(t, "alice", c.subject, "it sees the caller")
	case <-time.After(5 * time.Second):
		t.Fatal("the gate's policy was not asked again")
	}
}

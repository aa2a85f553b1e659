package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// countingStore is a Store that counts the operations asked of it (the
// round trips a store on a shared engine makes) and fails while failing
// is set (an engine out of reach).
type countingStore struct {
	sessions.Store
	ops     atomic.Int64
	failing atomic.Bool
}

var errDown = errors.New("store: connection refused")

func (s *countingStore) op() error {
	s.ops.Add(1)
	if s.failing.Load() {
		return errDown
	}
	return nil
}

func (s *countingStore) Create(ctx context.Context, id string, p *principal.Principal) ([]string, error) {
	if err := s.op(); err != nil {
		return nil, err
	}
	return s.Store.Create(ctx, id, p)
}

func (s *countingStore) Find(ctx context.Context, id string, p *principal.Principal) (sessions.Session, error) {
	if err := s.op(); err != nil {
		return sessions.Session{}, err
	}
	return s.Store.Find(ctx, id, p)
}

func (s *countingStore) End(ctx context.Context, id string, p *principal.Principal) error {
	if err := s.op(); err != nil {
		return err
	}
	return s.Store.End(ctx, id, p)
}

func (s *countingStore) Subscribe(ctx context.Context, id string, p *principal.Principal, uri string) error {
	if err := s.op(); err != nil {
		return err
	}
	return s.Store.Subscribe(ctx, id, p, uri)
}

func (s *countingStore) Unsubscribe(ctx context.Context, id string, p *principal.Principal, uri string) error {
	if err := s.op(); err != nil {
		return err
	}
	return s.Store.Unsubscribe(ctx, id, p, uri)
}

func (s *countingStore) Subscribed(ctx context.Context, id, uri string) (bool, error) {
	if err := s.op(); err != nil {
		return false, err
	}
	return s.Store.Subscribed(ctx, id, uri)
}

// instance is one process of a fleet: its own endpoint, part and hub
// (the hubs joined as a Broker joins them), one store shared by all.
type instance struct {
	*fixture
	ep     *mcphttp.Endpoint
	broker *broker // the fleet's
}

// newFleet starts n instances over one inventory fixture, sharing store,
// with each event published on one instance delivered on all of them.
func newFleet(t *testing.T, n int, store sessions.Store, lim sessions.Limits, log *slog.Logger) []*instance {
	t.Helper()
	return newFleetLog(t, n, store, lim, log, nil)
}

// newFleetLog is newFleet whose hubs share elog (nil: each its own
// MemoryLog).
func newFleetLog(t *testing.T, n int, store sessions.Store, lim sessions.Limits, log *slog.Logger, elog notify.EventLog) []*instance {
	t.Helper()
	return newFleetKeepAlive(t, n, store, lim, log, elog, time.Hour)
}

// newFleetKeepAlive is newFleetLog with the parts' KeepAlive.
func newFleetKeepAlive(t *testing.T, n int, store sessions.Store, lim sessions.Limits, log *slog.Logger, elog notify.EventLog, keepAlive time.Duration) []*instance {
	t.Helper()
	base := mcptest.New(t, mcptest.Options{})
	b := &broker{}
	var out []*instance
	for range n {
		hub := notify.New(notify.Options{Broker: b, Log: elog, Logger: log})
		part, err := sessions.New(hub, sessions.Options{Store: store, Limits: lim, KeepAlive: keepAlive})
		require.NoError(t, err)
		inv := base.Inv
		if len(out) > 0 { // the inventory takes the first hub; the others attach nothing
			inv = mcptest.New(t, mcptest.Options{}).Inv
		}
		ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: base.Auth, Logger: log}, part)
		require.NoError(t, err)
		srv := httptest.NewServer(ep)
		t.Cleanup(func() { hub.Close(); srv.Close() })
		fx := *base
		fx.EP = ep
		out = append(out, &instance{fixture: &fixture{Server: &mcptest.Server{Fixture: &fx, Hub: hub, Srv: srv}, part: part}, ep: ep, broker: b})
	}
	require.Eventually(t, func() bool { return b.len() == n }, 5*time.Second, time.Millisecond, "every hub listens")
	return out
}

// broker is an in-process notify.Broker: every event published reaches
// every listening hub — at once, or, while the test holds them, when it
// releases them (a delivery delayed on its way).
type broker struct {
	mu        sync.Mutex
	listeners []func(notify.Event)
	holding   func(notify.Event) bool // which events to hold; nil: none
	held      []notify.Event
}

func (b *broker) Publish(_ context.Context, e notify.Event) error {
	b.mu.Lock()
	if b.holding != nil && b.holding(e) {
		b.held = append(b.held, e)
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	b.deliver(e)
	return nil
}

func (b *broker) deliver(e notify.Event) {
	b.mu.Lock()
	ls := b.listeners
	b.mu.Unlock()
	for _, l := range ls {
		l(e)
	}
}

// holdIf keeps the events published from now on that match until release.
func (b *broker) holdIf(match func(notify.Event) bool) {
	b.mu.Lock()
	b.holding = match
	b.mu.Unlock()
}

// release delivers what was held, in order, and ends the hold.
func (b *broker) release() {
	b.mu.Lock()
	held := b.held
	b.held, b.holding = nil, nil
	b.mu.Unlock()
	for _, e := range held {
		b.deliver(e)
	}
}

func (b *broker) Listen(ctx context.Context, deliver func(notify.Event)) error {
	b.mu.Lock()
	b.listeners = append(b.listeners, deliver)
	b.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (b *broker) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.listeners)
}

// A fleet sharing one store, as a load balancer spreads a client's
// requests: a session minted by one instance is valid on the others, a
// subscription made through another reaches the stream where it is open,
// and a DELETE through a third ends that stream at its next refresh. Each
// request asks the store once.
func TestFleetSharesSessions(t *testing.T) {
	mem, err := sessions.NewMemoryStore(sessions.Limits{IdleTimeout: 2 * time.Second})
	require.NoError(t, err)
	store := &countingStore{Store: mem}
	fleet := newFleet(t, 3, store, sessions.Limits{IdleTimeout: 2 * time.Second}, nil)
	a, b, c := fleet[0], fleet[1], fleet[2]
	alice := a.Token(t, "alice")
	session := a.initialize(t, alice)

	s := openStream(t, b.Get(t, alice, session, nil)) // the stream on B
	mcptest.WaitSubscribers(t, b.Hub, "alice", 1)
	ops := store.ops.Load()
	uri := "docs://documents/alice-0001"
	r := decodeResp(t, c.Post(t, alice, session, mcptest.Legacy(2, "resources/subscribe", map[string]any{"uri": uri}), nil))
	require.Nil(t, r.Error)
	assert.Equal(t, int64(1), store.ops.Load()-ops, "a subscribe is one store operation")
	ops = store.ops.Load()
	assert.Equal(t, 200, status(a.Post(t, alice, session, mcptest.Legacy(3, "ping", nil), nil)))
	assert.Equal(t, int64(1), store.ops.Load()-ops, "a request in a session is one store operation")

	a.Hub.ResourceUpdated(context.Background(), "alice", uri) // the change lands on A
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`, s.Next(t))
	assert.Equal(t, 404, status(c.Post(t, b.Token(t, "bob"), session, mcptest.Legacy(4, "ping", nil), nil)), "bound to alice on every instance")

	resp := c.del(t, alice, session)
	assert.Equal(t, http.StatusNoContent, status(resp))
	ended(t, s, "a session ended through another instance ends its stream")
	assert.Equal(t, 404, status(b.Post(t, alice, session, mcptest.Legacy(5, "ping", nil), nil)))
}

// A store out of reach degrades, never refuses what needs no session, and
// comes back with the store: initialize without a session, a request in a
// session served without it, a subscribe an internal error, a GET 503
// with Retry-After, an open stream kept open (its updates held back: a
// subscription that cannot be checked delivers nothing).
func TestAFailingStoreDegrades(t *testing.T) {
	mem, err := sessions.NewMemoryStore(sessions.Limits{})
	require.NoError(t, err)
	store := &countingStore{Store: mem}
	var logs bytes.Buffer
	var logMu sync.Mutex
	f := newFleet(t, 1, store, sessions.Limits{}, slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil)))[0]
	alice := f.Token(t, "alice")
	session := f.initialize(t, alice)
	uri := "docs://documents/alice-0001"
	require.Nil(t, decodeResp(t, f.Post(t, alice, session, mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": uri}), nil)).Error)
	s := openStream(t, f.Get(t, alice, session, nil))
	defer s.Close()
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)

	store.failing.Store(true)
	code, id := f.initializeOn(t, alice)
	assert.Equal(t, 200, code)
	assert.Empty(t, id, "initialize without a session")
	assert.Equal(t, 200, status(f.Post(t, alice, session, mcptest.Legacy(2, "resources/templates/list", nil), nil)), "served without its session")
	r := decodeResp(t, f.Post(t, alice, session, mcptest.Legacy(3, "resources/subscribe", map[string]any{"uri": uri}), nil))
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32603), r.Error.Code)
	assert.NotContains(t, r.Error.Message, "refused", "the store's error stays in the log")
	resp := f.Get(t, alice, session, nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, status(f.del(t, alice, session)))
	f.Hub.ResourceUpdated(context.Background(), "alice", uri)
	f.Hub.ListChanged(context.Background(), "alice")
	assert.Contains(t, s.Next(t), "notifications/resources/list_changed", "the stream goes on; the update is held back")

	store.failing.Store(false)
	f.Hub.ResourceUpdated(context.Background(), "alice", uri)
	assert.Contains(t, s.Next(t), "notifications/resources/updated")
	assert.Equal(t, 200, status(f.Post(t, alice, session, mcptest.Legacy(4, "ping", nil), nil)))
	_, id = f.initializeOn(t, alice)
	assert.NotEmpty(t, id, "sessions are back")

	logMu.Lock()
	defer logMu.Unlock()
	for _, op := range []string{"create", "find", "subscribe", "end", "subscribed"} {
		assert.Contains(t, logs.String(), "op="+op, "the failure is logged for the operator")
	}
	assert.NotContains(t, logs.String(), session, "never the session id")
	assert.NotContains(t, logs.String(), alice, "never the token")
}

// lockedWriter serialises a log's writes.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// The same with refreshes that the keep-alive wheel runs (a refresh no
// more frequent than a keep-alive): a stream open for several idle times
// keeps its session alive, and a DELETE through another instance ends
// the stream at its next refresh.
func TestFleetRefreshesOnTheWheel(t *testing.T) {
	// A refresh every 500 ms, run by the wheel's turns (every 6 ms, which
	// drift under load): the idle time leaves them 4 times the room.
	const idle = 2 * time.Second
	lim := sessions.Limits{IdleTimeout: idle}
	mem, err := sessions.NewMemoryStore(lim)
	require.NoError(t, err)
	fleet := newFleetKeepAlive(t, 2, mem, lim, nil, nil, 100*time.Millisecond)
	a, b := fleet[0], fleet[1]
	alice := a.Token(t, "alice")
	session := a.initialize(t, alice)
	s := openStream(t, a.Get(t, alice, session, nil))
	mcptest.WaitSubscribers(t, a.Hub, "alice", 1)

	time.Sleep(2 * idle) // no request but the stream's refreshes
	select {
	case <-s.Done():
		t.Fatal("the stream ended while its session was in use")
	default:
	}
	assert.Equal(t, 200, status(b.Post(t, alice, session, mcptest.Legacy(2, "ping", nil), nil)), "the open stream kept its session alive")

	assert.Equal(t, http.StatusNoContent, status(b.del(t, alice, session)))
	ended(t, s, "a session ended through another instance ends its stream at the wheel's next refresh")
}

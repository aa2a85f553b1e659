package mcphttp_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// smallInventory is an inventory of one public static resource.
func smallInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New([]inventory.Resource{{URI: "info://about", Name: "about", Access: inventory.Public,
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: "info://about", Text: "hi"}}, nil
		}}}, nil, inventory.Options{})
	require.NoError(t, err)
	return inv
}

// capture swaps slog.Default for a buffer for the test's duration.
func capture(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// Every interface-typed option and argument of mcphttp refuses a typed
// nil at construction, naming it, instead of panicking on each request.
func TestTypedNilsAreErrorsOfNew(t *testing.T) {
	inv := smallInventory(t)
	var auth *authn.Authenticator
	_, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Authenticator")
	_, err = mcphttp.NewListHandler(inv, mcphttp.Options{Authenticator: auth})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Authenticator")

	require.NotPanics(t, func() { _, err = mcphttp.New(inv, mcphttp.Options{}, (*tools.Part)(nil)) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "part 1 is nil")
	_, err = mcphttp.New(inv, mcphttp.Options{}, nil)
	require.Error(t, err)

	_, err = mcphttp.New(inv, mcphttp.Options{}, mcphttp.Observe((*audit.Audit)(nil)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Observe: observer 1 is nil")
	var a *audit.Audit
	_, err = mcphttp.New(inv, mcphttp.Options{}, mcphttp.Observe(audit.New(audit.Options{}), nil, a))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "observer 3 is nil (*audit.Audit)")

	// The Setup registrations refuse nil functions.
	for name, reg := range map[string]func(s *mcphttp.Setup){
		"Use":        func(s *mcphttp.Setup) { s.Use(nil) },
		"CheckHTTP":  func(s *mcphttp.Setup) { seam.Of(s).CheckHTTP(nil) },
		"Capability": func(s *mcphttp.Setup) { s.Capability("x", nil) },
		"Watch":      func(s *mcphttp.Setup) { s.Watch(mcphttp.Watcher{Notification: "notifications/x"}) },
		"Handle":     func(s *mcphttp.Setup) { s.Handle("x/y", nil, mcphttp.MethodOptions{}) },
		"HandleHTTP": func(s *mcphttp.Setup) { seam.Of(s).HandleHTTP(http.MethodGet, nil) },
	} {
		_, err := mcphttp.New(inv, mcphttp.Options{}, mcphttp.PartFunc(func(s *mcphttp.Setup) error { reg(s); return nil }))
		assert.Error(t, err, name)
	}
}

// A zero Endpoint or ListHandler (not built by its constructor) answers
// 500 and logs how to build one, never panics.
func TestZeroValuesAnswer500(t *testing.T) {
	logs := capture(t)
	for name, h := range map[string]http.Handler{
		"Endpoint": &mcphttp.Endpoint{}, "nil Endpoint": (*mcphttp.Endpoint)(nil),
		"ListHandler": &mcphttp.ListHandler{},
	} {
		var w *httptest.ResponseRecorder
		require.NotPanics(t, func() { w = mcptest.Do(t, h, mcptest.Request{Body: pingBody}) }, name)
		assert.Equal(t, http.StatusInternalServerError, w.Code, name)
	}
	assert.Contains(t, logs.String(), "use mcphttp.New")
	assert.Contains(t, logs.String(), "use mcphttp.NewListHandler")

	// A zero tools.Part is an empty tools part: it serves. The part of a
	// zero or nil ratelimit.Limiter is refused (issue 35: it limited
	// nothing, silently).
	for name, part := range map[string]mcphttp.Part{
		"ratelimit.Limiter": (&ratelimit.Limiter{}).Part(), "nil Limiter": (*ratelimit.Limiter)(nil).Part(),
	} {
		var err error
		require.NotPanics(t, func() { _, err = mcphttp.New(smallInventory(t), mcphttp.Options{}, part) }, name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "not made by ratelimit.New", name)
	}
	for name, part := range map[string]mcphttp.Part{"tools.Part": &tools.Part{}} {
		var ep *mcphttp.Endpoint
		var err error
		require.NotPanics(t, func() { ep, err = mcphttp.New(smallInventory(t), mcphttp.Options{}, part) }, name)
		require.NoError(t, err, name)
		for _, body := range []string{pingBody, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"info://about"}}`} {
			var w *httptest.ResponseRecorder
			require.NotPanics(t, func() { w = mcptest.Do(t, ep, mcptest.Request{Body: body}) }, name)
			assert.Equal(t, http.StatusOK, w.Code, "%s: %s", name, w.Body.String())
		}
	}

	// A zero Request's and Call's methods are usable too (a handler's or
	// an observer's test, say); a result for a Request the endpoint did
	// not make is an error.
	var c mcphttp.Request
	var nilReq *mcphttp.Request
	require.NotPanics(t, func() {
		for _, r := range []*mcphttp.Request{&c, nilReq} {
			assert.Equal(t, "", r.Class())
			assert.NotNil(t, r.Logger())
			assert.Equal(t, mcphttp.DefaultMaxResultBytes, r.MaxResultBytes())
			_ = r.Room(mcphttp.CachePrivate)
			_, ok := r.Meta("traceparent")
			assert.False(t, ok)
			r.NoteTarget("x")
			r.NoteURI("x")
			r.NoteOutcome(mcphttp.OutcomeError, "")
			r.NoteToolError()
			r.NoteEntries(1)
			_, err := mcphttp.JSONResult(r, map[string]int{"a": 1}, mcphttp.CachePrivate)
			assert.Error(t, err)
		}
		var call mcphttp.Call
		assert.Equal(t, "", call.Class())
		_, ok := call.Meta("traceparent")
		assert.False(t, ok)
	})
}

// panicky is a part whose method, GET verb and middleware panic on
// demand.
func panicky() mcphttp.Part {
	return mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Handle("test/panic", func(context.Context, *mcphttp.Request) (mcphttp.Result, error) {
			var p *principal.Principal
			_ = p.Subject // a nil dereference, as a careless handler does
			return mcphttp.Result{}, nil
		}, mcphttp.MethodOptions{})
		seam.Of(s).HandleHTTP(http.MethodGet, func(http.ResponseWriter, *http.Request, *principal.Principal) { panic("verb") })
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				if c.Method == "test/panic-mw" {
					panic("middleware")
				}
				return next(ctx, c)
			}
		})
		return nil
	})
}

// A panicking part (a method's handler, a middleware, a GET verb) is
// recovered: an internal error to the caller, its stack to the log, and
// the next request is served.
func TestPanickingPartIsRecovered(t *testing.T) {
	var logs bytes.Buffer
	ep, err := mcphttp.New(smallInventory(t), mcphttp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, panicky())
	require.NoError(t, err)
	for _, method := range []string{"test/panic", "test/panic-mw"} {
		var w *httptest.ResponseRecorder
		require.NotPanics(t, func() {
			w = mcptest.Do(t, ep, mcptest.Request{Body: `{"jsonrpc":"2.0","id":7,"method":"` + method + `"}`})
		})
		assert.Equal(t, http.StatusOK, w.Code)
		rpc := mcptest.Decode(t, w)
		require.NotNil(t, rpc.Error, w.Body.String())
		assert.Equal(t, int64(jsonrpc.CodeInternalError), rpc.Error.Code)
		assert.NotContains(t, w.Body.String(), "nil pointer")
		assert.NotContains(t, w.Body.String(), "middleware")
	}
	assert.Contains(t, logs.String(), "panicked")
	assert.Contains(t, logs.String(), "goroutine") // the stack
	assert.Equal(t, http.StatusOK, mcptest.Do(t, ep, mcptest.Request{Body: pingBody}).Code)

	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/mcp", nil)
	w := httptest.NewRecorder()
	require.NotPanics(t, func() { ep.ServeHTTP(w, r) })
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "verb")
}

// panicObserver panics in Start or End.
type panicObserver struct {
	inStart, inEnd bool
	ended          *int
}

func (o panicObserver) Start(ctx context.Context, _ mcphttp.Call) context.Context {
	if o.inStart {
		panic("start")
	}
	return ctx
}

func (o panicObserver) End(context.Context, mcphttp.Call) {
	if o.ended != nil {
		*o.ended++
	}
	if o.inEnd {
		panic("end")
	}
}

// A panicking observer is recovered like a handler: an internal error to
// the caller, its stack to the log, the server goes on, and the observers
// started before it are ended.
func TestPanickingObserverIsRecovered(t *testing.T) {
	for name, o := range map[string]panicObserver{"Start": {inStart: true}, "End": {inEnd: true}} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			ended := 0
			first := panicObserver{ended: &ended}
			ep, err := mcphttp.New(smallInventory(t), mcphttp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))},
				mcphttp.Observe(first, o))
			require.NoError(t, err)
			var w *httptest.ResponseRecorder
			require.NotPanics(t, func() { w = mcptest.Do(t, ep, mcptest.Request{Body: pingBody}) })
			rpc := mcptest.Decode(t, w)
			require.NotNil(t, rpc.Error, w.Body.String())
			assert.Equal(t, int64(jsonrpc.CodeInternalError), rpc.Error.Code)
			assert.Equal(t, 1, ended, "the first observer is ended")
			assert.Contains(t, logs.String(), "an observer's "+name+" panicked")
			assert.True(t, strings.Contains(logs.String(), "goroutine"))
		})
	}
}

// A part's HTTP method that panics after its response began (an event
// stream under way) is not answered with a 500 written into the stream:
// the panic is logged and the connection cut, and the server goes on.
func TestPanicInAStartedStreamCutsIt(t *testing.T) {
	var logs logbuf.Buffer
	streamer := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		seam.Of(s).HandleHTTP(http.MethodGet, func(w http.ResponseWriter, _ *http.Request, _ *principal.Principal) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": stream\n\n")
			require.NoError(t, http.NewResponseController(w).Flush())
			panic("mid-stream")
		})
		return nil
	})
	ep, err := mcphttp.New(smallInventory(t), mcphttp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, streamer)
	require.NoError(t, err)
	srv := httptest.NewServer(ep)
	defer srv.Close()
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	assert.Error(t, err, "the stream is cut, not ended")
	assert.Equal(t, ": stream\n\n", string(body), "nothing written after the panic")
	assert.Contains(t, logs.String(), "mid-stream")
	assert.Equal(t, http.StatusOK, mcptest.Do(t, ep, mcptest.Request{Body: pingBody}).Code)
}

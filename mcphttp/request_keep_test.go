package mcphttp_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// TestRequestKeptPastReturn (issue 38): a handler keeps its *Request and
// returns; once the response is written, a goroutine reads every field
// and getter and calls every Note while later calls are served (run with
// the race detector). The Request still tells its own call (method, id,
// params, caller), and the notes made after the return are ignored: the
// observers saw only those made before it.
func TestRequestKeptPastReturn(t *testing.T) {
	const calls = 16
	var (
		mu   sync.Mutex
		kept = map[string]*mcphttp.Request{}
	)
	keep := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Handle("test/keep", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			req.NoteTarget("kept")
			mu.Lock()
			kept[string(req.Params())] = req
			mu.Unlock()
			return mcphttp.JSONResult(req, struct{}{}, mcphttp.CachePrivate)
		}, mcphttp.MethodOptions{Class: func([]byte) string { return mcphttp.ClassRead }})
		return nil
	})
	rec := &recorder{mark: "keep"}
	f := mcptest.New(t, mcptest.Options{}, keep, mcphttp.Observe(rec))
	f.Store.Add("alice", 1)
	token := f.Token(t, "alice")

	var readers sync.WaitGroup
	var served sync.WaitGroup
	for i := range calls {
		served.Add(1)
		go func() {
			defer served.Done()
			params := map[string]any{"n": i, "_meta": map[string]any{"traceparent": "tp-" + strconv.Itoa(i)}}
			w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(i+1, "test/keep", params), Token: token})
			assert.Equal(t, 200, w.Code, w.Body.String())
			mu.Lock()
			var req *mcphttp.Request
			for p, r := range kept {
				if tp, _ := r.Meta("traceparent"); tp == "tp-"+strconv.Itoa(i) {
					req = r
					delete(kept, p)
				}
			}
			mu.Unlock()
			if !assert.NotNil(t, req, "call %d kept its Request", i) {
				return
			}
			readers.Add(1)
			go func() { // after the response was written, beside other calls
				defer readers.Done()
				assert.Equal(t, "test/keep", req.Method)
				assert.Equal(t, strconv.Itoa(i+1), req.ID.Raw())
				assert.Contains(t, string(req.Params()), `"n":`+strconv.Itoa(i))
				require.NotNil(t, req.Principal)
				assert.Equal(t, "alice", req.Principal.Subject)
				assert.Equal(t, "2025-03-26", req.ProtocolVersion)
				assert.False(t, req.Modern)
				assert.Empty(t, req.SessionID)
				assert.NotNil(t, req.HTTP)
				assert.Equal(t, mcphttp.ClassRead, req.Class())
				assert.Positive(t, req.Room(mcphttp.CachePrivate))
				assert.Equal(t, mcphttp.DefaultMaxResultBytes, req.MaxResultBytes())
				assert.NotNil(t, req.Logger())
				req.NoteTarget("late")
				req.NoteURI("late://x")
				req.NoteOutcome(mcphttp.OutcomeNotFound, "")
				req.NoteToolError()
				req.NoteEntries(99)
				_, err := mcphttp.JSONResult(req, struct{}{}, mcphttp.CacheNone) // encodes, answers nothing
				assert.NoError(t, err)
			}()
		}()
	}
	served.Wait()
	readers.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.calls, calls)
	for _, c := range rec.calls {
		assert.Equal(t, "kept", c.Target, "the note made before the return")
		assert.Empty(t, c.URI, "no note after the return")
		assert.Equal(t, mcphttp.OutcomeOK, c.Outcome)
		assert.Empty(t, c.ErrorType)
		assert.Zero(t, c.Entries)
	}
}

// A middleware that keeps a Result and returns it again — for the next
// call, or twice in one batch — never sends the first call's bytes (its
// id, another caller's data) nor corrupts the endpoint's recycled
// storage: the stale Result is answered with an internal error.
func TestKeptResultIsNotSentAgain(t *testing.T) {
	var (
		mu   sync.Mutex
		kept *mcphttp.Result
	)
	replay := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				if kept != nil && req.Method != "ping" { // the misuse: a cache of answers
					return *kept, nil
				}
				res, err := next(ctx, req)
				if err == nil && req.Method != "ping" {
					kept = &res
				}
				return res, err
			}
		})
		s.Handle("test/secret", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			return mcphttp.JSONResult(req, map[string]string{"secret": req.Principal.Subject + "-secret"}, mcphttp.CachePrivate)
		}, mcphttp.MethodOptions{})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{}, replay)
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	for _, method := range []string{"test/secret", "resources/list"} {
		mu.Lock()
		kept = nil
		mu.Unlock()
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, method, nil), Token: alice})
		require.Equal(t, 200, w.Code, w.Body.String())
		assert.NotContains(t, w.Body.String(), `"error"`)

		w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, method, nil), Token: bob})
		assert.NotContains(t, w.Body.String(), "alice", "%s: the kept answer was sent to bob", method)
		assert.Contains(t, w.Body.String(), `"id":2`)
		assert.Contains(t, w.Body.String(), `"code":-32603`, method)

		// Twice in one batch (2025-03-26): the second is refused too.
		mu.Lock()
		kept = nil
		mu.Unlock()
		batch := `[` + mcptest.Legacy(3, method, nil) + `,` + mcptest.Legacy(4, method, nil) + `]`
		w = f.Do(t, mcptest.Request{Body: batch, Token: alice}) // no version header: 2025-03-26
		assert.Contains(t, w.Body.String(), `"code":-32603`, method)
		// The endpoint's storage is whole: later calls answer themselves.
		for i := range 8 {
			w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(10+i, "ping", nil), Token: bob})
			assert.Equal(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"result":{}}`, w.Body.String())
		}
	}
}

// A middleware that hands its inner handler a copy of the Request with
// ID, Method and Modern changed changes neither how the endpoint routes
// the call nor the answer's envelope (its id, its era's members).
func TestEditedCopyRoutesAndAnswersAsTheCall(t *testing.T) {
	var seen string
	part := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
				c := *req
				c.ID, c.Method, c.Modern = mcphttp.Request{}.ID, "test/other", true
				return next(ctx, &c)
			}
		})
		s.Handle("test/echo", func(_ context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
			seen = req.Method
			return mcphttp.JSONResult(req, map[string]bool{"ok": true}, mcphttp.CachePrivate)
		}, mcphttp.MethodOptions{})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{}, part)
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(7, "test/echo", nil), Token: f.Token(t, "alice")})
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`, w.Body.String(), "the call's id, the legacy era's answer")
	assert.Equal(t, "test/other", seen, "the inner handler reads the copy")
}

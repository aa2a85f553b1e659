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

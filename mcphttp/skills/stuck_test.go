package skills_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// post sends one legacy-era call as user over loopback and reports whether
// it was answered with a result (served) and whether it was answered at
// all (an HTTP response with a JSON-RPC body before the client's timeout).
func post(c *http.Client, url, user, method string, params map[string]any) (served, answered bool) {
	rq, err := http.NewRequest(http.MethodPost, url, strings.NewReader(mcptest.Legacy(1, method, params)))
	if err != nil {
		return false, false
	}
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("Accept", "application/json, text/event-stream")
	rq.Header.Set("MCP-Protocol-Version", mcpwire.Version20251125)
	rq.Header.Set("X-Test-User", user)
	resp, err := c.Do(rq)
	if err != nil {
		return false, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, false
	}
	var rpc struct {
		Result json.RawMessage `json:"result"`
		Error  *struct{}       `json:"error"`
	}
	if json.Unmarshal(b, &rpc) != nil {
		return false, false
	}
	return rpc.Error == nil && rpc.Result != nil, true
}

// A skills source whose List and Get ignore their context for one caller
// (bob's rows are behind a lock that never comes free) holds neither the
// requests nor anyone else: bob's calls are answered at the callback
// timeout, then refused at once without calling his callbacks once his
// share of abandoned callbacks is used up, and alice, beside him, is
// served every time. Before the callbacks ran on the kit's callback
// runner, each of bob's requests was held until his callback returned
// (here: never), with no bound per caller.
func TestStuckSkillsCallbacksOfOneCallerDoNotRefuseAnother(t *testing.T) {
	s := seeded()
	release := make(chan struct{})
	var bobCalls atomic.Int64
	src := s.source()
	list, get := src.List, src.Get
	src.List = func(ctx context.Context, req inventory.ListRequest) (skills.Page, error) {
		if req.Principal.Subject == "bob" {
			bobCalls.Add(1)
			<-release
		}
		return list(ctx, req)
	}
	src.Get = func(ctx context.Context, req skills.GetRequest) (skills.Skill, error) {
		if req.Principal.Subject == "bob" {
			bobCalls.Add(1)
			<-release
		}
		return get(ctx, req)
	}
	var logs logBuffer
	inv := s.inventory(t)
	cat, err := skills.New(inv, src, skills.Options{CallbackTimeout: 200 * time.Millisecond, Logger: logs.logger()})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{Logger: logs.logger()}, cat)
	require.NoError(t, err)
	srv := httptest.NewServer(asUser(ep))
	defer srv.Close()
	defer close(release) // first: the server's Close waits for the handlers
	client := &http.Client{Timeout: 3 * time.Second}

	bobGet := map[string]any{"uri": "skill://bob/bob-secrets/SKILL.md"}
	// bob's burst: more stuck calls than his share, all at once.
	var wg sync.WaitGroup
	var burstAnswered, burstServed atomic.Int64
	for i := range 2 * inventory.MaxAbandonedPerCaller {
		wg.Go(func() {
			method, params := "skills/list", map[string]any(nil)
			if i%2 == 1 {
				method, params = "skills/get", bobGet
			}
			served, answered := post(client, srv.URL, "bob", method, params)
			if answered {
				burstAnswered.Add(1)
			}
			if served {
				burstServed.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(2*inventory.MaxAbandonedPerCaller), burstAnswered.Load(), "each of bob's stuck calls is answered, not held")
	assert.Zero(t, burstServed.Load())
	burst := bobCalls.Load()
	assert.GreaterOrEqual(t, burst, int64(inventory.MaxAbandonedPerCaller))

	// bob goes on firing beside alice.
	stop := make(chan struct{})
	var hostile sync.WaitGroup
	var bobServed, bobRefused atomic.Int64
	for range 2 {
		hostile.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				served, answered := post(client, srv.URL, "bob", "skills/list", nil)
				switch {
				case served:
					bobServed.Add(1)
				case answered:
					bobRefused.Add(1)
				}
			}
		})
	}
	var served, total atomic.Int64
	aliceGet := map[string]any{"uri": "skill://alice/git-workflow/SKILL.md"}
	for range 2 {
		wg.Go(func() {
			for i := range 25 {
				method, params := "skills/list", map[string]any(nil)
				if i%2 == 1 {
					method, params = "skills/get", aliceGet
				}
				ok, _ := post(client, srv.URL, "alice", method, params)
				total.Add(1)
				if ok {
					served.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	hostile.Wait()

	t.Logf("alice served %d of %d; bob refused %d times meanwhile, his callbacks called %d times", served.Load(), total.Load(), bobRefused.Load(), bobCalls.Load())
	assert.Equal(t, total.Load(), served.Load(), "alice is served beside bob's stuck callbacks")
	assert.Zero(t, bobServed.Load(), "bob's stuck callbacks are never trusted")
	assert.Positive(t, bobRefused.Load(), "bob is answered (refused) meanwhile")
	assert.Equal(t, burst, bobCalls.Load(), "once his share is stuck, bob is refused without calling his callbacks")
	assert.Contains(t, logs.String(), "abandoned callbacks of this caller", "the refusal is logged")
}

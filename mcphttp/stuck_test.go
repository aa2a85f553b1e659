package mcphttp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
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
)

// Issue 27, over loopback with the kit's real server: one subject whose
// List ignores its context (mallory's rows are behind a lock that never
// comes free) fires 70 concurrent lists and goes on firing, beside three
// honest users. Before abandoned callbacks were counted per caller, the
// 64 abandoned ones of the inventory answered everyone "Internal error"
// (alice 0 of 50); now the honest callers are served and mallory alone
// is refused.
func TestStuckCallbacksOfOneCallerOverLoopback(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var malloryCalls atomic.Int64
	list := func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
		if req.Principal.Subject == "mallory" {
			malloryCalls.Add(1)
			<-release // never looks at its context
		}
		return inventory.Page{Entries: []inventory.Entry{{Key: "k1", URI: "docs://documents/d1", Name: "One"}}}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{{Name: "documents", URITemplate: "docs://documents/{id}",
		RequiredScopes: []string{"docs:read"}, List: list, Read: inventory.TextReader("text/plain", "x")}},
		inventory.Options{CallbackTimeout: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(serviceAuth(ep))
	defer srv.Close()

	// listAs lists the first page as user and reports whether it was served.
	listAs := func(user string) bool {
		body, hdr := mcptest.Modern(1, "resources/list", nil)
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer user:"+user)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct {
			Result *struct {
				Resources []json.RawMessage `json:"resources"`
			} `json:"result"`
		}
		return resp.StatusCode == http.StatusOK && json.Unmarshal(b, &r) == nil && r.Result != nil && len(r.Result.Resources) == 1
	}

	var wg sync.WaitGroup
	for range 70 {
		wg.Go(func() { assert.False(t, listAs("mallory")) })
	}
	wg.Wait()

	burst := malloryCalls.Load() // 70, unless some started after the first were abandoned
	require.GreaterOrEqual(t, burst, int64(inventory.MaxAbandonedPerCaller))

	var served, total, hostileServed atomic.Int64
	stop := make(chan struct{})
	var hostile sync.WaitGroup
	for range 4 {
		hostile.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if listAs("mallory") {
					hostileServed.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	for _, user := range []string{"alice", "bob", "carol"} {
		wg.Go(func() {
			for range 50 {
				total.Add(1)
				if listAs(user) {
					served.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	hostile.Wait()
	t.Logf("honest served %d of %d; mallory's List called %d times", served.Load(), total.Load(), malloryCalls.Load())
	assert.GreaterOrEqual(t, float64(served.Load()), 0.99*float64(total.Load()), "honest callers served")
	assert.Zero(t, hostileServed.Load())
	assert.Equal(t, burst, malloryCalls.Load(), "mallory refused once her share is stuck, her List not called")
}

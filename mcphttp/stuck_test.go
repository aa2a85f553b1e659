package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// Issue 35, over loopback: a crowd of 8, 16 or 32 subjects whose List
// ignores its context, each firing eight concurrent lists (inside every
// per-caller limit), used to fill the inventory's 64 abandoned callbacks
// (8 × 8) and answer every other caller "Internal error" (alice 0 of 50).
// A caller holding no abandoned callback is now admitted while fewer than
// 64 callers hold some, and the shares of those who do shrink as more
// do; the refusals are logged at WARN, rate-limited, without names.
// Fails before: honest served 0 %.
func TestStuckCallbacksOfACrowdOverLoopback(t *testing.T) {
	for _, n := range []int{8, 16, 32} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			var crowdCalls atomic.Int64
			list := func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
				if strings.HasPrefix(req.Principal.Subject, "mallory") {
					crowdCalls.Add(1)
					<-release // never looks at its context
				}
				return inventory.Page{Entries: []inventory.Entry{{Key: "k1", URI: "docs://documents/d1", Name: "One"}}}, nil
			}
			log := &lockedBuffer{}
			inv, err := inventory.New(nil, []inventory.Template{{Name: "documents", URITemplate: "docs://documents/{id}",
				RequiredScopes: []string{"docs:read"}, List: list, Read: inventory.TextReader("text/plain", "x")}},
				inventory.Options{CallbackTimeout: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(log, nil))})
			require.NoError(t, err)
			ep, err := mcphttp.New(inv, mcphttp.Options{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			srv := httptest.NewServer(serviceAuth(ep))
			defer srv.Close()

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
			for i := range n {
				for range inventory.MaxAbandonedPerCaller {
					wg.Go(func() { assert.False(t, listAs(fmt.Sprintf("mallory%02d", i))) })
				}
			}
			wg.Wait()
			stuck := inv.AbandonedCallbacks()

			var served, total, hostileServed atomic.Int64
			stop := make(chan struct{})
			var hostile sync.WaitGroup
			for g := range 4 { // the crowd goes on firing beside them
				hostile.Go(func() {
					for i := g; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if listAs(fmt.Sprintf("mallory%02d", i%n)) {
							hostileServed.Add(1)
						}
						time.Sleep(time.Millisecond)
					}
				})
			}
			for _, user := range []string{"alice", "bob", "carol"} {
				wg.Go(func() {
					for range 20 {
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
			t.Logf("%d subjects, %d callbacks stuck: honest served %d of %d; the crowd's List called %d times",
				n, stuck, served.Load(), total.Load(), crowdCalls.Load())
			assert.GreaterOrEqual(t, float64(served.Load()), 0.95*float64(total.Load()), "honest callers served")
			assert.Zero(t, hostileServed.Load())
			logged := log.String()
			assert.Contains(t, logged, "level=WARN msg=\"inventory: abandoned callbacks refuse calls\"")
			assert.Equal(t, 1, strings.Count(logged, "abandoned callbacks refuse calls"), "rate-limited")
			for _, line := range strings.Split(logged, "\n") {
				if strings.Contains(line, "refuse calls") {
					assert.NotContains(t, line, "mallory")
				}
			}
		})
	}
}

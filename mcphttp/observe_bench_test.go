package mcphttp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// nopObserver is the cheapest Observer: it measures the seam itself.
type nopObserver struct{}

func (nopObserver) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (nopObserver) End(context.Context, mcphttp.Call)                         {}

// keepObserver keeps End's copy of the Call, as an observer that queues
// or batches records does.
type keepObserver struct{ sink *mcphttp.Call }

func (keepObserver) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (o keepObserver) End(_ context.Context, c mcphttp.Call)                   { *o.sink = c }

// serveList serves one in-process resources/list (a 50-entry page, cached
// token) and fails the benchmark unless it is a 200.
func serveList(b *testing.B, h http.Handler, body, token string) {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("status %d", w.Code)
	}
}

// BenchmarkObserverCost serves the list path in process, interleaving in
// one loop the endpoint without an Observer, with a no-op Observer (the
// seam's own cost), with one that keeps End's copy of the Call, with the Audit writing to a discarding slog handler,
// and with a RateLimiter that never refuses, then without again (a control
// for the noise), so all see the same machine load. It reports each
// variant's mean time and its ratio to the first one without.
func BenchmarkObserverCost(b *testing.B) {
	f := mcptest.New(b, mcptest.Options{PageSize: 50})
	f.Store.Add("alice", 500)
	token := f.Token(b, "alice")
	body := mcptest.Legacy(1, "resources/list", nil)
	limiter, err := ratelimit.New(ratelimit.Limits{List: ratelimit.Rate{PerSecond: 1e9, Burst: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	variants := []struct {
		name  string
		parts []mcphttp.Part
	}{
		{"none", nil},
		{"nop", []mcphttp.Part{mcphttp.Observe(nopObserver{})}},
		{"keep", []mcphttp.Part{mcphttp.Observe(keepObserver{new(mcphttp.Call)})}},
		{"audit", []mcphttp.Part{mcphttp.Observe(audit.New(audit.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))}},
		{"limiter", []mcphttp.Part{limiter.Part()}},
		{"none-again", nil}, // a control: the noise of the measurement
	}
	handlers := make([]http.Handler, len(variants))
	for i, v := range variants {
		ep, err := mcphttp.New(f.Inv, mcphttp.Options{Authenticator: f.Auth}, v.parts...)
		if err != nil {
			b.Fatal(err)
		}
		handlers[i] = ep
		serveList(b, ep, body, token) // warm the token cache and the pools
	}
	took := make([]time.Duration, len(variants))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		for j := range handlers {
			i := (j + n) % len(handlers) // each variant in every position in turn
			t0 := time.Now()
			serveList(b, handlers[i], body, token)
			took[i] += time.Since(t0)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(took[i].Nanoseconds())/float64(b.N), v.name+"-ns/req")
		if i > 0 {
			b.ReportMetric(float64(took[i])/float64(took[0]), v.name+"/none")
		}
	}
}

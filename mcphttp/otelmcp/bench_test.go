package otelmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
)

// discard is a span processor that drops ended spans: the SDK records
// them, nothing exports them.
type discard struct{}

func (discard) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discard) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discard) Shutdown(context.Context) error                  { return nil }
func (discard) ForceFlush(context.Context) error                { return nil }

// BenchmarkAdapterCost serves an in-process resources/list page (50
// entries) for a principal in the context, interleaving in one loop, in
// rotating order: the endpoint without an Observer, with the adapter on
// the global (no-op) providers, with the adapter on the SDK (every span
// recorded and dropped, the histogram aggregated), and without again (the
// noise). It reports each mean and its ratio to the first.
func BenchmarkAdapterCost(b *testing.B) {
	entries := make([]inventory.Entry, 50)
	for i := range entries {
		id := string(rune('a'+i/26)) + string(rune('a'+i%26))
		entries[i] = inventory.Entry{Key: "k" + id, URI: "docs://documents/" + id, Name: "Document " + id}
	}
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"},
		List: func(context.Context, inventory.ListRequest) (inventory.Page, error) {
			return inventory.Page{Entries: entries}, nil
		},
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, inventory.ErrNotFound
		},
	}}, inventory.Options{PageSize: 50})
	if err != nil {
		b.Fatal(err)
	}
	auth, err := authn.NewAuthenticator(nil, authn.Options{Resource: testResource})
	if err != nil {
		b.Fatal(err)
	}
	noop, err := otelmcp.New(otelmcp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sdk, err := otelmcp.New(otelmcp.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{})),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
	})
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"none", "noop-providers", "sdk", "none-again"}
	handlers := make([]http.Handler, len(names))
	for i, obs := range []mcphttp.Observer{nil, noop, sdk, nil} {
		if handlers[i], err = mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, mcphttp.Observe(obs)); err != nil {
			b.Fatal(err)
		}
	}
	alice := principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"docs:read"}, Audience: testResource}
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`
	serve := func(h http.Handler) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		ctx, err := principal.NewContext(r.Context(), alice)
		if err != nil {
			b.Fatal(err)
		}
		r = r.WithContext(ctx)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	for _, h := range handlers {
		serve(h)
	}
	took := make([]time.Duration, len(handlers))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		for j := range handlers {
			i := (j + n) % len(handlers)
			t0 := time.Now()
			serve(handlers[i])
			took[i] += time.Since(t0)
		}
	}
	for i, name := range names {
		b.ReportMetric(float64(took[i].Nanoseconds())/float64(b.N), name+"-ns/req")
		if i > 0 {
			b.ReportMetric(float64(took[i])/float64(took[0]), name+"/none")
		}
	}
}

package mcphttp_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// BenchmarkObservedPage serves the private page (a 50-entry
// resources/list of the caller's, cached token) without an Observer and
// with a no-op one, as sub-benchmarks of one run: their allocations and
// bytes per request are exact, their times as noisy as the machine; and
// End's copy of a Call alone ("end").
func BenchmarkObservedPage(b *testing.B) {
	f := mcptest.New(b, mcptest.Options{PageSize: 50})
	f.Store.Add("alice", 500)
	token := f.Token(b, "alice")
	body := mcptest.Legacy(1, "resources/list", map[string]any{"_meta": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}})
	for _, v := range []struct {
		name  string
		parts []mcphttp.Part
	}{{"none", nil}, {"nop", []mcphttp.Part{mcphttp.Observe(nopObserver{})}}} {
		ep, err := mcphttp.New(f.Inv, mcphttp.Options{Authenticator: f.Auth}, v.parts...)
		if err != nil {
			b.Fatal(err)
		}
		serveList(b, ep, body, token) // warm the token cache and the pools
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serveList(b, ep, body, token)
			}
		})
	}
	// What End's copy adds per observer: a Call handed by value through
	// the interface, against the page above.
	c := &mcphttp.Call{Method: "resources/list", Params: []byte(`{}`), ProtocolVersion: "2025-11-25", Target: "documents", URI: "docs://x", Status: 200}
	var ob mcphttp.Observer = nopObserver{}
	ctx := context.Background()
	b.Run("end", func(b *testing.B) {
		for b.Loop() {
			kept := *c
			_ = kept.Class() // the endpoint keeps the class for End's copy
			kept.Params = nil
			ob.End(ctx, kept)
		}
	})
}

package interop_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The cost of Intercept in front of a real go-sdk server: a forwarded
// request (tools/list) direct and through the wrapper.

func legacySDKHandler() http.Handler {
	s := goSDKServer()
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

func toolsListRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(jsonRPC(1, "tools/list", nil))))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	return r
}

// BenchmarkLegacyDirect calls a stateless go-sdk handler with tools/list.
func BenchmarkLegacyDirect(b *testing.B) {
	h := legacySDKHandler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, toolsListRequest())
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
	}
}

// BenchmarkInterceptPassthrough sends the same request through Intercept,
// which peeks at the method and forwards it.
func BenchmarkInterceptPassthrough(b *testing.B) {
	f := newInterceptFixture(b)
	h, err := f.intercept(legacySDKHandler(), false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, toolsListRequest())
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
	}
}

// BenchmarkInterceptVsDirect alternates a direct call of the legacy handler
// and the same request through Intercept in one loop, and reports the ratio
// of their mean times.
func BenchmarkInterceptVsDirect(b *testing.B) {
	f := newInterceptFixture(b)
	direct := legacySDKHandler()
	wrapped, err := f.intercept(legacySDKHandler(), false)
	if err != nil {
		b.Fatal(err)
	}
	var directTime, wrappedTime time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		w := httptest.NewRecorder()
		direct.ServeHTTP(w, toolsListRequest())
		t1 := time.Now()
		w2 := httptest.NewRecorder()
		wrapped.ServeHTTP(w2, toolsListRequest())
		directTime += t1.Sub(t0)
		wrappedTime += time.Since(t1)
		if w.Code != 200 || w2.Code != 200 {
			b.Fatalf("status %d / %d", w.Code, w2.Code)
		}
	}
	b.ReportMetric(float64(directTime.Nanoseconds())/float64(b.N), "direct-ns/req")
	b.ReportMetric(float64(wrappedTime.Nanoseconds())/float64(b.N), "intercept-ns/req")
	b.ReportMetric(float64(wrappedTime)/float64(directTime), "ratio")
}

package mcphttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// listRequest builds the benchmark's resources/list POST.
func listRequest(b *testing.B, url, token string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(legacy(1, "resources/list", nil)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Origin", url[:strings.LastIndex(url, "/")])
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func send(b *testing.B, c *http.Client, req *http.Request, body string) int {
	req.Body = io.NopCloser(strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	return int(n)
}

// BenchmarkListRequest is a full resources/list request over loopback HTTP:
// Origin check, cached bearer token, strict decode, a 50-entry page from an
// in-memory keyset source, a sealed cursor, the response write.
func BenchmarkListRequest(b *testing.B) {
	f := newFixture(b, fixtureOptions{pageSize: 50})
	f.store.add("alice", 500)
	srv := httptest.NewServer(f.ep)
	defer srv.Close()
	token := f.token(b, "alice")
	body := legacy(1, "resources/list", nil)
	req := listRequest(b, srv.URL+"/mcp", token)
	c := srv.Client()
	size := send(b, c, req, body) // warm the token cache
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		send(b, c, req, body)
	}
}

// BenchmarkListBaseline is the same request to a bare net/http handler that
// reads the body and writes the very bytes the endpoint produced.
func BenchmarkListBaseline(b *testing.B) {
	f := newFixture(b, fixtureOptions{pageSize: 50})
	f.store.add("alice", 500)
	token := f.token(b, "alice")
	body := legacy(1, "resources/list", nil)
	rec := f.do(b, request{body: body, token: token, headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	canned := rec.Body.Bytes()
	srv := httptest.NewServer(bareHandler(canned))
	defer srv.Close()
	req := listRequest(b, srv.URL+"/mcp", token)
	c := srv.Client()
	b.SetBytes(int64(send(b, c, req, body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		send(b, c, req, body)
	}
}

// BenchmarkListVsBaseline alternates the two requests above in one loop, so
// that both see the same machine load, and reports the ratio of their
// mean times (the target is ≤ 1.2).
func BenchmarkListVsBaseline(b *testing.B) {
	f := newFixture(b, fixtureOptions{pageSize: 50})
	f.store.add("alice", 500)
	token := f.token(b, "alice")
	body := legacy(1, "resources/list", nil)
	kit := httptest.NewServer(f.ep)
	defer kit.Close()
	rec := f.do(b, request{body: body, token: token, headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	canned := rec.Body.Bytes()
	bare := httptest.NewServer(bareHandler(canned))
	defer bare.Close()
	kitReq, bareReq := listRequest(b, kit.URL+"/mcp", token), listRequest(b, bare.URL+"/mcp", token)
	send(b, kit.Client(), kitReq, body)
	send(b, bare.Client(), bareReq, body)
	var kitTime, bareTime time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		send(b, kit.Client(), kitReq, body)
		t1 := time.Now()
		send(b, bare.Client(), bareReq, body)
		kitTime += t1.Sub(t0)
		bareTime += time.Since(t1)
	}
	b.ReportMetric(float64(kitTime.Nanoseconds())/float64(b.N), "kit-ns/req")
	b.ReportMetric(float64(bareTime.Nanoseconds())/float64(b.N), "bare-ns/req")
	b.ReportMetric(float64(kitTime)/float64(bareTime), "ratio")
}

// bareHandler is the baseline: a plain net/http handler that reads the
// body and writes canned bytes with the endpoint's headers.
func bareHandler(canned []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "private, max-age=0")
		h.Set("Vary", "Authorization")
		_, _ = w.Write(canned)
	})
}

// The Intercept benchmarks against a real go-sdk server
// (BenchmarkLegacyDirect, BenchmarkInterceptPassthrough,
// BenchmarkInterceptVsDirect) are in examples/interop, outside the core
// module.

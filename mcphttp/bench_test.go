package mcphttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// listRequest builds the benchmark's resources/list POST.
func listRequest(b *testing.B, url, token string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(mcptest.Legacy(1, "resources/list", nil)))
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
	f := mcptest.New(b, mcptest.Options{PageSize: 50})
	f.Store.Add("alice", 500)
	srv := httptest.NewServer(f.EP)
	defer srv.Close()
	token := f.Token(b, "alice")
	body := mcptest.Legacy(1, "resources/list", nil)
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
	f := mcptest.New(b, mcptest.Options{PageSize: 50})
	f.Store.Add("alice", 500)
	token := f.Token(b, "alice")
	body := mcptest.Legacy(1, "resources/list", nil)
	rec := f.Do(b, mcptest.Request{Body: body, Token: token, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
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
	f := mcptest.New(b, mcptest.Options{PageSize: 50})
	f.Store.Add("alice", 500)
	token := f.Token(b, "alice")
	body := mcptest.Legacy(1, "resources/list", nil)
	kit := httptest.NewServer(f.EP)
	defer kit.Close()
	rec := f.Do(b, mcptest.Request{Body: body, Token: token, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
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

// inProcess is the kit's private page as examples/bench serves it (a
// JWT verified against a JWK Set over HTTP, the token cache, a List
// callback slicing prepared entries, page size 50, sealed cursors), for
// benchmarks that call the handler directly: the server's own cost,
// without the network or a client.
type inProcess struct {
	kit, static http.Handler
	token       string
	entries     []inventory.Entry
}

func newInProcess(b *testing.B) *inProcess {
	is := testissuer.Start(b, testissuer.Options{Audience: mcptest.Resource})
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: mcptest.Resource, JWKSURL: is.JWKSURL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: mcptest.Resource, Scopes: []string{"docs:read"}})
	if err != nil {
		b.Fatal(err)
	}
	p := &inProcess{token: is.Token(b, testissuer.Claims{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}})}
	for i := range 100_000 {
		id := fmt.Sprintf("d%06d", i)
		p.entries = append(p.entries, inventory.Entry{Key: fmt.Sprintf("k%08d", i), URI: "docs://documents/" + id, Name: "Quarterly report " + id})
	}
	list := func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
		i := sort.Search(len(p.entries), func(i int) bool { return p.entries[i].Key > req.After })
		end := min(i+req.Limit, len(p.entries))
		return inventory.Page{Entries: p.entries[i:end:end], HasMore: end < len(p.entries)}, nil
	}
	read := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		return nil, inventory.ErrNotFound
	}
	inv, err := inventory.New(nil, []inventory.Template{{Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{"docs:read"}, List: list, Read: read}}, inventory.Options{PageSize: 50})
	if err != nil {
		b.Fatal(err)
	}
	if p.kit, err = mcphttp.New(inv, mcphttp.Options{Authenticator: auth}); err != nil {
		b.Fatal(err)
	}
	var statics []inventory.Resource
	for i := range 50 {
		id := fmt.Sprintf("s%06d", i)
		statics = append(statics, inventory.Resource{URI: "docs://static/" + id, Name: "Public report " + id, MIMEType: "text/plain",
			Access: inventory.Public, Read: inventory.TextReader("text/plain", id)})
	}
	sinv, err := inventory.New(statics, nil, inventory.Options{PageSize: 50})
	if err != nil {
		b.Fatal(err)
	}
	if p.static, err = mcphttp.New(sinv, mcphttp.Options{}); err != nil {
		b.Fatal(err)
	}
	return p
}

// nullWriter is a ResponseWriter that counts what it is given.
type nullWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *nullWriter) Header() http.Header { return w.h }

// SetReadDeadline is what net/http's own ResponseWriter offers (the body
// read deadline sets and clears it): accepted, as a connection would.
func (w *nullWriter) SetReadDeadline(time.Time) error { return nil }
func (w *nullWriter) WriteHeader(code int)            { w.status = code }
func (w *nullWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.body = append(w.body[:0], b...)
	return len(b), nil
}

// serveOnce serves one request the way net/http would hand it over: a
// fresh header map for the response, the body as a reader.
func serveOnce(b *testing.B, h http.Handler, r *http.Request, body []byte, w *nullWriter) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	w.h, w.status = make(http.Header, 4), 0
	h.ServeHTTP(w, r)
	if w.status != 200 {
		b.Fatalf("status %d: %s", w.status, w.body)
	}
}

func inProcessRequest(token string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// BenchmarkServeInProcess calls the handlers directly: kit-private (the
// first page), kit-deep (page 1,000 of 100,000, its cursor replayed),
// kit-static, and bare, a handler that reads the body and writes the
// private page's bytes with the same headers (the baseline). The
// allocations reported are the server's alone.
func BenchmarkServeInProcess(b *testing.B) {
	p := newInProcess(b)
	first := []byte(mcptest.Legacy(1, "resources/list", nil))
	var w nullWriter
	serveOnce(b, p.kit, inProcessRequest(p.token, first), first, &w) // the token is cached
	canned := bytes.Clone(w.body)
	for _, c := range []struct {
		name  string
		h     http.Handler
		token string
		body  func(b *testing.B) []byte
	}{
		{"bare", bareHandler(canned), p.token, func(*testing.B) []byte { return first }},
		{"kit-private", p.kit, p.token, func(*testing.B) []byte { return first }},
		{"kit-deep", p.kit, p.token, func(b *testing.B) []byte { return p.deep(b, 1000) }},
		{"kit-static", p.static, "", func(*testing.B) []byte { return first }},
	} {
		b.Run(c.name, func(b *testing.B) {
			growStack(16)
			body := c.body(b)
			r := inProcessRequest(c.token, body)
			var w nullWriter
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, c.h, r, body, &w)
			}
		})
	}
}

// deep walks the private listing to page n and returns the request body
// asking for it.
func (p *inProcess) deep(b *testing.B, n int) []byte {
	body := []byte(mcptest.Legacy(1, "resources/list", nil))
	var w nullWriter
	for range n - 1 {
		serveOnce(b, p.kit, inProcessRequest(p.token, body), body, &w)
		// The cursor, base64url, is the last string of the page.
		_, after, ok := bytes.Cut(w.body, []byte(`"nextCursor":"`))
		cursor, _, _ := bytes.Cut(after, []byte(`"`))
		if !ok || len(cursor) == 0 {
			b.Fatal("walking the listing")
		}
		body = []byte(mcptest.Legacy(1, "resources/list", map[string]any{"cursor": string(cursor)}))
	}
	return body
}

// growStack grows the goroutine's stack to some 128 KiB before a
// measurement, so that it never moves during one (instruction counters
// such as callgrind lose track of calls when a stack is copied; with the
// collector off, a stack does not shrink either).
//
//go:noinline
func growStack(n int) byte {
	var buf [8 << 10]byte
	buf[n] = byte(n)
	if n > 0 {
		return growStack(n-1) + buf[n]
	}
	return buf[0]
}

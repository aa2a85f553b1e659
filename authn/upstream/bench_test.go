package upstream

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
)

// staticTransport is the baseline: the same upstream call with a token
// the service already holds.
type staticTransport struct{ base http.RoundTripper }

// upstreamRT answers every request in process, so that what is timed is
// the kit's work, not a loopback round trip.
type upstreamRT struct{}

func (upstreamRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		return &http.Response{StatusCode: 401, Body: http.NoBody, Request: r}, nil
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

func (t staticTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer static")
	return t.base.RoundTrip(r)
}

// BenchmarkCachedUpstreamToken: one upstream GET through an Exchanger's
// client with the caller's token cached, against the same GET with a
// static token, alternately in one run (exchanges: 1, before the timer).
// The upstream answers in process: the difference is the kit's work per
// call (a real upstream adds its round trip to both).
func BenchmarkCachedUpstreamToken(b *testing.B) {
	as := newExchangeAS(&testing.T{})
	defer as.Close()
	const api = "https://photos.example/api/photos"
	x, err := NewExchanger(ExchangeOptions{TokenURL: as.URL, ClientID: "mcp", ClientSecret: "s3cret", Audience: "https://photos.example/api",
		Transport: upstreamRT{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := withSubject("A")
	caller := alice()
	static := &http.Client{Transport: staticTransport{upstreamRT{}}}
	call := func(c *http.Client) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api, nil)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	call(x.Client(ctx, caller)) // the one exchange
	var base, other time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		call(static)
		t1 := time.Now()
		call(x.Client(context.WithoutCancel(ctx), caller))
		base += t1.Sub(t0)
		other += time.Since(t1)
	}
	b.StopTimer()
	if n := as.calls.Load(); n != 1 {
		b.Fatalf("%d exchanges, want 1", n)
	}
	benchpair.Report(b, "call", "static", base, "exchanged", other)
}

// BenchmarkCachedTokenLookup: what a cached token costs a call: the
// cache lookup by the caller's binding.
func BenchmarkCachedTokenLookup(b *testing.B) {
	as := newExchangeAS(&testing.T{})
	defer as.Close()
	x, err := NewExchanger(ExchangeOptions{TokenURL: as.URL, ClientID: "mcp", ClientSecret: "s3cret", Audience: "https://photos.example/api",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, caller := withSubject("A"), alice()
	if _, err := x.Token(ctx, caller); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := x.Token(ctx, caller); err != nil {
			b.Fatal(err)
		}
	}
}

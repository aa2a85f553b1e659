package otelmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/notify"
)

const testResource = "https://mcp.example.com/mcp"

// fixture is an endpoint observed by the adapter with an in-memory span
// recorder and a manual metric reader. Its documents' List and Read
// callbacks start a "db.query" span of their own, as an application's
// database driver would.
type fixture struct {
	issuer *testissuer.Issuer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	ep     http.Handler
	tp     *sdktrace.TracerProvider
	taken  int // spans ended and already returned by ended
}

func newFixture(t testing.TB, opts otelmcp.Options, hub *notify.Hub) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	opts.TracerProvider, opts.MeterProvider = f.tp, mp
	obs, err := otelmcp.New(opts)
	require.NoError(t, err)

	f.issuer = testissuer.Start(t, testissuer.Options{Audience: testResource})
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: f.issuer.ID(), Resource: testResource, JWKSURL: f.issuer.JWKSURL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: testResource, Scopes: []string{"docs:read"}})
	require.NoError(t, err)

	db := f.tp.Tracer("app/db")
	docs := inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain", RequiredScopes: []string{"docs:read"},
		List: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			_, span := db.Start(ctx, "db.query")
			defer span.End()
			s := req.Principal.Subject
			var page inventory.Page
			for _, e := range []inventory.Entry{
				{Key: "k1", URI: "docs://documents/" + s + "-1", Name: "One"},
				{Key: "k2", URI: "docs://documents/" + s + "-2", Name: "Two"},
			} {
				switch {
				case e.Key <= req.After:
				case len(page.Entries) == req.Limit:
					page.HasMore = true
				default:
					page.Entries = append(page.Entries, e)
				}
			}
			return page, nil
		},
		Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			_, span := db.Start(ctx, "db.query")
			defer span.End()
			if !strings.HasPrefix(req.Params["id"], req.Principal.Subject+"-") {
				return nil, inventory.ErrNotFound
			}
			return []inventory.Contents{{URI: req.URI, Text: "secret contents of " + req.URI}}, nil
		},
	}
	data := inventory.Template{
		Name: "template-data", URITemplate: "test://template/{id}/data", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "data"),
		Complete: map[string]inventory.CompleteFunc{"id": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
			return inventory.Completion{Values: []string{"123"}}, nil
		}},
	}
	inv, err := inventory.New([]inventory.Resource{{URI: "docs://about", Name: "about", Access: inventory.Public, Read: inventory.TextReader("text/plain", "hi")}},
		[]inventory.Template{docs, data}, inventory.Options{PageSize: 2})
	require.NoError(t, err)
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
	require.NoError(t, err)
	toolPart, err := tools.New(builtin...)
	require.NoError(t, err)
	parts := []mcphttp.Part{toolPart, mcphttp.Observe(obs)}
	if hub != nil {
		streams, err := sessions.New(hub, sessions.Options{})
		require.NoError(t, err)
		parts = append(parts, streams)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, parts...)
	require.NoError(t, err)
	f.ep = ep
	return f
}

func (f *fixture) token(t testing.TB, subject string, scopes ...string) string {
	t.Helper()
	if scopes == nil {
		scopes = []string{"docs:read"}
	}
	return f.issuer.Token(t, testissuer.Claims{Subject: subject, ClientID: "client-1", Scopes: scopes})
}

// post serves one POST; headers with an empty value are removed.
func (f *fixture) post(t testing.TB, body, token string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	f.ep.ServeHTTP(w, r)
	return w
}

// mcpSpans returns the ended server spans (the MCP spans), and forgets
// every span recorded so far.
func (f *fixture) mcpSpans(t testing.TB) []sdktrace.ReadOnlySpan {
	t.Helper()
	var out []sdktrace.ReadOnlySpan
	for _, s := range f.ended() {
		if s.SpanKind() == trace.SpanKindServer {
			out = append(out, s)
		}
	}
	return out
}

// ended returns the spans ended since the last call.
func (f *fixture) ended() []sdktrace.ReadOnlySpan {
	all := f.spans.Ended()
	from := f.taken
	f.taken = len(all)
	return all[from:]
}

// points returns the data points of mcp.server.operation.duration.
func (f *fixture) points(t testing.TB) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, f.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "mcp.server.operation.duration" {
				require.Equal(t, "s", m.Unit)
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "a float64 histogram")
				return h.DataPoints
			}
		}
	}
	return nil
}

// attrs returns a span's or point's attributes as a map.
func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func legacy(id int, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// everything renders every exported value of spans and metric points
// (names, attributes, events, links, status), for the privacy checks.
func everything(spans []sdktrace.ReadOnlySpan, points []metricdata.HistogramDataPoint[float64]) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "span %q %q %v\n", s.Name(), s.Status().Description, s.Resource().Attributes())
		for _, kv := range s.Attributes() {
			fmt.Fprintf(&b, "  %s=%s\n", kv.Key, kv.Value.String())
		}
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "  event %q %v\n", e.Name, e.Attributes)
		}
		for _, l := range s.Links() {
			fmt.Fprintf(&b, "  link %v\n", l.Attributes)
		}
	}
	for _, p := range points {
		kvs := p.Attributes.ToSlice()
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
		for _, kv := range kvs {
			fmt.Fprintf(&b, "point %s=%s\n", kv.Key, kv.Value.String())
		}
	}
	return b.String()
}

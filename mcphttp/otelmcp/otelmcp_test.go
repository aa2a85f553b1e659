package otelmcp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
	"github.com/mcpkit/mcpkit/notify"
)

// TestSpansAndMetrics serves one call per row and checks its span (name,
// kind, attributes, status) and its histogram point.
func TestSpansAndMetrics(t *testing.T) {
	f := newFixture(t, otelmcp.Options{}, nil)
	alice := f.token(t, "alice")
	noScope := f.token(t, "dave", "other:scope")
	complete := map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "1"}}

	for _, tc := range []struct {
		name, body, token string
		status            int
		span              string
		want              map[string]string // attributes; "" means absent
		errorType         string
	}{
		{name: "list", body: legacy(1, "resources/list", nil), token: alice, status: 200, span: "resources/list",
			want: map[string]string{"mcp.method.name": "resources/list", "mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "1",
				"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1",
				"http.response.status_code": "200", "mcpkit.outcome": "ok", "mcpkit.page.entries": "2", "mcpkit.target": "", "mcp.session.id": ""}},
		{name: "read", body: legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-1"}), token: alice, status: 200,
			span: "resources/read documents", want: map[string]string{"mcpkit.target": "documents", "mcp.resource.uri": "", "mcpkit.page.entries": ""}},
		{name: "templates/list", body: legacy(3, "resources/templates/list", nil), status: 200, span: "resources/templates/list",
			want: map[string]string{"mcp.method.name": "resources/templates/list", "mcpkit.page.entries": "2"}},
		{name: "completion", body: legacy(4, "completion/complete", complete), status: 200, span: "completion/complete template-data",
			want: map[string]string{"mcp.method.name": "completion/complete"}},
		{name: "401 without a token", body: legacy(5, "resources/list", nil), status: 401, span: "resources/list", errorType: "401",
			want: map[string]string{"http.response.status_code": "401", "mcpkit.outcome": "unauthenticated", "rpc.response.status_code": ""}},
		{name: "401 forged token", body: legacy(6, "resources/list", nil), token: alice + "x", status: 401, span: "resources/list", errorType: "401",
			want: map[string]string{"mcpkit.outcome": "unauthenticated", "mcp.protocol.version": ""}},
		{name: "403 missing scope", body: legacy(7, "resources/read", map[string]any{"uri": "docs://documents/dave-1"}), token: noScope, status: 403,
			span: "resources/read documents", errorType: "403", want: map[string]string{"mcpkit.outcome": "denied"}},
		{name: "invalid cursor", body: legacy(8, "resources/list", map[string]any{"cursor": "AAAAAAAAAAAA"}), token: alice, status: 200,
			span: "resources/list", errorType: "-32602",
			want: map[string]string{"rpc.response.status_code": "-32602", "mcpkit.cursor.reason": inventory.ReasonInvalid, "mcpkit.outcome": "invalid_cursor"}},
		{name: "read not found", body: legacy(9, "resources/read", map[string]any{"uri": "docs://documents/bob-1"}), token: alice, status: 200,
			span: "resources/read documents", errorType: "-32002", want: map[string]string{"mcpkit.outcome": "not_found"}},
		// Method names are client input: unknown ones are one name.
		{name: "unknown method", body: legacy(10, "tools/x-"+strings.Repeat("a", 40), nil), status: 200, span: "_OTHER", errorType: "-32601",
			want: map[string]string{"mcp.method.name": "_OTHER"}},
		{name: "string id", body: `{"jsonrpc":"2.0","id":"req-\"7\"","method":"ping"}`, status: 200, span: "ping",
			want: map[string]string{"jsonrpc.request.id": `req-"7"`}},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202, span: "notifications/initialized",
			want: map[string]string{"jsonrpc.request.id": "", "http.response.status_code": "202"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now()
			w := f.post(t, tc.body, tc.token, nil)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			spans := f.mcpSpans(t)
			require.Len(t, spans, 1)
			s := spans[0]
			assert.Equal(t, tc.span, s.Name())
			assert.Equal(t, trace.SpanKindServer, s.SpanKind())
			assert.Equal(t, otelmcp.ScopeName, s.InstrumentationScope().Name)
			assert.False(t, s.StartTime().Before(before))
			assert.True(t, s.EndTime().After(s.StartTime()))
			got := attrs(s.Attributes())
			for k, v := range tc.want {
				if v == "" {
					assert.NotContains(t, got, k)
				} else {
					assert.Equal(t, v, got[k], k)
				}
			}
			if tc.errorType == "" {
				assert.NotContains(t, got, "error.type")
				assert.Equal(t, codes.Unset, s.Status().Code)
			} else {
				assert.Equal(t, tc.errorType, got["error.type"])
				assert.Equal(t, codes.Error, s.Status().Code)
			}
		})
	}

	// One histogram point per distinct attribute set: the calls are all
	// counted, with their method and error type, and nothing of high
	// cardinality (ids, sessions, subjects, URIs) is a dimension.
	points := f.points(t)
	var total uint64
	byKey := map[string]uint64{}
	for _, p := range points {
		total += p.Count
		a := attrs(p.Attributes.ToSlice())
		byKey[a["mcp.method.name"]+" "+a["error.type"]] += p.Count
		for _, k := range []string{"jsonrpc.request.id", "mcp.session.id", "enduser.id", "mcp.resource.uri", "mcpkit.target"} {
			assert.NotContains(t, a, k)
		}
		assert.Equal(t, "tcp", a["network.transport"])
		assert.Equal(t, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}, p.Bounds)
	}
	assert.Equal(t, uint64(12), total)
	assert.Equal(t, map[string]uint64{
		"resources/list ": 1, "resources/read ": 1, "resources/templates/list ": 1, "completion/complete ": 1,
		"resources/list 401": 2, "resources/read 403": 1, "resources/list -32602": 1, "resources/read -32002": 1,
		"_OTHER -32601": 1, "ping ": 1, "notifications/initialized ": 1,
	}, byKey)
}

// TestCallbackSpanIsAChild: an application's span started in List or Read
// is a child of the MCP span.
func TestCallbackSpanIsAChild(t *testing.T) {
	f := newFixture(t, otelmcp.Options{}, nil)
	alice := f.token(t, "alice")
	for _, body := range []string{legacy(1, "resources/list", nil), legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-2"})} {
		require.Equal(t, http.StatusOK, f.post(t, body, alice, nil).Code)
		spans := f.ended()
		require.Len(t, spans, 2, "db.query and the MCP span")
		db, mcp := spans[0], spans[1]
		require.Equal(t, "db.query", db.Name())
		assert.Equal(t, mcp.SpanContext().SpanID(), db.Parent().SpanID())
		assert.Equal(t, mcp.SpanContext().TraceID(), db.SpanContext().TraceID())
	}
}

// TestTraceContext: the parent comes from params._meta, else from the
// traceparent header; with both, the header's context is a link.
func TestTraceContext(t *testing.T) {
	f := newFixture(t, otelmcp.Options{}, nil)
	const (
		headerTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		metaTP   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	sc := func(tp string) trace.SpanContext {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
		return trace.SpanContextFromContext(ctx)
	}
	withMeta := func(tp string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"` + tp + `","tracestate":"rojo=00f067aa0ba902b7"}}}`
	}
	for _, tc := range []struct {
		name, body, header string
		parent             string // the traceparent the span's parent must be; "" for a root
		link               string
	}{
		{name: "header", body: legacy(1, "ping", nil), header: headerTP, parent: headerTP},
		{name: "_meta", body: withMeta(metaTP), parent: metaTP},
		{name: "_meta and header: _meta parents, header links", body: withMeta(metaTP), header: headerTP, parent: metaTP, link: headerTP},
		{name: "neither: a root", body: legacy(1, "ping", nil)},
		// Attack rows: a malformed traceparent is ignored, never trusted.
		{name: "invalid _meta falls back to the header", body: withMeta("00-zz-yy-01"), header: headerTP, parent: headerTP},
		{name: "all-zero trace id", body: withMeta("00-00000000000000000000000000000000-b7ad6b7169203331-01")},
		{name: "invalid header", body: legacy(1, "ping", nil), header: "garbage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.post(t, tc.body, "", map[string]string{"traceparent": tc.header})
			spans := f.mcpSpans(t)
			require.Len(t, spans, 1)
			s := spans[0]
			if tc.parent == "" {
				assert.False(t, s.Parent().IsValid(), "a root span")
			} else {
				want := sc(tc.parent)
				assert.Equal(t, want.TraceID(), s.SpanContext().TraceID())
				assert.Equal(t, want.SpanID(), s.Parent().SpanID())
				assert.True(t, s.Parent().IsRemote())
			}
			if tc.parent == metaTP {
				assert.Equal(t, "rojo=00f067aa0ba902b7", s.SpanContext().TraceState().String(), "tracestate from _meta")
			}
			if tc.link == "" {
				assert.Empty(t, s.Links())
			} else {
				require.Len(t, s.Links(), 1)
				assert.Equal(t, sc(tc.link).SpanID(), s.Links()[0].SpanContext.SpanID())
			}
		})
	}
}

// TestSessionAttribute: calls in a legacy session carry mcp.session.id.
func TestSessionAttribute(t *testing.T) {
	hub := notify.New(notify.Options{})
	t.Cleanup(hub.Close)
	f := newFixture(t, otelmcp.Options{}, hub)
	alice := f.token(t, "alice")
	w := f.post(t, legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}}), alice, nil)
	id := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	f.post(t, legacy(2, "resources/list", nil), alice, map[string]string{"Mcp-Session-Id": id})
	spans := f.mcpSpans(t)
	require.Len(t, spans, 2)
	for _, s := range spans {
		assert.Equal(t, id, attrs(s.Attributes())["mcp.session.id"], s.Name())
	}
}

// TestToolCalls: tool calls through the tools bridge are spans named after
// the tool (a registered name), with the GenAI attributes; a tool error
// result (isError) has error.type tool_error and an Error status; an
// unknown tool is a protocol error whose name is not exported; the read's
// callback span is a child of the tool call's span.
func TestToolCalls(t *testing.T) {
	f := newFixture(t, otelmcp.Options{}, nil)
	alice := f.token(t, "alice")
	call := func(id int, name string, args map[string]any) string {
		return legacy(id, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	for _, tc := range []struct {
		name, body, span, tool, errorType, rpcCode string
	}{
		{"read_resource", call(1, "read_resource", map[string]any{"uri": "docs://documents/alice-1"}), "tools/call read_resource", "read_resource", "", ""},
		{"list_resources", call(2, "list_resources", nil), "tools/call list_resources", "list_resources", "", ""},
		{"a tool error result", call(3, "read_resource", map[string]any{"uri": "docs://documents/bob-1"}), "tools/call read_resource", "read_resource", "tool_error", ""},
		{"an unknown tool", call(4, "x-"+strings.Repeat("z", 30), nil), "tools/call", "", "-32602", "-32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, http.StatusOK, f.post(t, tc.body, alice, nil).Code)
			spans := f.ended()
			mcp := spans[len(spans)-1]
			require.Equal(t, trace.SpanKindServer, mcp.SpanKind())
			assert.Equal(t, tc.span, mcp.Name())
			a := attrs(mcp.Attributes())
			assert.Equal(t, "tools/call", a["mcp.method.name"])
			if tc.tool == "" {
				assert.NotContains(t, a, "gen_ai.tool.name")
				assert.NotContains(t, a, "mcpkit.target")
			} else {
				assert.Equal(t, tc.tool, a["gen_ai.tool.name"])
				assert.Equal(t, "execute_tool", a["gen_ai.operation.name"])
			}
			assert.Equal(t, tc.errorType, a["error.type"])
			assert.Equal(t, tc.rpcCode, a["rpc.response.status_code"])
			if tc.errorType != "" {
				assert.Equal(t, codes.Error, mcp.Status().Code)
			}
			if tc.name == "read_resource" {
				require.Len(t, spans, 2)
				assert.Equal(t, "db.query", spans[0].Name())
				assert.Equal(t, mcp.SpanContext().SpanID(), spans[0].Parent().SpanID(), "the callback's span is a child")
			}
		})
	}
	byTool := map[string]uint64{}
	for _, p := range f.points(t) {
		a := attrs(p.Attributes.ToSlice())
		if a["mcp.method.name"] == "tools/call" {
			byTool[a["gen_ai.tool.name"]+" "+a["error.type"]] += p.Count
		}
	}
	assert.Equal(t, map[string]uint64{"read_resource ": 1, "list_resources ": 1, "read_resource tool_error": 1, " -32602": 1}, byTool)
}

// TestMethodCardinality: a client inventing method names adds no span
// names and no metric series.
func TestMethodCardinality(t *testing.T) {
	f := newFixture(t, otelmcp.Options{}, nil)
	for i := range 200 {
		f.post(t, legacy(i, fmt.Sprintf("x/%d", i), nil), "", nil)
	}
	names := map[string]bool{}
	for _, s := range f.mcpSpans(t) {
		names[s.Name()] = true
	}
	assert.Equal(t, map[string]bool{"_OTHER": true}, names)
	points := f.points(t)
	require.Len(t, points, 1)
	assert.Equal(t, uint64(200), points[0].Count)
}

// Without a propagator, client trace context is ignored.
func TestNoPropagator(t *testing.T) {
	f := newFixture(t, otelmcp.Options{Propagator: propagation.NewCompositeTextMapPropagator()}, nil)
	f.post(t, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`, "",
		map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	spans := f.mcpSpans(t)
	require.Len(t, spans, 1)
	assert.False(t, spans[0].Parent().IsValid())
	assert.Empty(t, spans[0].Links())
}

// TestClientInputIsBounded: ids (the decoder allows 256 bytes by default,
// more when the operator says so) and opted-in URIs of any length make
// bounded attributes and span names.
func TestClientInputIsBounded(t *testing.T) {
	f := newFixture(t, otelmcp.Options{RecordURI: true}, nil)
	long := strings.Repeat("é", 50_000)
	id := strings.Repeat("é", 120) // 240 bytes: within the decoder's 256, over the adapter's 128
	f.post(t, `{"jsonrpc":"2.0","id":"`+id+`","method":"ping"}`, "", nil)
	f.post(t, legacy(1, "resources/read", map[string]any{"uri": "docs://documents/" + long}), f.token(t, "alice"), nil)
	spans := f.mcpSpans(t)
	require.Len(t, spans, 2)
	got := attrs(spans[0].Attributes())["jsonrpc.request.id"]
	assert.Len(t, got, 128)
	assert.True(t, strings.HasPrefix(id, got), "a prefix, cut on a rune boundary")
	uri := attrs(spans[1].Attributes())["mcp.resource.uri"]
	assert.LessOrEqual(t, len(uri), 2048)
	assert.True(t, strings.HasPrefix(uri, "docs://documents/é"))
	assert.LessOrEqual(t, len(spans[1].Name()), len("resources/read ")+2048)
}

// TestNoPrivateDataByDefault is a property test: over many calls by many
// callers, with tokens in headers, cursors and _meta, no exported span
// name, attribute, event, link or metric dimension holds token bytes, a
// subject or a resource URI. With RecordSubject and RecordURI they are
// exported (the check can see them).
func TestNoPrivateDataByDefault(t *testing.T) {
	out, subjects, uris, tokens := exportCalls(t, otelmcp.Options{})
	require.Contains(t, out, "resources/read documents", "the calls were exported")
	assertNothingPrivate(t, out, subjects, uris, tokens)

	out, subjects, _, _ = exportCalls(t, otelmcp.Options{RecordSubject: true, RecordURI: true})
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "point ") {
			assert.NotContains(t, line, "subject-", "never a metric dimension")
		}
	}
	seen := 0
	for _, s := range subjects {
		if strings.Contains(out, "enduser.id="+s) && strings.Contains(out, "mcp.resource.uri=docs://documents/"+s) {
			seen++
		}
	}
	assert.Positive(t, seen, "subjects and URIs are exported when opted in")
	assert.Contains(t, out, `span "resources/read docs://documents/`, "the URI is the span name's target")
}

// exportCalls makes 300 random calls of 30 callers (some tokens forged,
// tokens in cursors and _meta, subjects in baggage) through a fixture with
// opts and returns everything exported, and the subjects, URIs and tokens
// used.
func exportCalls(t *testing.T, opts otelmcp.Options) (out string, subjects, uris, tokens []string) {
	f := newFixture(t, opts, nil)
	rng := rand.New(rand.NewPCG(14, 1))
	for i := range 30 {
		subjects = append(subjects, fmt.Sprintf("subject-%08x", rng.Uint32()))
		tok := f.token(t, subjects[i])
		if i%5 == 4 {
			tok = tok[:len(tok)-4] + "AAAA"
		}
		tokens = append(tokens, tok)
	}
	for range 300 {
		i := rng.IntN(len(subjects))
		uri := "docs://documents/" + subjects[i] + "-1"
		uris = append(uris, uri)
		var body string
		switch rng.IntN(5) {
		case 0:
			body = legacy(1, "resources/list", nil)
		case 1:
			body = legacy(2, "resources/read", map[string]any{"uri": uri})
		case 2:
			body = legacy(3, "resources/list", map[string]any{"cursor": tokens[i]})
		case 3:
			body = `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list","params":{"_meta":{"traceparent":"` + tokens[i] + `","tracestate":"` + tokens[i] + `"}}}`
		case 4:
			body = legacy(5, "resources/subscribe", map[string]any{"uri": uri})
		}
		tok := tokens[i]
		if rng.IntN(6) == 0 {
			tok = ""
		}
		f.post(t, body, tok, map[string]string{"baggage": "user=" + subjects[i]})
	}
	return everything(f.ended(), f.points(t)), subjects, uris, tokens
}

// assertNothingPrivate fails t when out holds 16 bytes of a token, a
// subject or a URI.
func assertNothingPrivate(t *testing.T, out string, subjects, uris, tokens []string) {
	t.Helper()
	for _, tok := range tokens {
		for _, part := range strings.Split(tok, ".") {
			for i := 0; i+16 <= len(part); i += 8 {
				if strings.Contains(out, part[i:i+16]) {
					t.Fatalf("token bytes exported: %q", part[i:i+16])
				}
			}
		}
	}
	for _, s := range subjects {
		if strings.Contains(out, s) {
			t.Fatalf("a subject exported: %q", s)
		}
	}
	for _, u := range uris {
		if strings.Contains(out, u) {
			t.Fatalf("a URI exported: %q", u)
		}
	}
}

// TestSubjectOfSeveralIssuers: with RecordSubject, enduser.id is the
// caller's identity key, so alice of one issuer and alice of another are
// two users in traces too; with one issuer (no Principal.Issuer) it is the
// bare subject. Without RecordSubject neither is exported.
func TestSubjectOfSeveralIssuers(t *testing.T) {
	for _, record := range []bool{true, false} {
		rec := tracetest.NewSpanRecorder()
		o, err := otelmcp.New(otelmcp.Options{
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
			RecordSubject:  record,
		})
		require.NoError(t, err)
		for _, iss := range []string{"https://a.example", "https://b.example", ""} {
			c := mcphttp.Call{
				Method:    "resources/list",
				Principal: &principal.Principal{Issuer: iss, Subject: "alice"},
				HTTP:      httptest.NewRequest(http.MethodPost, "/mcp", nil),
				Status:    http.StatusOK,
			}
			o.End(o.Start(context.Background(), c), c)
		}
		var ids []string
		for _, s := range rec.Ended() {
			if id, ok := attrs(s.Attributes())["enduser.id"]; ok {
				ids = append(ids, id)
			}
		}
		if !record {
			assert.Empty(t, ids, "no subject without RecordSubject")
			continue
		}
		assert.Equal(t, []string{"https://a.example#alice", "https://b.example#alice", "alice"}, ids)
	}
}

package otelmcp

import (
	"context"
	"fmt"
	"reflect"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// ScopeName is the instrumentation scope of the adapter's tracer and meter.
const ScopeName = "github.com/mcpkit/mcpkit/mcphttp/otelmcp"

// durationBuckets are the explicit bucket boundaries, in seconds, of the
// mcp.server.operation.duration histogram, as the conventions recommend.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Options configures an [Observer]. The zero value uses the global
// providers and W3C Trace Context, and exports no private data.
type Options struct {
	// TracerProvider makes the tracer. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter. Nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads trace context from the request's headers and from
	// params._meta. Nil means propagation.TraceContext{} (traceparent and
	// tracestate): client baggage is not taken in unless a propagator for
	// it is given. Trace context is client input: a server that must not
	// join traces its clients choose passes
	// propagation.NewCompositeTextMapPropagator() (none), and its spans
	// are then roots or children of its own HTTP middleware's.
	Propagator propagation.TextMapPropagator
	// RecordSubject adds the caller's identity key to spans as enduser.id:
	// the subject, qualified by its issuer when the verifier trusts several
	// (principal.Principal.Key), so that equal subjects of two issuers are told
	// apart. False means no subject is exported.
	RecordSubject bool
	// RecordURI adds the resource URI of reads, subscriptions and
	// completions to spans as mcp.resource.uri, and makes it the span
	// name's target. URIs are client input and can name a user's records;
	// they never reach metrics. False means no URI is exported.
	RecordURI bool
}

// Observer is the [mcphttp.Observer] that reports calls to OpenTelemetry
// (see the package documentation). It is safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	duration mcpconv.ServerOperationDuration
	prop     propagation.TextMapPropagator
	opts     Options
	sets     setCache // the attribute sets of histogram points
}

var _ mcphttp.Observer = (*Observer)(nil)

// New returns an Observer for opts. It returns an error when the meter
// refuses the histogram, and for an option that is an interface holding
// a nil pointer (a nil *sdktrace.TracerProvider, say).
func New(opts Options) (*Observer, error) {
	for name, v := range map[string]any{"TracerProvider": opts.TracerProvider, "MeterProvider": opts.MeterProvider, "Propagator": opts.Propagator} {
		if typedNil(v) {
			return nil, fmt.Errorf("otelmcp: Options.%s is a nil %T: give a built one, or leave the field nil", name, v)
		}
	}
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	o := &Observer{
		tracer: tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   opts.Propagator,
		opts:   opts,
	}
	if o.prop == nil {
		o.prop = propagation.TraceContext{}
	}
	var err error
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	if o.duration, err = mcpconv.NewServerOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, fmt.Errorf("otelmcp: %w", err)
	}
	return o, nil
}

// Start starts the call's server span and returns the context carrying it.
func (o *Observer) Start(ctx context.Context, c mcphttp.Call) context.Context {
	if r := c.HTTP; r != nil && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = o.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	method := methodName(c.Method)
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.McpMethodNameKey.String(method), semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	if r := c.HTTP; r != nil {
		attrs = append(attrs, semconv.NetworkProtocolVersion(protoVersion(r.ProtoMajor, r.ProtoMinor)))
	}
	if id, ok := requestID(c.ID); ok {
		attrs = append(attrs, semconv.JSONRPCRequestID(id))
	}
	opts := make([]trace.SpanStartOption, 0, 4)
	opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(c.Start), trace.WithAttributes(attrs...))
	if _, ok := c.Meta("traceparent"); ok {
		ambient := trace.SpanContextFromContext(ctx)
		mctx := o.prop.Extract(ctx, metaCarrier(c.Params))
		if sc := trace.SpanContextFromContext(mctx); sc.IsValid() && !sc.Equal(ambient) {
			ctx = mctx
			if ambient.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
			}
		}
	}
	ctx, _ = o.tracer.Start(ctx, method, opts...)
	return ctx
}

// End completes the span Start started and records the histogram point.
func (o *Observer) End(ctx context.Context, c mcphttp.Call) {
	method := methodName(c.Method)
	tool := c.Method == "tools/call" && c.Target != ""
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		o.annotate(span, method, tool, &c)
	}
	span.End(trace.WithTimestamp(c.Start.Add(c.Duration)))

	if !o.duration.Enabled(ctx) {
		return
	}
	k := pointKey{method: method, version: c.ProtocolVersion, errorType: c.ErrorType, code: c.Code}
	if tool {
		k.tool = c.Target
	}
	o.duration.RecordSet(ctx, c.Duration.Seconds(), o.sets.get(k, o.pointAttrs))
}

// pointAttrs returns the attributes of a histogram point: only
// low-cardinality values (never ids, sessions, subjects or URIs).
func (o *Observer) pointAttrs(k pointKey) attribute.Set {
	d := o.duration
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(k.method),
		d.AttrNetworkTransport(mcpconv.NetworkTransportTCP), d.AttrNetworkProtocolName("http"))
	if k.version != "" {
		attrs = append(attrs, d.AttrProtocolVersion(k.version))
	}
	if k.errorType != "" {
		attrs = append(attrs, d.AttrErrorType(mcpconv.ErrorTypeAttr(k.errorType)))
	}
	if k.code != 0 {
		attrs = append(attrs, d.AttrRPCResponseStatusCode(strconv.FormatInt(k.code, 10)))
	}
	if k.tool != "" {
		attrs = append(attrs, d.AttrGenAIToolName(k.tool), d.AttrGenAIOperationName(mcpconv.GenAIOperationNameExecuteTool))
	}
	return attribute.NewSet(attrs...)
}

// annotate names the span and sets what End knows.
func (o *Observer) annotate(span trace.Span, method string, tool bool, c *mcphttp.Call) {
	target := c.Target
	uri := clip(c.URI, maxURIBytes)
	if o.opts.RecordURI && uri != "" {
		target = uri
	}
	if target != "" {
		span.SetName(method + " " + target)
	}
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.HTTPResponseStatusCode(c.Status), attribute.String("mcpkit.outcome", c.Outcome.String()))
	if c.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(c.ProtocolVersion))
	}
	if c.SessionID != "" {
		attrs = append(attrs, semconv.McpSessionID(c.SessionID))
	}
	if c.Target != "" {
		attrs = append(attrs, attribute.String("mcpkit.target", c.Target))
	}
	if tool {
		attrs = append(attrs, semconv.GenAIToolName(c.Target), semconv.GenAIOperationNameExecuteTool)
	}
	if c.CursorReason != "" {
		attrs = append(attrs, attribute.String("mcpkit.cursor.reason", c.CursorReason))
	}
	if c.Method == "resources/list" || c.Method == "resources/templates/list" {
		attrs = append(attrs, attribute.Int("mcpkit.page.entries", c.Entries))
	}
	if o.opts.RecordURI && uri != "" {
		attrs = append(attrs, semconv.McpResourceURI(uri))
	}
	if o.opts.RecordSubject && c.Principal != nil && c.Principal.Subject != "" {
		attrs = append(attrs, semconv.EnduserID(c.Principal.Key()))
	}
	if c.ErrorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(c.ErrorType))
		if c.Code != 0 {
			attrs = append(attrs, semconv.RPCResponseStatusCode(strconv.FormatInt(c.Code, 10)))
		}
		span.SetStatus(codes.Error, c.Message)
	}
	span.SetAttributes(attrs...)
}

// metaCarrier reads trace context from params._meta.
type metaCarrier []byte // the call's params

func (m metaCarrier) Get(key string) string {
	v, _ := mcphttp.Call{Params: m}.Meta(key)
	return v
}

func (metaCarrier) Set(string, string) {}

func (metaCarrier) Keys() []string { return []string{"traceparent", "tracestate", "baggage"} }

// typedNil reports whether v is an interface holding a nil pointer, map,
// function or channel.
func typedNil(v any) bool {
	if v == nil {
		return false
	}
	// A nil slice is an empty list, which works (the composite
	// propagator of none, propagation.NewCompositeTextMapPropagator(), is
	// one); a nil pointer, map, function or channel is not.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

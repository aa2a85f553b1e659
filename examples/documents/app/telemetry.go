package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
)

// telemetryShutdown bounds the final export of traces and metrics.
const telemetryShutdown = 5 * time.Second

// telemetry is the server's OpenTelemetry wiring: traces and metrics over
// OTLP/HTTP (-otel, or OTEL_EXPORTER_OTLP_ENDPOINT), and metrics for
// Prometheus on a listener of their own (-metrics-addr).
type telemetry struct {
	tp      *sdktrace.TracerProvider // nil: no traces
	mp      *sdkmetric.MeterProvider // nil: no metrics
	metrics *http.Server             // the /metrics server, or nil
	ln      net.Listener
}

// startTelemetry sets up what the configuration asks for and returns the
// Observer reporting MCP calls, or nil when neither OTLP nor Prometheus
// is configured. Nothing connects before the first export: a collector
// that is down costs failed exports (logged), never a failed start.
func (a *App) startTelemetry(ctx context.Context) (mcphttp.Observer, error) {
	cfg := a.cfg
	if cfg.OTLPEndpoint == "" && cfg.MetricsAddr == "" {
		return nil, nil
	}
	t := &telemetry{}
	a.tel = t
	// The SDK's background errors (failed exports) and warnings go to the
	// service's logger, not to the standard log package and stderr. They
	// are process-wide: the last server started in a process owns them.
	otel.SetErrorHandler(otelmcp.ErrorHandler(a.log))
	otel.SetLogger(logr.FromSlogHandler(a.log.Handler()))
	res := resource.NewSchemaless(semconv.ServiceName("mcpkit-documents"), semconv.ServiceVersion(Version))
	var readers []sdkmetric.Option
	if base := strings.TrimSuffix(cfg.OTLPEndpoint, "/"); base != "" {
		te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("OTLP traces (-otel): %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(te), sdktrace.WithResource(res))
		me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
		if err != nil {
			return nil, fmt.Errorf("OTLP metrics (-otel): %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)))
	}
	if cfg.MetricsAddr != "" {
		reg := prometheus.NewRegistry() // this server's metrics only, not the process-wide default
		pe, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("prometheus exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(pe))
		if t.ln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("listen on %s (-metrics-addr): %w", cfg.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		t.metrics = mcphttp.NewServer(t.ln.Addr().String(), mux)
		go func() { _ = t.metrics.Serve(t.ln) }()
	}
	t.mp = sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
	obs, err := otelmcp.New(otelmcp.Options{TracerProvider: t.tracerProvider(), MeterProvider: t.meterProvider()})
	if err != nil {
		return nil, err
	}
	a.log.Info("telemetry", "otlp", cfg.OTLPEndpoint != "", "prometheus", t.metricsAddr())
	return obs, nil
}

func (t *telemetry) tracerProvider() trace.TracerProvider {
	if t == nil || t.tp == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.tp
}

func (t *telemetry) meterProvider() metric.MeterProvider {
	if t == nil || t.mp == nil {
		return metricnoop.NewMeterProvider()
	}
	return t.mp
}

// metricsAddr is the address of the /metrics listener, or "".
func (t *telemetry) metricsAddr() string {
	if t == nil || t.ln == nil {
		return ""
	}
	return t.ln.Addr().String()
}

// shutdown flushes what is buffered and stops the /metrics server.
func (t *telemetry) shutdown() error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryShutdown)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	if t.metrics != nil {
		errs = append(errs, t.metrics.Close())
	}
	return errors.Join(errs...)
}

// tracedStore starts a span around the store queries the MCP callbacks
// make (List, Read, IDsWithPrefix for completion, Search for the search
// tool): with the MCP span in the callback's context, each query is a
// child of the call that needed it.
type tracedStore struct {
	store.Store
	tracer trace.Tracer
}

func (s tracedStore) List(ctx context.Context, subject, after string, limit int) ([]store.Entry, error) {
	ctx, span := s.tracer.Start(ctx, "store.List", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	rows, err := s.Store.List(ctx, subject, after, limit)
	if err != nil {
		span.RecordError(err)
	}
	return rows, err
}

func (s tracedStore) Read(ctx context.Context, subject, id string) (store.Document, error) {
	ctx, span := s.tracer.Start(ctx, "store.Read", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	doc, err := s.Store.Read(ctx, subject, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		span.RecordError(err)
	}
	return doc, err
}

func (s tracedStore) IDsWithPrefix(ctx context.Context, subject, prefix string, limit int) ([]string, error) {
	ctx, span := s.tracer.Start(ctx, "store.IDsWithPrefix", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	ids, err := s.Store.IDsWithPrefix(ctx, subject, prefix, limit)
	if err != nil {
		span.RecordError(err)
	}
	return ids, err
}

func (s tracedStore) Search(ctx context.Context, subject, query string, limit int) ([]store.Entry, error) {
	ctx, span := s.tracer.Start(ctx, "store.Search", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	rows, err := s.Store.Search(ctx, subject, query, limit)
	if err != nil {
		span.RecordError(err)
	}
	return rows, err
}

// mcpStore is the store the MCP callbacks use: its searches bounded per
// caller and in all (searchGate), traced when traces are exported.
func (a *App) mcpStore() store.Store {
	if a.searches == nil {
		a.searches = newSearchGate(a.log)
	}
	var st store.Store = a.db
	if a.tel != nil && a.tel.tp != nil {
		st = tracedStore{Store: a.db, tracer: a.tel.tp.Tracer("github.com/mcpkit/mcpkit/examples/documents/store")}
	}
	return gatedStore{Store: st, gate: a.searches}
}

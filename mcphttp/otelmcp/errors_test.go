package otelmcp_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
)

// refusingExporter fails every export, as a collector that refuses does.
type refusingExporter struct{}

func (refusingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("collector refused: 400 Bad Request")
}
func (refusingExporter) Shutdown(context.Context) error { return nil }

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer = logbuf.Buffer

// A failed export reaches the service's slog handler as a Warn record,
// and nothing is printed through the standard log package.
func TestErrorHandlerRoutesExportErrorsToTheLogger(t *testing.T) {
	var stdlog, logs lockedBuffer
	prev := log.Writer()
	log.SetOutput(&stdlog)
	defer log.SetOutput(prev)
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Print(err) })) // the SDK's default

	otel.SetErrorHandler(otelmcp.ErrorHandler(slog.New(slog.NewJSONHandler(&logs, nil))))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(refusingExporter{}))
	_, span := tp.Tracer("test").Start(context.Background(), "resources/list")
	span.End()
	require.NoError(t, tp.Shutdown(context.Background())) // the final export fails: reported to the handler

	assert.Contains(t, logs.String(), `"level":"WARN"`)
	assert.Contains(t, logs.String(), `"msg":"opentelemetry: export or SDK error"`)
	assert.Contains(t, logs.String(), "collector refused: 400 Bad Request")
	assert.Empty(t, stdlog.String(), "nothing through the standard log package")
}

func TestErrorHandlerNilLoggerAndNilError(t *testing.T) {
	var logs lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	h := otelmcp.ErrorHandler(nil)
	h.Handle(nil)
	assert.Empty(t, logs.String(), "a nil error is no record")
	h.Handle(errors.New("boom"))
	assert.Contains(t, logs.String(), "boom", "nil means slog.Default()")
}

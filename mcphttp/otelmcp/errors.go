package otelmcp

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel"
)

// ErrorHandler returns an [otel.ErrorHandler] that writes each error the
// OpenTelemetry SDK reports — an export the collector refused or that did
// not arrive, an invalid setting — to log, as a Warn record
// "opentelemetry: export or SDK error" with the error in "error". Nil log
// means slog.Default(). Install it once at startup, before the providers
// start exporting:
//
//	otel.SetErrorHandler(otelmcp.ErrorHandler(logger))
//
// Without it, the SDK's default handler prints errors with the standard
// log package, beside (and unlike) the service's own records.
func ErrorHandler(log *slog.Logger) otel.ErrorHandler {
	if log == nil {
		log = slog.Default()
	}
	return otel.ErrorHandlerFunc(func(err error) {
		if err == nil {
			return
		}
		log.LogAttrs(context.Background(), slog.LevelWarn, "opentelemetry: export or SDK error", slog.String("error", err.Error()))
	})
}

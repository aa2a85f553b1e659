package otelmcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
)

// An endpoint observed by the adapter: a read of a public resource, with
// trace context in params._meta, becomes a server span named after the
// resource's registered name, in the caller's trace.
func Example() {
	spans := tracetest.NewSpanRecorder()
	obs, err := otelmcp.New(otelmcp.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	if err != nil {
		panic(err)
	}
	inv, err := inventory.New([]inventory.Resource{{URI: "docs://about", Name: "about", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "About these documents.")}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}, mcphttp.Observe(obs))
	if err != nil {
		panic(err)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs://about",` +
		`"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
	r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	ep.ServeHTTP(httptest.NewRecorder(), r)

	s := spans.Ended()[0]
	fmt.Println(s.Name(), s.SpanKind())
	fmt.Println("trace", s.SpanContext().TraceID(), "parent", s.Parent().SpanID())
	for _, kv := range s.Attributes() {
		if strings.HasPrefix(string(kv.Key), "mcp.") {
			fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
		}
	}
	// Output:
	// resources/read about server
	// trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
	// mcp.method.name=resources/read
	// mcp.protocol.version=2025-11-25
}

// The SDK's own errors — here one reported as a failed export would be —
// go to the service's logger instead of the standard log package.
func ExampleErrorHandler() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output for the example
			}
			return a
		}}))
	otel.SetErrorHandler(otelmcp.ErrorHandler(logger))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Print(err) })) // the default again

	otel.Handle(errors.New("traces export: 400 Bad Request"))
	// Output:
	// level=WARN msg="opentelemetry: export or SDK error" error="traces export: 400 Bad Request"
}

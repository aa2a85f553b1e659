// Package otelmcp reports the calls an mcphttp endpoint serves to
// OpenTelemetry, following the MCP semantic conventions
// (go.opentelemetry.io/otel/semconv/v1.41.0, the newest with mcpconv): a
// server span per call and the mcp.server.operation.duration histogram. It
// is an [mcphttp.Observer]:
//
//	obs, err := otelmcp.New(otelmcp.Options{}) // the global providers
//	if err != nil {
//		log.Fatal(err)
//	}
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, mcphttp.Observe(obs))
//
// It is a module of its own, so that the kit's core never depends on
// OpenTelemetry.
//
// # Errors of the SDK
//
// The SDK reports what goes wrong in the background — an export the
// collector refused or that did not arrive — to the global error handler,
// which by default prints it with the standard log package, and its
// warnings to the global logr logger, which by default writes to stderr:
// both beside, and unlike, a service's own slog records. Route both to the
// service's logger at startup, before the providers export:
//
//	otel.SetErrorHandler(otelmcp.ErrorHandler(logger))      // Warn records
//	otel.SetLogger(logr.FromSlogHandler(logger.Handler())) // the SDK's warnings (logr's V(1): slog level -1)
//
// # Spans
//
// Each served JSON-RPC message is a SERVER span named
// "{mcp.method.name} {target}", the target being the registered template
// or static resource of a read, subscription or completion, or the tool of
// a tool call; "{mcp.method.name}" alone without one (lists). A method the
// conventions and the MCP specification do not know is "_OTHER": method
// names are client input, and span names and metric dimensions must stay
// few. Attributes: mcp.method.name, jsonrpc.request.id (not for
// notifications), mcp.protocol.version, mcp.session.id in a legacy
// session, network.transport, network.protocol.name and version,
// http.response.status_code, error.type and rpc.response.status_code on
// failure (the span status is then Error, described by the JSON-RPC
// message), gen_ai.tool.name and gen_ai.operation.name for tools/call, and
// the kit's own mcpkit.outcome, mcpkit.target, mcpkit.cursor.reason (a cursor
// that did not open) and mcpkit.page.entries (list pages). The span starts
// when the endpoint received the message and ends when the response is
// ready, the duration of the histogram point.
//
// The inventory's callbacks run under the span's context: a database span
// an application starts in its List or Read callback is a child of the MCP
// span.
//
// # Trace context
//
// The parent is the trace context in the request's params._meta
// (traceparent, tracestate), as the conventions ask of MCP servers; the
// HTTP request's own context — a span of HTTP middleware (otelhttp), else
// the traceparent header — is then a link. Without one in _meta, the HTTP
// request's context is the parent. Options.Propagator reads both (W3C
// Trace Context by default; baggage only when a propagator for it is
// given).
//
// # Private data
//
// Never exported: token bytes (the adapter reads no header but the
// propagator's), the subject (Options.RecordSubject opts in, as enduser.id,
// on spans only), resource URIs (Options.RecordURI opts in: mcp.resource.uri
// and the URI as the span name's target, spans only), client addresses,
// cursors, params. Metrics carry only low-cardinality values. The client
// input that is exported is bounded: a request id to its first 128 bytes,
// an opted-in URI to 2048.
package otelmcp

package mcphttp

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// Call is one JSON-RPC message being served: what a method's [Handler]
// sees, and what an [Observer] is told. Fields that hold client input say
// so; everything else is the endpoint's own. A Call never holds token
// bytes, and no field but Request gives access to them: never export the
// request's headers wholesale. The endpoint reuses the *Call it gives a
// handler, a middleware and an observer's Start, and the buffer Params
// points into: keep none of it beyond their return (copy the fields you
// need; Params with bytes.Clone). An observer's End gets a copy of its
// own (see [Observer]).
type Call struct {
	// Method is the JSON-RPC method as the client sent it: client input.
	// An observer that uses it as a metric dimension or span name must map
	// methods it does not know to a fixed value.
	Method string
	// ID is the request's id; zero (IsZero) for a notification.
	ID jsonrpc.ID
	// Params are the message's params as received (client input), which
	// the strict decoder found well-formed: no duplicate or case-variant
	// member names, valid UTF-8. Read them with [jsonrpc.Members] and [jsonrpc.String].
	Params []byte
	// ProtocolVersion is the MCP protocol version the call is served
	// under; empty when it was refused before the version was decided.
	ProtocolVersion string
	// Modern reports the 2026-07-28 protocol: stateless, with _meta on
	// every request, and results that carry resultType and caching hints.
	Modern bool
	// SessionID is the legacy session the call belongs to (a validated
	// Mcp-Session-Id, or the one an initialize minted); empty without one.
	SessionID string
	// Principal is the authenticated caller; nil for an anonymous call or
	// one refused by authentication. It holds no token.
	Principal *principal.Principal
	// Request is the HTTP request that carried the call. Its Authorization
	// header holds the credentials: read the headers you need (trace
	// context), never all of them.
	Request *http.Request

	// Target is the registered name of what the call concerned: the
	// template or static resource of a read, subscription or completion,
	// the tool of a tools/call. It is never client input, so it is a
	// low-cardinality label; empty when there is none.
	Target string
	// URI is the resource URI a read, (un)subscribe or tool named, or the
	// reference of a completion, as the client sent it: client input, and
	// private (it can name a user's record). Export it only where the
	// operator opted in. A search query is never reported.
	URI string

	// Start is when the endpoint received the message (before
	// authentication), Duration how long serving it took until the
	// response was ready to write. Both are set for observers only.
	Start    time.Time
	Duration time.Duration

	// Outcome classifies the end of the call; CursorReason says why a
	// cursor did not open (inventory.ReasonInvalid, ReasonExpired) for
	// OutcomeInvalidCursor.
	Outcome      Outcome
	CursorReason string
	// Status is the HTTP status of the response (202 for a notification).
	Status int
	// Code and Message are the JSON-RPC error sent (Message a fixed text
	// of the endpoint's own, empty when the code's standard text was
	// sent); zero and empty for a result and for HTTP-only refusals.
	Code    int64
	Message string
	// ErrorType is empty for a success; otherwise the JSON-RPC error code
	// in decimal ("-32602"), for a refusal without one the HTTP status
	// ("401"), and for a tool error result ErrorTypeToolError: the
	// error.type of the OpenTelemetry conventions.
	ErrorType string
	// Entries is the number of items of a list page; Bytes is the length
	// of the JSON-RPC response body (0 for 202 and for challenges).
	Entries, Bytes int

	e *Endpoint // the endpoint serving the call

	// class is Class's answer in End's copy, which has no Params.
	class    string
	hasClass bool
}

// Meta returns the string member name of the request's params._meta
// ("traceparent", "tracestate": where MCP carries W3C trace context), and
// whether it is there. It is client input.
func (c *Call) Meta(name string) (string, bool) {
	var v string
	var found bool
	meta, ok := mcpwire.ObjectParam(c.Params, "_meta")
	if !ok {
		return "", false
	}
	_ = jsonstrict.Members(meta, func(n []byte, val jsonstrict.Value) bool {
		if string(n) == name {
			v, found = val.Str()
			return false
		}
		return true
	})
	return v, found
}

// ErrorTypeToolError is the Call.ErrorType of a tool error result
// (isError): the conventions' value for a tools/call that answered with a
// result saying it failed.
const ErrorTypeToolError = "tool_error"

// NoteTarget records, for observers, the registered name of what the
// call concerned (a tool's name); a handler that names a URI lets the
// endpoint find the template (NoteURI).
func (c *Call) NoteTarget(name string) { c.Target = name }

// NoteURI records, for observers, the resource URI (or completion
// reference) the call named.
func (c *Call) NoteURI(uri string) { c.URI = uri }

// NoteOutcome records, for observers, an outcome that the error sent does
// not tell apart (a tool error result about a missing resource, say).
func (c *Call) NoteOutcome(o Outcome, cursorReason string) {
	c.Outcome, c.CursorReason = o, cursorReason
}

// NoteToolError records a tool error result (isError): a JSON-RPC result
// whose call did not succeed. The outcome is the one noted, else
// OutcomeInvalid (bad arguments).
func (c *Call) NoteToolError() {
	c.ErrorType = ErrorTypeToolError
	if c.Outcome == OutcomeOK {
		c.Outcome = OutcomeInvalid
	}
}

// NoteEntries records, for observers, the number of items of a list page.
func (c *Call) NoteEntries(n int) { c.Entries = n }

// Class returns what the call does (see [MethodOptions.Class]): "list",
// "read", "search", or "" for anything else, an unknown method included.
func (c *Call) Class() string {
	if c.hasClass {
		return c.class
	}
	if c.e == nil {
		return "" // a Call the endpoint did not make
	}
	if m, ok := c.e.methods[c.Method]; ok && m.opts.Class != nil {
		return m.opts.Class(c.Params)
	}
	return ""
}

// MaxResultBytes is the byte limit of the call's whole response.
func (c *Call) MaxResultBytes() int {
	if c.e == nil {
		return DefaultMaxResultBytes // a Call the endpoint did not make
	}
	return c.e.maxBytes
}

// Logger is the endpoint's operator logger.
func (c *Call) Logger() *slog.Logger {
	if c.e == nil {
		return slog.Default() // a Call the endpoint did not make
	}
	return c.e.log
}

// Room returns how many bytes the members of the call's result (what
// [Call.Result] is given, with cache) may take so that the whole response
// — the JSON-RPC envelope, the era's members and _meta included — stays
// within the byte limit: a part that fills a result up to the limit (a
// tool's page) measures against it. It is negative when not even an
// empty result fits.
func (c *Call) Room(cache Cache) int {
	var head [64]byte
	n := c.MaxResultBytes() - len(jsonrpc.AppendResultHead(head[:0], c.ID)) - len(`{}}`)
	if meta := c.e.metaFor(c, cache); len(meta) > 0 {
		n -= 1 + len(meta) // `,` meta
	}
	return n
}

// Cache says whether a result may be cached, in the 2026-07-28 protocol's
// terms.
type Cache uint8

const (
	// CacheNone (the zero value) adds no caching hints.
	CacheNone Cache = iota
	// CachePrivate marks a per-caller result: ttlMs 0, cacheScope
	// "private" (lists, reads, tool results).
	CachePrivate
)

// Result is a method's answer: made by [Call.Result] or [Stream]. The
// zero value is an empty answer (202 without a body: the answer to a
// notification).
type Result struct {
	status     int
	body       []byte   // the whole JSON-RPC response; nil: 202 without a body
	pooled     *respBuf // body's storage, recycled once written
	retryAfter int      // Retry-After in seconds; 0: none
	header     [2]string
	stream     func(w http.ResponseWriter, r *http.Request)
}

// Result returns the answer whose result object holds members: the
// JSON text of its members, without braces (`"tools":[…]`), valid JSON
// the handler encoded. The endpoint adds the braces, the members of the
// protocol era (2026-07-28: resultType, the caching hints of cache, and
// _meta with serverInfo) and the JSON-RPC envelope.
func (c *Call) Result(members []byte, cache Cache) Result {
	meta := c.e.metaFor(c, cache)
	b := make([]byte, 0, len(members)+len(meta)+48)
	b = jsonrpc.AppendResultHead(b, c.ID)
	b = append(append(b, '{'), members...)
	return Result{body: closeResult(b, meta, len(members) > 0)}
}

// Stream returns an answer that serves the request itself: an event
// stream (text/event-stream), which fn writes.
func Stream(fn func(w http.ResponseWriter, r *http.Request)) Result { return Result{stream: fn} }

// accepted returns the answer to a notification or client response: 202
// without a body.
func accepted() Result { return Result{status: http.StatusAccepted} }

// WithHeader returns r with one more response header (an Mcp-Session-Id,
// say).
func (r Result) WithHeader(name, value string) Result {
	r.header = [2]string{name, value}
	return r
}

// Handler serves one method. The error, when not nil, is answered by the
// endpoint's one error table (see [Error] for the part-defined ones).
type Handler func(ctx context.Context, c *Call) (Result, error)

// Middleware wraps the serving of every request and notification (a
// notification's c.ID.IsZero(): check it in a middleware meant for
// requests only, a rate limit, say), not of client responses, nor of calls
// refused by authentication or by the era's rules.
type Middleware func(next Handler) Handler

// closeResult appends (`,` meta) `}` `}`: the end of the result object and
// of the response; comma says the object has members already.
func closeResult(dst, meta []byte, comma bool) []byte {
	if len(meta) > 0 {
		if comma {
			dst = append(dst, ',')
		}
		dst = append(dst, meta...)
	}
	return append(dst, '}', '}')
}

// codeString is strconv.FormatInt without allocating for the codes the
// endpoint sends.
func codeString(code int64) string {
	switch code {
	case jsonrpc.CodeParseError:
		return "-32700"
	case jsonrpc.CodeInvalidRequest:
		return "-32600"
	case jsonrpc.CodeMethodNotFound:
		return "-32601"
	case jsonrpc.CodeInvalidParams:
		return "-32602"
	case jsonrpc.CodeInternalError:
		return "-32603"
	case jsonrpc.CodeResourceNotFound:
		return "-32002"
	}
	return strconv.FormatInt(code, 10)
}

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// Request is one JSON-RPC request (or notification) being served: what a
// method's [Handler] and a [Middleware] receive. The endpoint makes one
// per call and never reuses it: a handler may keep it, hand it to a
// goroutine and read it after returning; its methods are safe for
// concurrent use. Its fields are the endpoint's description of the call:
// the endpoint routes the call and builds its answer (the JSON-RPC id, the
// era's members) from its own record of them, so editing them changes
// neither. A middleware may hand its inner handlers a copy with fields
// changed (they read the copy); it must not edit the Request itself,
// which other goroutines may read (a copy shares the notes: its Note
// methods record for the same call). The Principal is shared with the observers' Call: do not modify
// it. A Request never holds token bytes; only HTTP gives access to them.
type Request struct {
	// Method is the JSON-RPC method as the client sent it: client input.
	Method string
	// ID is the request's id; zero (IsZero) for a notification.
	ID jsonrpc.ID
	// ProtocolVersion is the MCP protocol version the call is served
	// under.
	ProtocolVersion string
	// Modern reports the 2026-07-28 protocol: stateless, with _meta on
	// every request, and results that carry resultType and caching hints.
	Modern bool
	// SessionID is the legacy session the call belongs to (a validated
	// Mcp-Session-Id); empty without one.
	SessionID string
	// Principal is the authenticated caller; nil for an anonymous call.
	// It holds no token.
	Principal *principal.Principal
	// HTTP is the HTTP request that carried the call. Its Authorization
	// header holds the credentials: read the headers you need (trace
	// context), never all of them. Its body has been read.
	HTTP *http.Request

	params []byte    // the request's own copy of the message's params
	e      *Endpoint // the endpoint serving the call; nil for a Request it did not make
	notes  *notes    // what the handler records for observers; nil likewise
	// What the endpoint routes and answers by: its own copies of ID,
	// Method and Modern, which an edited copy of the Request does not
	// change.
	id     jsonrpc.ID
	method string
	modern bool
}

// notes is what a call's handler records for observers, under a lock: a
// kept Request may note after its handler returned, when the record is
// sealed and the notes are ignored.
type notes struct {
	mu                                        sync.Mutex
	sealed                                    bool
	target, uri, cursorReason, sessionID      string
	errorType                                 string
	outcome                                   Outcome
	entries                                   int
	setTarget, setURI, setOutcome, setEntries bool

	raw Result // the answer seam.Calls.Result built last: handed out by pointer, not boxed

	// view is the envelope's part the endpoint's own handlers read
	// (viewed: set before the handler runs, never written after).
	view   mcpwire.ParamView
	viewed bool
}

// requestBuf is a Request with its notes: one allocation per call
// without params; inlineBuf adds room for small params.
type requestBuf struct {
	req    Request
	notes  notes
	caller principal.Principal // the call's own copy of its caller
}

type inlineBuf struct {
	requestBuf
	inline [192]byte
}

// newRequest makes the Request of one message; params are copied.
func (e *Endpoint) newRequest(msg *jsonrpc.Message, caller *principal.Principal, r *http.Request) *Request {
	var rb *requestBuf
	var params []byte
	switch n := len(msg.Params); {
	case n == 0:
		rb = new(requestBuf)
	case n <= len(inlineBuf{}.inline):
		ib := new(inlineBuf)
		rb, params = &ib.requestBuf, append(ib.inline[:0:n], msg.Params...)
	default:
		rb, params = new(requestBuf), bytes.Clone(msg.Params)
	}
	rb.req = Request{Method: msg.Method, ID: msg.ID, HTTP: r, params: params, e: e, notes: &rb.notes,
		id: msg.ID, method: msg.Method}
	if caller != nil {
		rb.caller = *caller
		rb.req.Principal = &rb.caller
	}
	return &rb.req
}

// Params returns the request's params (client input, strictly decoded:
// no duplicate or case-variant member names, valid UTF-8): the JSON text
// of an object, or nil. The bytes are the Request's own, valid after the
// handler returned, and shared by every reader: do not modify them.
func (r *Request) Params() []byte {
	if r == nil {
		return nil
	}
	return r.params
}

// Meta returns the string member name of the request's params._meta
// ("traceparent", "tracestate": where MCP carries W3C trace context), and
// whether it is there. It is client input.
func (r *Request) Meta(name string) (string, bool) { return metaString(r.Params(), name) }

// Class returns what the call does (see [MethodOptions.Class]): "list",
// "read", "search", or "" for anything else, an unknown method included.
func (r *Request) Class() string {
	if r == nil || r.e == nil {
		return "" // a Request the endpoint did not make
	}
	return r.e.classOf(r.Method, r.params)
}

// MaxResultBytes is the byte limit of the call's whole response.
func (r *Request) MaxResultBytes() int {
	if r == nil || r.e == nil {
		return DefaultMaxResultBytes // a Request the endpoint did not make
	}
	return r.e.maxBytes
}

// Logger is the endpoint's operator logger.
func (r *Request) Logger() *slog.Logger {
	if r == nil || r.e == nil {
		return slog.Default() // a Request the endpoint did not make
	}
	return r.e.log
}

// Room returns how many bytes the JSON text of a result object (what
// [JSONResult] encodes) may take so that the whole response — the
// JSON-RPC envelope, the era's members and _meta added to it included —
// stays within the byte limit: a part that fills a result up to the
// limit (a page) measures against it. It is less than 2 (the length of
// `{}`) when not even an empty result fits.
func (r *Request) Room(cache Cache) int {
	if r == nil {
		return 0
	}
	var head [64]byte
	n := r.MaxResultBytes() - len(jsonrpc.AppendResultHead(head[:0], r.id)) - len(`{}}`)
	if meta := r.e.metaFor(r.modern, cache); len(meta) > 0 {
		n -= 1 + len(meta) // `,` meta
	}
	return n + len(`{}`)
}

// note runs f on the notes unless they are sealed (the handler returned)
// or the Request is not the endpoint's.
func (r *Request) note(f func(n *notes)) {
	if r == nil || r.notes == nil {
		return
	}
	r.notes.mu.Lock()
	if !r.notes.sealed {
		f(r.notes)
	}
	r.notes.mu.Unlock()
}

// NoteTarget records, for observers, the registered name of what the
// call concerned (a tool's name); a handler that names a URI lets the
// endpoint find the template (NoteURI). Like every Note, it is ignored
// once the handler returned.
func (r *Request) NoteTarget(name string) {
	r.note(func(n *notes) { n.target, n.setTarget = name, true })
}

// NoteURI records, for observers, the resource URI (or completion
// reference) the call named.
func (r *Request) NoteURI(uri string) {
	r.note(func(n *notes) { n.uri, n.setURI = uri, true })
}

// NoteOutcome records, for observers, an outcome that the error sent does
// not tell apart (a tool error result about a missing resource, say).
func (r *Request) NoteOutcome(o Outcome, cursorReason string) {
	r.note(func(n *notes) { n.outcome, n.cursorReason, n.setOutcome = o, cursorReason, true })
}

// NoteToolError records a tool error result (isError): a JSON-RPC result
// whose call did not succeed. The outcome is the one noted, else
// OutcomeInvalid (bad arguments).
func (r *Request) NoteToolError() {
	r.note(func(n *notes) {
		n.errorType = ErrorTypeToolError
		if n.outcome == OutcomeOK {
			n.outcome, n.setOutcome = OutcomeInvalid, true
		}
	})
}

// NoteEntries records, for observers, the number of items of a list page.
func (r *Request) NoteEntries(count int) {
	r.note(func(n *notes) { n.entries, n.setEntries = count, true })
}

// noteSession records the legacy session of the call (mcphttp/sessions,
// through seam).
func (r *Request) noteSession(id string) {
	r.note(func(n *notes) { n.sessionID = id })
}

// sessionNoted returns the session noted so far.
func (r *Request) sessionNoted() string {
	if r.notes == nil {
		return ""
	}
	r.notes.mu.Lock()
	defer r.notes.mu.Unlock()
	return r.notes.sessionID
}

// seal ends the notes (later ones are ignored) and copies them into c.
func (r *Request) seal(c *Call) {
	n := r.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sealed = true
	if n.setTarget {
		c.Target = n.target
	}
	if n.setURI {
		c.URI = n.uri
	}
	if n.setOutcome {
		c.Outcome, c.CursorReason = n.outcome, n.cursorReason
	}
	if n.errorType != "" {
		c.ErrorType = n.errorType
	}
	if n.setEntries {
		c.Entries = n.entries
	}
	if n.sessionID != "" {
		c.SessionID = n.sessionID
	}
}

// Call is what an [Observer] is told of one JSON-RPC message being
// served: a value of the observer's own, which it may keep (hand it to a
// goroutine, queue it, batch it). Fields that hold client input say so;
// everything else is the endpoint's own. A Call never holds token bytes,
// and no field but HTTP gives access to them: never export the request's
// headers wholesale.
type Call struct {
	// Method is the JSON-RPC method as the client sent it: client input.
	// An observer that uses it as a metric dimension or span name must map
	// methods it does not know to a fixed value.
	Method string
	// ID is the request's id; zero (IsZero) for a notification.
	ID jsonrpc.ID
	// Params are the message's params as received (client input), which
	// the strict decoder found well-formed: no duplicate or case-variant
	// member names, valid UTF-8. They are the call's own copy, shared with
	// the handler's [Request]: do not modify them.
	Params []byte
	// ProtocolVersion is the MCP protocol version the call is served
	// under; empty when it was refused before the version was decided.
	ProtocolVersion string
	// Modern reports the 2026-07-28 protocol.
	Modern bool
	// SessionID is the legacy session the call belongs to (a validated
	// Mcp-Session-Id, or the one an initialize minted); empty without one.
	SessionID string
	// Principal is the authenticated caller; nil for an anonymous call or
	// one refused by authentication. It holds no token.
	Principal *principal.Principal
	// HTTP is the HTTP request that carried the call. Its Authorization
	// header holds the credentials: read the headers you need (trace
	// context), never all of them. In End its body is closed.
	HTTP *http.Request

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
	// response was ready to write (set in End).
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

	class string // Class's answer
}

// Meta returns the string member name of the call's params._meta
// ("traceparent", "tracestate": where MCP carries W3C trace context), and
// whether it is there. It is client input.
func (c Call) Meta(name string) (string, bool) { return metaString(c.Params, name) }

// Class returns what the call does (see [MethodOptions.Class]): "list",
// "read", "search", or "" for anything else, an unknown method included.
func (c Call) Class() string { return c.class }

// ErrorTypeToolError is the Call.ErrorType of a tool error result
// (isError): the conventions' value for a tools/call that answered with a
// result saying it failed.
const ErrorTypeToolError = "tool_error"

// record is the endpoint's pooled bookkeeping of one call: the Call its
// observers are given copies of.
type record struct {
	Call
}

var recordPool = sync.Pool{New: func() any { return new(record) }}

// metaString returns the string member name of params._meta.
func metaString(params []byte, name string) (string, bool) {
	var v string
	var found bool
	meta, ok := mcpwire.ObjectParam(params, "_meta")
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

// classOf returns the class of a call of method with params.
func (e *Endpoint) classOf(method string, params []byte) string {
	if m, ok := e.methods[method]; ok && m.opts.Class != nil {
		return m.opts.Class(params)
	}
	return ""
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

// Result is a method's answer: made by [JSONResult] or [Stream]. The
// zero value is an empty answer (202 without a body: the answer to a
// notification). A Result answers the call it was made for, once: its
// body holds that call's id, and the endpoint recycles a written
// Result's storage. A middleware must not keep one to return again (the
// endpoint answers such a Result with an internal error, logged).
type Result struct {
	status     int
	body       []byte   // the whole JSON-RPC response; nil: 202 without a body
	pooled     *respBuf // body's storage, recycled once written
	gen        uint32   // pooled's generation when the Result was made
	retryAfter int      // Retry-After in seconds; 0: none
	header     [2]string
	stream     func(w http.ResponseWriter, r *http.Request)
}

// errNoRequest: a result built for a Request the endpoint did not make.
var errNoRequest = errors.New("mcphttp: JSONResult: a Request the endpoint did not make")

// JSONResult returns the answer to req whose result object is v, as
// encoding/json encodes it: it must encode to a JSON object (a struct, a
// map; a json.RawMessage holding one is sent as it is). The endpoint adds
// the members of the protocol era (2026-07-28: resultType, the caching
// hints of cache, and _meta with serverInfo) and the JSON-RPC envelope.
// A v that does not encode to an object is an error; a result over the
// byte limit (see [Request.Room]) is logged and answered with an
// internal error, as the error returned. An empty result is
// JSONResult(req, struct{}{}, cache).
func JSONResult(req *Request, v any, cache Cache) (Result, error) {
	if req == nil || req.e == nil {
		return Result{}, errNoRequest
	}
	var b []byte
	switch v := v.(type) {
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return Result{}, errors.New("mcphttp: JSONResult: the result does not encode: " + err.Error())
		}
	}
	if o, err := jsonstrict.Parse(b); err != nil || o.Kind() != jsonstrict.Object {
		return Result{}, errors.New("mcphttp: JSONResult: the result is not a JSON object")
	}
	members := trimObject(b)
	if room := req.Room(cache) - 2; len(members) > room {
		return Result{}, req.e.tooLarge(context.Background(), req.method, "", len(members)+req.MaxResultBytes()-room)
	}
	return req.e.rawResult(req.id, req.modern, members, cache), nil
}

// trimObject returns the members of a JSON object's text: what is
// between its braces, without the whitespace around it (an empty object's
// is empty, so that no comma precedes the era's members).
func trimObject(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && b[i] != '{' {
		i++
	}
	for j > i && b[j-1] != '}' {
		j--
	}
	return bytes.TrimSpace(b[i+1 : j-1])
}

// rawResult returns the answer whose result object holds members: the
// JSON text of its members, without braces, valid JSON. Only the kit's
// parts reach it (through seam), and JSONResult.
func (e *Endpoint) rawResult(id jsonrpc.ID, modern bool, members []byte, cache Cache) Result {
	meta := e.metaFor(modern, cache)
	buf := getResp()
	b := jsonrpc.AppendResultHead(buf.Body[:0], id)
	b = append(append(b, '{'), members...)
	return buf.result(closeResult(b, meta, len(members) > 0))
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
type Handler func(ctx context.Context, req *Request) (Result, error)

// Middleware wraps the serving of every request and notification (a
// notification's req.ID.IsZero(): check it in a middleware meant for
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

// stale reports whether r's storage was recycled since r was made: r was
// written already.
func (r Result) stale() bool { return r.pooled != nil && r.pooled.gen.Load() != r.gen }

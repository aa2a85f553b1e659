package mcphttp

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Observer watches the calls an [Endpoint] serves: the seam for traces,
// metrics and audit records (the OpenTelemetry adapter is the module
// github.com/mcpkit/mcpkit/mcphttp/otelmcp; [Audit] writes audit records).
// The endpoint calls Start and then End exactly once for every JSON-RPC
// message it serves — requests, and notifications (202) outside batches;
// the requests of a batch each on their own; calls refused by
// authentication and rate limits included — and never for requests
// refused before a message was read (Origin, body size, Accept, a body
// that is not JSON-RPC), for the notifications and invalid elements of a
// batch, for GET and DELETE, or for what [Intercept] forwards to the
// legacy handler.
//
// Implementations must be safe for concurrent use, must not retain the
// *Call after End returns (the endpoint reuses it), and should be quick:
// they run on the request path.
type Observer interface {
	// Start is called before the call is served, with the request's
	// context. c holds what is known then: Method, ID, Start, Request and,
	// when authentication came first, Principal. The context Start
	// returns must be ctx or derived from it: the call is served under it,
	// so the inventory's callbacks (List, Read, Search, Complete) receive
	// it and the spans they start nest under a span Start put there.
	Start(ctx context.Context, c *Call) context.Context
	// End is called with the context Start returned once the outcome is
	// known, before the response is written. Every field of c is set.
	End(ctx context.Context, c *Call)
}

// Call describes one served JSON-RPC message to an [Observer]. Fields that
// hold client input say so; everything else is the endpoint's own.
// A Call never holds token bytes, and no field but Request gives access to
// them: never export the request's headers wholesale.
type Call struct {
	// Method is the JSON-RPC method as the client sent it: client input.
	// An observer that uses it as a metric dimension or span name must map
	// methods it does not know to a fixed value.
	Method string
	// ID is the request's id; zero (IsZero) for a notification.
	ID jsonrpc.ID
	// ProtocolVersion is the MCP protocol version the call was served
	// under; empty when it was refused before the version was decided.
	ProtocolVersion string
	// SessionID is the legacy session the call belongs to (a validated
	// Mcp-Session-Id, or the one an initialize minted); empty without one.
	SessionID string
	// Principal is the authenticated caller; nil for an anonymous call or
	// one refused by authentication. It holds no token.
	Principal *principal.Principal
	// Request is the HTTP request that carried the call. Its Authorization
	// header holds the bearer token: read the headers you need (trace
	// context), never all of them.
	Request *http.Request

	// Target is the registered name of what the call concerned: the
	// template or static resource of a read, subscription or completion
	// (see inventory.Inventory.Target), the tool of a tools/call. It is
	// never client input, so it is a low-cardinality label; empty when
	// there is none (lists, an unknown tool, a URI that matches nothing).
	Target string
	// URI is the resource URI a read, (un)subscribe, read_resource, fetch
	// or template tool named, or the reference of a completion, as the
	// client sent it: client input, and private (it can name a user's
	// record). Export it only where the operator opted in. A search query
	// is never reported.
	URI string

	// Start is when the endpoint received the message (before
	// authentication), Duration how long serving it took until the
	// response was ready to write.
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
	// of the endpoint's own, empty when the code's standard text — "Method
	// not found" — was sent); zero and empty for a result, and for
	// refusals that are HTTP only (401, 403 and 503 challenges).
	Code    int64
	Message string
	// ErrorType is empty for a success; otherwise the JSON-RPC error code
	// in decimal ("-32602"), for a refusal without one the HTTP status
	// ("401"), and for a tool error result (isError) ErrorTypeToolError:
	// the error.type of the OpenTelemetry conventions.
	ErrorType string
	// Entries is the number of items of a list page (resources/list,
	// resources/templates/list, the list_resources tool); Bytes is the
	// length of the JSON-RPC response body (0 for 202 and for challenges).
	Entries, Bytes int

	params []byte // the message's params, for Meta
}

// Meta returns the string member name of the request's params._meta
// ("traceparent", "tracestate": where MCP carries W3C trace context), and
// whether it is there. It is client input.
func (c *Call) Meta(name string) (string, bool) {
	if len(c.params) == 0 {
		return "", false
	}
	var v string
	var found bool
	gjson.GetBytes(c.params, "_meta").ForEach(func(k, val gjson.Result) bool {
		if k.Str == name {
			v, found = val.Str, val.Type == gjson.String
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

// Outcome classifies how a served call ended. The zero value is OutcomeOK.
type Outcome uint8

const (
	// OutcomeOK: a result, or 202 for a notification.
	OutcomeOK Outcome = iota
	// OutcomeInvalid: the request broke the protocol — bad params, an
	// unknown method, a header or _meta error, a bad token request (400).
	OutcomeInvalid
	// OutcomeUnauthenticated: 401, no token where one is required, or a
	// token that does not verify.
	OutcomeUnauthenticated
	// OutcomeDenied: 403, the token lacks a required scope.
	OutcomeDenied
	// OutcomeNotFound: the resource does not exist or is not visible to
	// the caller (the client cannot tell which; neither can this value).
	OutcomeNotFound
	// OutcomeInvalidCursor: a cursor that did not open (see CursorReason).
	OutcomeInvalidCursor
	// OutcomeRateLimited: 429, the caller is over its rate limit (see
	// [RateLimiter]) or its open-stream limit.
	OutcomeRateLimited
	// OutcomeUnavailable: 503, the token cannot be checked now, or every
	// stream is taken.
	OutcomeUnavailable
	// OutcomeError: the server failed — a callback or backend error, a
	// broken callback contract, a deadline (-32603).
	OutcomeError
)

var outcomeNames = [...]string{"ok", "invalid", "unauthenticated", "denied", "not_found", "invalid_cursor", "rate_limited", "unavailable", "error"}

// String returns the outcome's name: "ok", "invalid", "unauthenticated",
// "denied", "not_found", "invalid_cursor", "rate_limited", "unavailable"
// or "error".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Observers returns an Observer that calls each of obs in order: Start
// chains the contexts (each gets the one the previous returned), End calls
// each with the context its own Start returned. Nil entries are skipped;
// with none left it returns nil, which the endpoint treats as no observer.
func Observers(obs ...Observer) Observer {
	var list fanout
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type fanout []Observer

type fanoutKey struct{}

func (f fanout) Start(ctx context.Context, c *Call) context.Context {
	ctxs := make([]context.Context, len(f))
	for i, o := range f {
		ctx = o.Start(ctx, c)
		ctxs[i] = ctx
	}
	return context.WithValue(ctx, fanoutKey{}, ctxs)
}

func (f fanout) End(ctx context.Context, c *Call) {
	ctxs, _ := ctx.Value(fanoutKey{}).([]context.Context)
	for i := len(f) - 1; i >= 0; i-- {
		own := ctx
		if i < len(ctxs) {
			own = ctxs[i]
		}
		f[i].End(own, c)
	}
}

var callPool = sync.Pool{New: func() any { return new(Call) }}

// serveObserved is serveMessage with the Observer: Start, serve under the
// context it returns, fill in the outcome, End.
func (e *Endpoint) serveObserved(r *http.Request, msg jsonrpc.Message, c *call, inBatch bool, received time.Time) reply {
	oc := callPool.Get().(*Call)
	*oc = Call{Method: msg.Method, ID: msg.ID, Principal: c.caller, Request: r, Start: received, params: msg.Params}
	c.obs = oc
	ctx := e.obs.Start(r.Context(), oc)
	rep, err := e.serveCall(ctx, r, msg, c, inBatch)
	if err != nil {
		rep = e.failure(c, err) // fills oc from the error table
	} else {
		oc.Status = cmpOr(rep.status, http.StatusOK)
		if rep.body == nil && rep.stream == nil {
			oc.Status = cmpOr(rep.status, http.StatusAccepted)
		}
	}
	e.finish(oc, c, rep)
	e.obs.End(ctx, oc)
	*oc = Call{}
	callPool.Put(oc)
	return rep
}

// noteURI records, for the Observer, the resource URI (or completion
// reference) a call named.
func (c *call) noteURI(uri string) {
	if c.obs != nil {
		c.obs.URI = uri
	}
}

// noteTarget records, for the Observer, the registered name of what a call
// concerned when the method found it itself (the tool of a tools/call);
// otherwise finish looks the noted URI up.
func (c *call) noteTarget(name string) {
	if c.obs != nil {
		c.obs.Target = name
	}
}

// noteToolError records a tool error result (isError): a JSON-RPC result
// whose call did not succeed — error.type "tool_error" in the
// conventions. The outcome is the one noted (not found, invalid cursor,
// error), else OutcomeInvalid (bad arguments).
func (c *call) noteToolError() {
	if c.obs != nil {
		c.obs.ErrorType = ErrorTypeToolError
		if c.obs.Outcome == OutcomeOK {
			c.obs.Outcome = OutcomeInvalid
		}
	}
}

// finish fills in what serving c decided. A method that knows the
// registered name of what it served (a tool) sets c.obs.Target itself;
// otherwise the URI it noted is looked up.
func (e *Endpoint) finish(oc *Call, c *call, rep reply) {
	oc.ProtocolVersion = c.version
	switch {
	case c.session != nil:
		oc.SessionID = c.session.id
	case rep.sessionID != "":
		oc.SessionID = rep.sessionID
	}
	if oc.Target == "" && oc.URI != "" {
		oc.Target, _ = e.inv.Target(oc.URI)
	}
	oc.Entries = rep.entries
	oc.Bytes = len(rep.body)
	oc.Duration = time.Since(oc.Start)
}

// failed records in oc the answer the error table gave: the status and
// JSON-RPC error of classify, or its challenge; classify noted the
// outcomes that these do not tell apart.
func (oc *Call) failed(status int, rpc *jsonrpc.Error, challenge error) {
	if challenge != nil {
		oc.challenged(challenge)
		return
	}
	oc.Status, oc.Code, oc.Message = status, rpc.Code, rpc.Message
	oc.ErrorType = codeString(rpc.Code)
	if oc.Outcome == OutcomeOK { // a case of classify that noted none: by status and code
		switch {
		case status == http.StatusTooManyRequests:
			oc.Outcome = OutcomeRateLimited
		case status == http.StatusServiceUnavailable:
			oc.Outcome = OutcomeUnavailable
		case rpc.Code == jsonrpc.CodeInternalError:
			oc.Outcome = OutcomeError
		default:
			oc.Outcome = OutcomeInvalid
		}
	}
}

// challenged records a refusal the Authenticator answers (see
// challengeStatus).
func (oc *Call) challenged(err error) {
	oc.Status, oc.Outcome = challengeStatus(err)
	oc.ErrorType = strconv.Itoa(oc.Status)
}

// observeRefused reports the calls of a body refused by authentication,
// as they would have been served, each started and ended at once.
func (e *Endpoint) observeRefused(r *http.Request, b *jsonrpc.Body, received time.Time, err error) {
	one := func(msg jsonrpc.Message) {
		oc := callPool.Get().(*Call)
		*oc = Call{Method: msg.Method, ID: msg.ID, Request: r, Start: received, params: msg.Params}
		ctx := e.obs.Start(r.Context(), oc)
		oc.challenged(err)
		oc.Duration = time.Since(received)
		e.obs.End(ctx, oc)
		*oc = Call{}
		callPool.Put(oc)
	}
	if !b.Batch {
		if b.Message.Kind != jsonrpc.KindResponse {
			one(b.Message)
		}
		return
	}
	for _, it := range b.Items {
		if it.Err == nil && it.Message.Kind == jsonrpc.KindRequest {
			one(it.Message) // as serveBatch serves them
		}
	}
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

package mcphttp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Observer watches the calls an [Endpoint] serves: the seam for traces,
// metrics and audit records (the OpenTelemetry adapter is the module
// github.com/mcpkit/mcpkit/mcphttp/otelmcp; mcphttp/audit writes audit
// records). Give it to an endpoint with [Observe]. The endpoint calls
// Start and then End exactly once for every JSON-RPC message it serves —
// requests, and notifications (202) outside batches; the requests of a
// batch each on their own; calls refused by authentication and rate limits
// included — and never for requests refused before a message was read
// (Origin, body size, Accept, a body that is not JSON-RPC), for the
// notifications and invalid elements of a batch, for HTTP methods other
// than POST, or for what a handler in front of the endpoint forwards
// elsewhere.
//
// Implementations must be safe for concurrent use and should be quick:
// they run on the request path. Start and End each get a [Call] of their
// own, which the observer may keep: hand it to a goroutine, queue it,
// batch it. Its Params are the call's own copy, which nothing modifies.
type Observer interface {
	// Start is called before the call is served, with the request's
	// context. c holds what is known then: Method, ID, Params, Start,
	// HTTP and, when authentication came first, Principal. The context
	// Start returns must be ctx or derived from it: the call is served
	// under it, so the inventory's callbacks receive it and the spans
	// they start nest under a span Start put there.
	Start(ctx context.Context, c Call) context.Context
	// End is called with the context Start returned once the outcome is
	// known, before the response is written, with every field set.
	// c.HTTP is net/http's: its headers may be read later, its body is
	// closed.
	End(ctx context.Context, c Call)
}

// Observe returns the part that gives each observer every served call,
// in order: Start chains the contexts, End runs in reverse order with each
// observer's own. Nil observers are skipped; one holding a nil pointer (a
// nil *audit.Audit) is an error of New.
func Observe(obs ...Observer) Part {
	return PartFunc(func(s *Setup) error {
		for i, o := range obs {
			if o == nil {
				continue
			}
			if nilness.Is(o) {
				return fmt.Errorf("mcphttp: Observe: observer %d is nil (%T)", i+1, o)
			}
			s.e.observers = append(s.e.observers, o)
		}
		return nil
	})
}

// Outcome classifies how a served call ended. The zero value is OutcomeOK.
type Outcome uint8

const (
	// OutcomeOK: a result, or 202 for a notification.
	OutcomeOK Outcome = iota
	// OutcomeInvalid: the request broke the protocol — bad params, an
	// unknown method, a header or _meta error, a bad token request (400).
	OutcomeInvalid
	// OutcomeUnauthenticated: 401, no caller where one is required, or
	// credentials that do not prove one.
	OutcomeUnauthenticated
	// OutcomeDenied: 403, the caller lacks a required scope.
	OutcomeDenied
	// OutcomeNotFound: the resource does not exist or is not visible to
	// the caller (the client cannot tell which; neither can this value).
	OutcomeNotFound
	// OutcomeInvalidCursor: a cursor that did not open (see CursorReason).
	OutcomeInvalidCursor
	// OutcomeRateLimited: 429, the caller is over a rate limit or its
	// open-stream limit.
	OutcomeRateLimited
	// OutcomeUnavailable: 503, the credentials cannot be checked now, or
	// every stream is taken.
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

// maxInline is how many observers' contexts are kept without allocating.
const maxInline = 4

// observed holds each observer's context for End.
type observed struct {
	inline  [maxInline]context.Context
	more    []context.Context
	started int // how many observers were started
}

func (o *observed) at(i int) context.Context {
	if i < maxInline {
		return o.inline[i]
	}
	return o.more[i-maxInline]
}

// startObservers starts every observer and returns the context to serve
// under.
func (e *Endpoint) startObservers(ctx context.Context, c *record) (context.Context, observed, error) {
	var o observed
	if len(e.observers) == 0 {
		return ctx, o, nil
	}
	c.class = e.classOf(c.Method, c.Params)
	for i, ob := range e.observers {
		next, ok := e.startOne(ctx, ob, c.Call)
		if !ok {
			next = ctx // the observer's End still runs, with the context it was given
		}
		ctx = next
		if i < maxInline {
			o.inline[i] = ctx
		} else {
			o.more = append(o.more, ctx)
		}
		if !ok {
			// The later observers are not started; their End is not
			// called either.
			o.started = i + 1
			return ctx, o, errPanicked
		}
	}
	o.started = len(e.observers)
	return ctx, o, nil
}

// startOne runs an observer's Start, recovering a panic (ok false,
// logged) or a nil context it returns.
func (e *Endpoint) startOne(ctx context.Context, ob Observer, c Call) (next context.Context, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			e.logPanic(ctx, "an observer's Start", c.Method, p)
			next, ok = nil, false
		}
	}()
	next = ob.Start(ctx, c)
	if next == nil {
		e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp: an observer's Start returned a nil context", slog.String("method", c.Method))
		return nil, false
	}
	return next, true
}

// endOne runs an observer's End, recovering a panic (false, logged).
func (e *Endpoint) endOne(ctx context.Context, ob Observer, c Call) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			e.logPanic(ctx, "an observer's End", c.Method, p)
			ok = false
		}
	}()
	ob.End(ctx, c)
	return true
}

// logPanic logs a recovered panic of what (a handler, an observer) with
// its stack.
func (e *Endpoint) logPanic(ctx context.Context, what, method string, p any) {
	e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp: "+what+" panicked",
		slog.String("method", method), slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
}

// endObservers fills in what serving c decided and ends every observer
// that was started. It returns false when one of them panicked (logged).
func (e *Endpoint) endObservers(_ context.Context, o observed, c *record, rep reply) bool {
	if len(e.observers) == 0 {
		return true
	}
	if c.Target == "" && c.URI != "" {
		c.Target, _ = e.inv.Target(c.URI)
	}
	c.Bytes = len(rep.body)
	c.Duration = time.Since(c.Start)
	kept := c.Call // End's copy, which the observer may keep
	ok := true
	for i := o.started - 1; i >= 0; i-- {
		if !e.endOne(o.at(i), e.observers[i], kept) {
			ok = false
		}
	}
	return ok
}

// failed records in c the answer the error table gave: the status and
// JSON-RPC error, or the challenge; classify noted the outcomes that
// these do not tell apart.
func (e *Endpoint) failed(c *record, status int, rpc *jsonrpc.Error, challenge error) {
	if challenge != nil {
		e.challenged(c, challenge)
		return
	}
	c.Status, c.Code, c.Message = status, rpc.Code, rpc.Message
	c.ErrorType = codeString(rpc.Code)
	if c.Outcome == OutcomeOK { // a case of classify that noted none: by status and code
		switch {
		case status == http.StatusTooManyRequests:
			c.Outcome = OutcomeRateLimited
		case status == http.StatusServiceUnavailable:
			c.Outcome = OutcomeUnavailable
		case rpc.Code == jsonrpc.CodeInternalError:
			c.Outcome = OutcomeError
		default:
			c.Outcome = OutcomeInvalid
		}
	}
}

// challenged records a refusal the Authenticator answers, by the status
// it answers with.
func (e *Endpoint) challenged(c *record, err error) {
	c.Status = e.auth.StatusOf(err)
	c.ErrorType = strconv.Itoa(c.Status)
	switch c.Status {
	case http.StatusUnauthorized:
		c.Outcome = OutcomeUnauthenticated
	case http.StatusForbidden:
		c.Outcome = OutcomeDenied
	case http.StatusBadRequest:
		c.Outcome = OutcomeInvalid
	case http.StatusTooManyRequests:
		c.Outcome = OutcomeRateLimited
	case http.StatusServiceUnavailable:
		c.Outcome = OutcomeUnavailable
	default:
		c.Outcome = OutcomeError
	}
}

// observeRefused reports the calls of a body refused by authentication,
// as they would have been served, each started and ended at once.
func (e *Endpoint) observeRefused(r *http.Request, b *jsonrpc.Body, received time.Time, err error) {
	if len(e.observers) == 0 {
		return
	}
	one := func(msg jsonrpc.Message) {
		c := recordPool.Get().(*record)
		c.Call = Call{Method: msg.Method, ID: msg.ID, Params: bytes.Clone(msg.Params), HTTP: r, Start: received}
		ctx, o, _ := e.startObservers(r.Context(), c)
		e.challenged(c, err)
		_ = e.endObservers(ctx, o, c, reply{}) // the refusal is answered either way
		*c = record{}
		recordPool.Put(c)
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

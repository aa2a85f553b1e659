package mcphttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// ServeHTTP answers a POST carrying one JSON-RPC message (or, for protocol
// 2025-03-26, a batch), and the HTTP methods the parts registered (GET
// and DELETE of legacy sessions).
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e == nil || e.handle == nil {
		unbuilt(w, "mcphttp: an Endpoint not built by mcphttp.New cannot serve: use mcphttp.New")
		return
	}
	defer e.recoverHTTP(w, r)
	// Every answer may depend on the caller, refusals included: the same
	// Vary whether or not authn's middleware ran in front.
	httpheader.AppendVary(w.Header(), "Authorization")
	if err := e.origins.Check(r); err != nil {
		writeTransportError(w, errForbiddenOrigin)
		return
	}
	if e.origins.ServeCORS(w, r) {
		return // a preflight
	}
	if r.Method != http.MethodPost {
		e.serveVerb(w, r)
		return
	}
	if !mcpwire.AcceptsType(r.Header["Accept"], "application/json", "application/*") {
		writeTransportError(w, errNotAcceptable)
		return
	}
	// Who is asking is in the headers: known before the body is read, so
	// that the body is read under the caller's share of the memory
	// (anonymous: a small limit and pool of their own).
	var p principal.Principal
	caller, authErr := e.authenticate(r, &p) // p stays on the stack: each call copies it into its Request
	if b, ok := jsonrpc.FromContext(r.Context()); ok {
		e.serveBody(w, r, b, caller, authErr) // a Decoder in front of the endpoint decoded it
		return
	}
	if authErr != nil && len(e.observers) == 0 {
		e.writeRefusal(w, r, jsonrpc.ID{}, authErr) // refused unread
		return
	}
	// A refusal that observers see is read as an anonymous caller's body,
	// only to name its calls.
	b, ok := e.limits.ReadBodyFor(w, r, caller)
	if !ok {
		return
	}
	defer b.Release()
	e.serveBody(w, r, b, caller, authErr)
}

// serveVerb answers an HTTP method other than POST: a part's, or 405.
func (e *Endpoint) serveVerb(w http.ResponseWriter, r *http.Request) {
	v, ok := e.verbs[r.Method]
	if !ok {
		w.Header().Set("Allow", e.allow)
		writeTransportError(w, errMethodNotAllowed)
		return
	}
	caller, err := e.authenticate(r, new(principal.Principal))
	if err != nil {
		e.auth.WriteError(w, r, err)
		return
	}
	for _, check := range e.verbChecks {
		if err := check(r, caller); err != nil {
			writeTransportError(w, err)
			return
		}
	}
	sw := &startedWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if sw.started && p != http.ErrAbortHandler {
				// A response under way (an event stream) cannot become
				// a 500: logged, and the connection cut.
				e.logPanic(r.Context(), "serving a request", r.Method, p)
				p = http.ErrAbortHandler
			}
			panic(p) // to recoverHTTP
		}
	}()
	v(sw, r, caller)
}

// startedWriter is the ResponseWriter of a part's HTTP method: it knows
// whether the response has begun.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(status int) {
	w.started = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Flush flushes when the underlying writer can (event streams do).
func (w *startedWriter) Flush() {
	w.started = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// authenticate returns the caller (into, filled), nil for an anonymous
// request, or the error of credentials that do not prove one; with
// RequireSignIn, an anonymous request is principal.ErrUnauthenticated.
func (e *Endpoint) authenticate(r *http.Request, into *principal.Principal) (*principal.Principal, error) {
	if err := mcpwire.AuthRefusal(r.Context()); err != nil {
		return nil, err // refused by this Authenticator in front of the endpoint (intercept): counted once
	}
	p, err := e.auth.Authenticate(r)
	switch {
	case err == nil:
		*into = p
		return into, nil
	case errors.Is(err, principal.ErrUnauthenticated):
		if e.signIn {
			return nil, principal.ErrUnauthenticated
		}
		return nil, nil
	}
	return nil, err
}

// serveBody answers one decoded request body of caller, or the refusal
// err of its credentials.
func (e *Endpoint) serveBody(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body, caller *principal.Principal, err error) {
	var received time.Time
	if len(e.observers) > 0 {
		received = time.Now()
	}
	if err != nil {
		e.observeRefused(r, b, received, err)
		e.writeRefusal(w, r, requestID(b), err)
		return
	}
	if b.Batch {
		e.serveBatch(w, r, b.Items, caller, received)
		return
	}
	e.write(w, r, e.serveMessage(r, b.Message, caller, false, received))
}

// reply is the outcome of serving one message: a result, or the error
// the table turns into an answer.
type reply struct {
	Result
	challenge error // when set, answer with the Authenticator's challenge
}

// serveMessage serves one decoded message. inBatch is set for the elements
// of a 2025-03-26 batch; received is when the body arrived (zero without
// observers).
func (e *Endpoint) serveMessage(r *http.Request, msg jsonrpc.Message, caller *principal.Principal, inBatch bool, received time.Time) reply {
	c := recordPool.Get().(*record)
	req := e.newRequest(&msg, caller, r)
	c.Call = Call{Method: msg.Method, ID: msg.ID, Params: req.params, Principal: req.Principal, HTTP: r, Start: received}
	defer func() {
		*c = record{}
		recordPool.Put(c)
	}()
	ctx, ends, err := e.startObservers(r.Context(), c)
	var res Result
	if err == nil {
		res, err = e.serveCallSafe(ctx, r, msg, c, req, inBatch)
	}
	if err == nil && res.stale() {
		// A Result written already (a middleware kept it): its storage
		// may hold another call's answer now.
		e.log.LogAttrs(ctx, slog.LevelError, "mcphttp: a method's Result was returned again after it was written (a middleware kept it?); answered with an internal error",
			slog.String("method", c.Method))
		res, err = Result{}, errPanicked
	}
	req.seal(&c.Call) // a kept Request notes nothing more
	var rep reply
	if err != nil {
		rep = e.failure(c, err)
	} else {
		rep = reply{Result: res}
		c.Status = cmpOr(res.status, http.StatusOK)
		if res.body == nil && res.stream == nil {
			c.Status = cmpOr(res.status, http.StatusAccepted)
		}
	}
	if !e.endObservers(ctx, ends, c, rep) {
		// An observer panicked: the caller gets the internal error, which
		// the other observers were not told of.
		release(rep.pooled, rep.gen, nil)
		rep = e.failure(c, errPanicked)
	}
	return rep
}

// serveCallSafe is serveCall that recovers a panic of a part's handler or
// middleware (a tool's, say): logged with its stack, answered with an
// internal error, and the server goes on.
func (e *Endpoint) serveCallSafe(ctx context.Context, r *http.Request, msg jsonrpc.Message, c *record, req *Request, inBatch bool) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			e.logPanic(ctx, "a method's handler", c.Method, p)
			res, err = Result{}, errPanicked
		}
	}()
	return e.serveCall(ctx, r, msg, c, req, inBatch)
}

// serveCall serves c under ctx (the request's context, or the one the
// observers derived from it).
func (e *Endpoint) serveCall(ctx context.Context, r *http.Request, msg jsonrpc.Message, c *record, req *Request, inBatch bool) (Result, error) {
	env := mcpwire.ReadEnvelope(req.params) // the one read of the params
	if err := e.selectEra(r, msg, c, &env, inBatch); err != nil {
		return Result{}, err
	}
	switch msg.Kind {
	case jsonrpc.KindResponse:
		if c.Modern {
			return Result{}, errClientResponse(c.ProtocolVersion)
		}
		return accepted(), nil // answers to requests this endpoint never sends
	}
	req.Modern, req.ProtocolVersion, req.modern = c.Modern, c.ProtocolVersion, c.Modern
	req.notes.view, req.notes.viewed = env.View, true
	return e.handle(ctx, req) // notifications too: the middleware sees them (a session check)
}

// dispatch is the method table: the innermost handler. A notification is
// never answered, whatever its method.
func (e *Endpoint) dispatch(ctx context.Context, req *Request) (Result, error) {
	if req.id.IsZero() {
		return accepted(), nil
	}
	m, ok := e.methods[req.method]
	if !ok || m.opts.Era == EraLegacy && req.modern || m.opts.Era == EraModern && !req.modern {
		return Result{}, errMethodNotFound
	}
	res, err := m.h(ctx, req)
	if req.method == "initialize" && err == nil {
		e.noteInitialize(req)
	}
	return res, err
}

// serves reports whether the endpoint answers msg itself: a request or
// notification of a method in its table, for the message's era, that the
// method's part claims. A handler in front of another MCP server routes
// on it (mcphttp/intercept, through Seam).
func (e *Endpoint) serves(msg jsonrpc.Message) bool {
	m, ok := e.methods[msg.Method]
	if !ok || msg.Kind == jsonrpc.KindResponse {
		return false
	}
	return m.opts.Claims == nil || m.opts.Claims(msg.Params)
}

// write sends a reply.
func (e *Endpoint) write(w http.ResponseWriter, r *http.Request, rep reply) {
	if rep.challenge != nil {
		release(rep.pooled, rep.gen, nil)
		e.auth.WriteError(w, r, rep.challenge)
		return
	}
	if rep.stream != nil {
		rep.stream(w, r)
		return
	}
	h := w.Header()
	// The values of this response's own, in one allocation: a handler that
	// edits them changes no other response.
	vals := make([]string, 3)
	vals[0] = "private, max-age=0"
	h["Cache-Control"] = vals[0:1:1]
	httpheader.AppendVary(h, "Authorization")
	if rep.header[0] != "" {
		h.Set(rep.header[0], rep.header[1])
	}
	if rep.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(rep.retryAfter))
	}
	if rep.body == nil {
		w.WriteHeader(cmpOr(rep.status, http.StatusAccepted))
		return
	}
	vals[1], vals[2] = "application/json", strconv.Itoa(len(rep.body))
	h["Content-Type"], h["Content-Length"] = vals[1:2:2], vals[2:3:3]
	w.WriteHeader(cmpOr(rep.status, http.StatusOK))
	_, _ = w.Write(rep.body)
	release(rep.pooled, rep.gen, rep.body)
}

// serveBatch answers a JSON array of messages, which only protocol
// 2025-03-26 allows (and which an absent MCP-Protocol-Version header
// implies). Each element is served on its own; the answer is the array of
// the responses to its requests, or 202 when it held none (notifications
// and client responses are never answered, JSON-RPC §6). If any element
// needs an authentication or scope challenge, or is over the caller's
// rate limit, the whole batch gets that answer: HTTP has one status per
// response.
func (e *Endpoint) serveBatch(w http.ResponseWriter, r *http.Request, items []jsonrpc.BatchItem, caller *principal.Principal, received time.Time) {
	if v := mcpwire.HeaderValue(r.Header, headerProtocolVersion); v != "" && v != mcpwire.Version20250326 {
		e.write(w, r, e.failure(&record{}, errBatchVersion))
		return
	}
	out := make([]byte, 0, 256*len(items))
	out = append(out, '[')
	n := 0
	for _, it := range items {
		if it.Err == nil && it.Message.Kind != jsonrpc.KindRequest {
			continue // notifications and client responses get no response (JSON-RPC §6)
		}
		var rep reply
		if it.Err != nil {
			rep = e.failure(&record{Call{ID: it.Message.ID}}, it.Err)
		} else {
			rep = e.serveMessage(r, it.Message, caller, true, received)
		}
		if rep.challenge != nil || rep.status == http.StatusTooManyRequests {
			// One status per response: a challenge, or the rate limit
			// with its Retry-After, answers the whole batch.
			e.write(w, r, rep)
			return
		}
		if rep.body == nil {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, rep.body...)
		release(rep.pooled, rep.gen, rep.body)
		n++
	}
	if n == 0 {
		e.write(w, r, reply{Result: accepted()})
		return
	}
	e.write(w, r, reply{Result: Result{body: append(out, ']')}})
}

func cmpOr(v, fallback int) int {
	if v == 0 {
		return fallback
	}
	return v
}

// unbuilt answers a request to a zero value (an Endpoint or ListHandler
// not built by its constructor): 500, and msg to the default logger.
func unbuilt(w http.ResponseWriter, msg string) {
	slog.Default().Error(msg)
	jsonrpc.WriteHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInternalError, ""))
}

// recoverHTTP recovers a panic of what serves the request outside a
// JSON-RPC method's handler (a part's GET or DELETE, its event stream, an
// Authenticator): logged with its stack and answered with 500 (a part's
// response already under way is cut instead: serveVerb), and the server
// goes on. http.ErrAbortHandler, the
// deliberate abort of a response, passes on to net/http.
func (e *Endpoint) recoverHTTP(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	e.logPanic(r.Context(), "serving a request", r.Method, p)
	jsonrpc.WriteHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInternalError, ""))
}

package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file is the one place that maps errors to JSON-RPC errors and HTTP
// statuses: the serving code returns typed errors, and classify turns
// them into responses. Only fixed messages and machine-readable data reach
// clients; backend errors, callback details, token contents and key ids
// never do.
//
//	situation                                   JSON-RPC                 HTTP
//	body is not JSON                            -32700                   400 (jsonrpc.Decoder)
//	not a valid request, batch not allowed      -32600                   400
//	unknown method                              -32601                   200 legacy, 404 modern
//	bad params, invalid or expired cursor       -32602 (data.reason)     200
//	modern _meta or header errors               -32602/-32020/-32022     400
//	resource not found or not visible           -32002 legacy,           200
//	                                            -32602 modern (data.uri)
//	callback or backend failure, deadline       -32603                   200
//	no or invalid token where required          —                        401 + WWW-Authenticate
//	missing scope                               —                        403 + insufficient_scope
//	token cannot be checked now                 —                        503 + Retry-After
//	Origin or Host refused                      -32600                   403
//	method other than POST (GET, DELETE)        -32600                   405 + Allow
//	Accept refuses JSON (or SSE for streams)    -32600                   406
//	unknown or foreign session                  -32600                   404
//	too many streams of one caller              -32600                   429 + Retry-After
//	too many streams in all                     -32603                   503 + Retry-After
//	over the caller's rate limit (RateLimiter)  -31429 (data.retryAfter) 429 + Retry-After

// protoError is an error of the endpoint's own, with its fixed answer.
type protoError struct {
	status   int // HTTP status; 0 means 200
	retry    int // Retry-After in seconds; 0: none
	notFound bool
	code     int64
	message  string
	data     any
}

func (e *protoError) Error() string { return "mcphttp: " + e.message }

// Errors of the transport and the protocol rules.
var (
	errForbiddenOrigin  = &protoError{status: http.StatusForbidden, code: jsonrpc.CodeInvalidRequest, message: "Forbidden origin"}
	errMethodNotAllowed = &protoError{status: http.StatusMethodNotAllowed, code: jsonrpc.CodeInvalidRequest, message: "Method not allowed"}
	errNotAcceptable    = &protoError{status: http.StatusNotAcceptable, code: jsonrpc.CodeInvalidRequest, message: "Accept must admit application/json"}
	errNotAcceptableSSE = &protoError{status: http.StatusNotAcceptable, code: jsonrpc.CodeInvalidRequest, message: "Accept must admit text/event-stream"}
	errMethodNotFound   = &protoError{notFound: true, code: jsonrpc.CodeMethodNotFound}
	errNoSessionHeader  = &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "Session not found"}
	errSessionNotFound  = &protoError{status: http.StatusNotFound, code: jsonrpc.CodeInvalidRequest, message: "Session not found"}
	errUnauthorized     = &protoError{status: http.StatusUnauthorized, code: jsonrpc.CodeInvalidRequest, message: "Authentication required"}
	errStreamsCaller    = &protoError{status: http.StatusTooManyRequests, retry: 30, code: jsonrpc.CodeInvalidRequest, message: "Too many open streams for this caller"}
	errStreamsFull      = &protoError{status: http.StatusServiceUnavailable, retry: 30, code: jsonrpc.CodeInternalError, message: "Too many open streams"}
	errBatchModern      = &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "Batches are not allowed in protocol " + Version20260728}
	errBatchVersion     = &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "Batches are only allowed in protocol " + Version20250326}
	errBatchInitialize  = &protoError{code: jsonrpc.CodeInvalidRequest, message: "initialize must not be part of a batch"}
	errBatchMixed       = &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "A batch must not mix resource methods with other methods"}
	errResultTooLarge   = &protoError{code: jsonrpc.CodeInternalError, message: ""}
)

// CodeRateLimited is the JSON-RPC error code of a request over the
// caller's rate limit (HTTP 429 with Retry-After; data.retryAfter repeats
// the seconds). It is application-defined, outside the JSON-RPC reserved
// range (-32768 … -32000) as the MCP error-code policy asks; 429 echoes
// the HTTP status.
const CodeRateLimited = -31429

// errRateLimited: the caller is over its rate limit for the method's
// class; retry is the whole seconds until a call is allowed again.
func errRateLimited(retry int) error {
	data := struct {
		RetryAfter int `json:"retryAfter"`
	}{retry}
	return &protoError{status: http.StatusTooManyRequests, retry: retry, code: CodeRateLimited, message: "Rate limit exceeded", data: data}
}

// errClientResponse: a JSON-RPC response from the client, which the modern
// protocol does not have.
func errClientResponse(version string) error {
	return &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "Clients do not send responses in protocol " + version}
}

// errHeader: a modern-era header that is missing, invalid or disagrees
// with the body.
func errHeader(header string) error {
	return &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeHeaderMismatch,
		message: "Header " + header + " is missing, invalid or does not match the request body"}
}

// errMeta: a missing or invalid modern-era _meta field.
func errMeta(field string) error {
	return &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidParams, message: "Missing or invalid _meta field " + field}
}

// errUnsupportedVersion echoes the requested version only when it looks
// like one, never arbitrary input.
func errUnsupportedVersion(requested string) error {
	if !versionLike(requested) {
		requested = ""
	}
	data := struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested,omitempty"`
	}{allVersions, requested}
	return &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeUnsupportedProtocolVersion, message: "Unsupported protocol version", data: data}
}

// errNeedsSession: resources/subscribe and unsubscribe outside a session.
func errNeedsSession(method string) error {
	return &protoError{code: jsonrpc.CodeInvalidRequest, message: method + " needs a session: send initialize first, then Mcp-Session-Id"}
}

// invalidParams is a -32602 error with a fixed message of the endpoint's
// own (never client input).
func invalidParams(message string) error {
	return &protoError{code: jsonrpc.CodeInvalidParams, message: "Invalid params: " + message}
}

// uriError carries the URI a not-found error is about, for data.uri.
type uriError struct {
	uri string
	err error
}

func (e *uriError) Error() string { return e.err.Error() }
func (e *uriError) Unwrap() error { return e.err }

// aboutURI attaches the requested URI to an error of a read.
func aboutURI(uri string, err error) error { return &uriError{uri: uri, err: err} }

// classify is the one mapping: the HTTP status and JSON-RPC error for err,
// or, for authentication and scope failures, the error the Authenticator
// answers with a challenge. c is nil for an error of the transport, before
// any message was read.
func (e *Endpoint) classify(c *call, err error) (status int, rpc *jsonrpc.Error, challenge error) {
	var (
		pe        *protoError
		rpcErr    *jsonrpc.Error
		cursorErr *inventory.CursorError
		paramsErr *inventory.ParamsError
		scopeErr  *principal.ScopeError
		ue        *uriError
	)
	switch {
	case errors.Is(err, inventory.ErrUnauthenticated), errors.Is(err, authn.ErrNoCredentials):
		return 0, nil, authn.ErrNoCredentials
	case errors.As(err, &scopeErr):
		return 0, nil, scopeErr
	case errors.Is(err, inventory.ErrNotFound):
		c.noteOutcome(OutcomeNotFound, "")
		uri := ""
		if errors.As(err, &ue) {
			uri = ue.uri
		}
		data := struct {
			URI string `json:"uri"`
		}{uri}
		code := int64(jsonrpc.CodeResourceNotFound)
		if c != nil && c.modern {
			code = jsonrpc.CodeInvalidParams
		}
		return http.StatusOK, jsonrpc.NewError(code, "Resource not found").WithData(data), nil
	case errors.As(err, &cursorErr):
		c.noteOutcome(OutcomeInvalidCursor, cursorErr.Reason)
		data := struct {
			Reason string `json:"reason"`
		}{cursorErr.Reason}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid cursor").WithData(data), nil
	case errors.As(err, &paramsErr):
		data := struct {
			Problems []string `json:"problems"`
		}{paramsErr.Problems}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params").WithData(data), nil
	case errors.As(err, &pe):
		status := cmpOr(pe.status, http.StatusOK)
		if pe.notFound && c != nil && c.modern {
			status = http.StatusNotFound
		}
		rpc := jsonrpc.NewError(pe.code, pe.message)
		if pe.data != nil {
			rpc = rpc.WithData(pe.data)
		}
		return status, rpc, nil
	case errors.As(err, &rpcErr):
		return http.StatusOK, rpcErr, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, "Request cancelled or timed out"), nil
	default:
		// The inventory has already logged what a callback did wrong;
		// record only that this request failed.
		if c != nil {
			e.log.Error("mcphttp: request failed", "method", c.method, "protocol", c.version)
		}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, ""), nil
	}
}

// noteOutcome records, for the Observer, the outcome of a failure that
// status and code alone do not tell apart (see Call.failed).
func (c *call) noteOutcome(o Outcome, reason string) {
	if c != nil && c.obs != nil {
		c.obs.Outcome, c.obs.CursorReason = o, reason
	}
}

// challengeStatus is the HTTP status and outcome the Authenticator answers
// err with (authn.Authenticator.WriteError's table), for the Observer.
func challengeStatus(err error) (int, Outcome) {
	switch {
	case errors.Is(err, principal.ErrInsufficientScope):
		return http.StatusForbidden, OutcomeDenied
	case errors.Is(err, authn.ErrNoCredentials), errors.Is(err, authn.ErrInvalidToken),
		errors.Is(err, authn.ErrInvalidDPoPProof), errors.Is(err, authn.ErrUseDPoPNonce):
		return http.StatusUnauthorized, OutcomeUnauthenticated
	case errors.Is(err, authn.ErrInvalidRequest):
		return http.StatusBadRequest, OutcomeInvalid
	case errors.Is(err, authn.ErrUnavailable):
		return http.StatusServiceUnavailable, OutcomeUnavailable
	case errors.Is(err, authn.ErrThrottled):
		return http.StatusTooManyRequests, OutcomeRateLimited
	}
	return http.StatusInternalServerError, OutcomeError
}

// failure is the reply for an error from serving c.
func (e *Endpoint) failure(c *call, err error) reply {
	status, rpc, challenge := e.classify(c, err)
	if c.obs != nil {
		c.obs.failed(status, rpc, challenge)
	}
	if challenge != nil {
		return reply{authErr: challenge}
	}
	rep := reply{status: status, body: jsonrpc.AppendError(nil, c.id, rpc)}
	var pe *protoError
	if errors.As(err, &pe) {
		rep.retryAfter = pe.retry
	}
	return rep
}

// writeTransportError answers a request refused before any JSON-RPC
// message was read: a JSON-RPC error response without id, as the transport
// specification allows.
func writeTransportError(w http.ResponseWriter, err error) {
	var pe *protoError
	switch {
	case errors.Is(err, ErrForbiddenOrigin):
		pe = errForbiddenOrigin
	case !errors.As(err, &pe):
		pe = &protoError{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest}
	}
	if pe.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(pe.retry))
	}
	jsonrpc.WriteHTTPError(w, cmpOr(pe.status, http.StatusBadRequest), jsonrpc.ID{}, jsonrpc.NewError(pe.code, pe.message))
}

// versionLike reports whether s looks like a protocol version: at most 32
// letters, digits, dots and dashes.
func versionLike(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func cmpOr(v, fallback int) int {
	if v == 0 {
		return fallback
	}
	return v
}

package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/principal"
)

// This file is the one place that maps errors to JSON-RPC errors and HTTP
// statuses: handlers, the endpoint's and the parts', return typed errors,
// and classify turns them into responses. Only fixed messages and
// machine-readable data reach clients; backend errors, callback details,
// token contents and key ids never do.
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
//	no or invalid credentials where required    —                        401 (the Authenticator's challenge)
//	missing scope                               —                        403 + insufficient_scope
//	credentials cannot be checked now           —                        503 + Retry-After
//	too many refused credentials (Throttle)     -32023 (data.retryAfterMs, id null unread)  429 + Retry-After
//	Origin or Host refused                      -32600                   403
//	HTTP method not served                      -32600                   405 + Allow
//	Accept refuses JSON (or SSE for streams)    -32600                   406
//	a part's own error (an *Error)              its code                 its status (+ Retry-After)
//	a URLElicitation, client declared elicitation.url:
//	  2025-11-25                                -32042 (data.elicitations) 200
//	  2026-07-28 read, tools/call, prompts/get  result input_required    200
//	a URLElicitation, otherwise                 -32603 naming the URL    200
//	                                            (2026-07-28: -32021)     400

// Error is an error with an answer of its own: what a part returns for a
// condition of its protocol (an unknown tool, a rate limit, too many
// streams, an unknown session). Its Message and Data are sent to the
// client as they are: fixed texts and machine-readable data, never
// client input or internal detail.
type Error struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// RetryAfter, when positive, is sent as Retry-After, in seconds.
	RetryAfter int
	// Code, Message and Data are the JSON-RPC error.
	Code    int64
	Message string
	Data    any

	notFound bool // an unknown method: 404 in the modern protocol
}

func (e *Error) Error() string { return "mcphttp: " + e.Message }

// Errors of the transport and the protocol rules.
var (
	errForbiddenOrigin  = &Error{Status: http.StatusForbidden, Code: jsonrpc.CodeInvalidRequest, Message: "Forbidden origin"}
	errMethodNotAllowed = &Error{Status: http.StatusMethodNotAllowed, Code: jsonrpc.CodeInvalidRequest, Message: "Method not allowed"}
	errNotAcceptable    = &Error{Status: http.StatusNotAcceptable, Code: jsonrpc.CodeInvalidRequest, Message: "Accept must admit application/json"}
	errMethodNotFound   = &Error{notFound: true, Code: jsonrpc.CodeMethodNotFound}
	errBatchModern      = &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest, Message: "Batches are not allowed in protocol " + mcpwire.Version20260728}
	errBatchVersion     = &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest, Message: "Batches are only allowed in protocol " + mcpwire.Version20250326}
	errBatchInitialize  = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "initialize must not be part of a batch"}
	errPanicked         = &Error{Code: jsonrpc.CodeInternalError} // a handler or observer panicked (logged)
)

// errClientResponse: a JSON-RPC response from the client, which the modern
// protocol does not have.
func errClientResponse(version string) error {
	return &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest, Message: "Clients do not send responses in protocol " + version}
}

// errHeader: a modern-era header that is missing, invalid or disagrees
// with the body.
func errHeader(header string) error {
	return &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeHeaderMismatch,
		Message: "Header " + header + " is missing, invalid or does not match the request body"}
}

// errMeta: a missing or invalid modern-era _meta field.
func errMeta(field string) error {
	return &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidParams, Message: "Missing or invalid _meta field " + field}
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
	return &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
}

// classify is the one mapping: the HTTP status and JSON-RPC error for err,
// or, for authentication and scope failures, the error the Authenticator
// answers with a challenge.
func (e *Endpoint) classify(c *record, err error) (status int, rpc *jsonrpc.Error, challenge error) {
	var (
		pe        *Error
		rpcErr    *jsonrpc.Error
		cursorErr *inventory.CursorError
		paramsErr *inventory.ParamsError
		scopeErr  *principal.ScopeError
		ue        *mcpwire.URIError
		wpe       *mcpwire.ParamsError
		elicitErr URLElicitation
	)
	switch {
	case errors.Is(err, principal.ErrUnauthenticated):
		return 0, nil, principal.ErrUnauthenticated
	case errors.As(err, &scopeErr):
		return 0, nil, scopeErr
	case errors.As(err, &elicitErr):
		// failure answers the input_required form before the table; here
		// only errors remain.
		if _, perr, ok := e.elicitationReply(c, elicitErr); !ok {
			return e.classify(c, perr)
		}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, ""), nil
	case errors.Is(err, inventory.ErrNotFound):
		c.Outcome = OutcomeNotFound
		uri := ""
		if errors.As(err, &ue) {
			uri = ue.URI
		}
		data := struct {
			URI string `json:"uri"`
		}{uri}
		code := int64(jsonrpc.CodeResourceNotFound)
		if c.Modern {
			code = jsonrpc.CodeInvalidParams
		}
		return http.StatusOK, jsonrpc.NewError(code, "Resource not found").WithData(data), nil
	case errors.As(err, &cursorErr):
		c.Outcome, c.CursorReason = OutcomeInvalidCursor, cursorErr.Reason
		data := struct {
			Reason string `json:"reason"`
		}{cursorErr.Reason}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid cursor").WithData(data), nil
	case errors.As(err, &paramsErr):
		data := struct {
			Problems []string `json:"problems"`
		}{paramsErr.Problems}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params").WithData(data), nil
	case errors.As(err, &wpe):
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+wpe.Message), nil
	case errors.As(err, new(mcpwire.ResultTooLarge)):
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, ""), nil // logged where it was found
	case errors.As(err, &pe):
		status := cmpOr(pe.Status, http.StatusOK)
		if pe.notFound && c.Modern {
			status = http.StatusNotFound
		}
		rpc := jsonrpc.NewError(pe.Code, pe.Message)
		if pe.Data != nil {
			rpc = rpc.WithData(pe.Data)
		}
		return status, rpc, nil
	case errors.As(err, &rpcErr):
		return http.StatusOK, rpcErr, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, "Request cancelled or timed out"), nil
	default:
		// The inventory has already logged what a callback did wrong;
		// record only that this request failed.
		if c.Method != "" {
			e.log.Error("mcphttp: request failed", "method", c.Method, "protocol", c.ProtocolVersion)
		}
		return http.StatusOK, jsonrpc.NewError(jsonrpc.CodeInternalError, ""), nil
	}
}

// failure is the reply for an error from serving c.
func (e *Endpoint) failure(c *record, err error) reply {
	if el, ok := errors.AsType[URLElicitation](err); ok {
		if res, _, ok := e.elicitationReply(c, el); ok {
			return reply{Result: res}
		}
	}
	status, rpc, challenge := e.classify(c, err)
	e.failed(c, status, rpc, challenge)
	if challenge != nil {
		return reply{challenge: challenge}
	}
	rep := reply{Result: Result{status: status, body: jsonrpc.AppendError(nil, c.ID, rpc)}}
	var pe *Error
	if errors.As(err, &pe) {
		rep.retryAfter = pe.RetryAfter
	}
	return rep
}

// WriteError answers an HTTP request that no JSON-RPC message of was
// served (a part's GET or DELETE, say) with err's answer from the error
// table: a JSON-RPC error without id. An *Error gets its own status,
// code and Retry-After; anything else 400.
func WriteError(w http.ResponseWriter, err error) { writeTransportError(w, err) }

// writeTransportError answers a request refused before any JSON-RPC
// message was read: a JSON-RPC error response without id, as the transport
// specification allows.
func writeTransportError(w http.ResponseWriter, err error) {
	var pe *Error
	switch {
	case errors.Is(err, origin.ErrForbidden):
		pe = errForbiddenOrigin
	case !errors.As(err, &pe):
		pe = &Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest}
	}
	if pe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(pe.RetryAfter))
	}
	jsonrpc.WriteHTTPError(w, cmpOr(pe.Status, http.StatusBadRequest), jsonrpc.ID{}, jsonrpc.NewError(pe.Code, pe.Message))
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

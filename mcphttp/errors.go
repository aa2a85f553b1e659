package mcphttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file is the one place that maps errors to JSON-RPC errors and HTTP
// statuses. Only fixed messages and machine-readable data reach clients;
// backend errors, callback details, token contents and key ids never do.
//
//	situation                                   JSON-RPC                 HTTP
//	body is not JSON                            -32700                   400
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

// errorFor maps an error from serving c. uri is the resource a read asked
// for, reported in not-found errors.
func (e *Endpoint) errorFor(c *call, err error, uri string) reply {
	var (
		rpcErr    *jsonrpc.Error
		cursorErr *inventory.CursorError
		paramsErr *inventory.ParamsError
		scopeErr  *authn.ScopeError
	)
	switch {
	case errors.Is(err, inventory.ErrUnauthenticated):
		return reply{authErr: authn.ErrNoCredentials}
	case errors.As(err, &scopeErr):
		return reply{authErr: scopeErr}
	case errors.Is(err, inventory.ErrNotFound):
		data := struct {
			URI string `json:"uri"`
		}{uri}
		if c.modern {
			return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Resource not found").WithData(data))
		}
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "Resource not found").WithData(data))
	case errors.As(err, &cursorErr):
		data := struct {
			Reason string `json:"reason"`
		}{cursorErr.Reason}
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid cursor").WithData(data))
	case errors.As(err, &paramsErr):
		data := struct {
			Problems []string `json:"problems"`
		}{paramsErr.Problems}
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params").WithData(data))
	case errors.As(err, &rpcErr):
		return errorReply(0, c.id, rpcErr)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Request cancelled or timed out"))
	default:
		// The inventory has already logged the details of what a callback
		// did wrong; record only that this request failed.
		e.log.Error("mcphttp: request failed", "method", c.method, "protocol", c.version)
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, ""))
	}
}

// invalidParams is a -32602 error with a fixed message of the endpoint's
// own (never client input).
func invalidParams(message string) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+message)
}

// decodeErrorReply answers a body that is not a valid JSON-RPC message:
// always HTTP 400, echoing the id when it could be read.
func decodeErrorReply(id jsonrpc.ID, err error) reply {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "")
	}
	return errorReply(http.StatusBadRequest, id, rpcErr)
}

func headerMismatch(id jsonrpc.ID, header string) reply {
	return errorReply(http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeHeaderMismatch,
		"Header "+header+" is missing, invalid or does not match the request body"))
}

func unsupportedVersion(id jsonrpc.ID, requested string) reply {
	if !versionLike(requested) {
		requested = "" // only echo what looks like a version, never arbitrary input
	}
	data := struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested,omitempty"`
	}{allVersions, requested}
	return errorReply(http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").WithData(data))
}

func errorReply(status int, id jsonrpc.ID, e *jsonrpc.Error) reply {
	return reply{status: status, body: jsonrpc.AppendError(nil, id, e)}
}

func resultReply(id jsonrpc.ID, result []byte) reply {
	return reply{body: jsonrpc.AppendResult(make([]byte, 0, len(result)+48), id, result)}
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

package jsonrpc

import (
	"encoding/json"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// Writing responses. Results arrive already encoded and are copied as is.

const jsonrpcHead = `{"jsonrpc":"2.0","id":`

func appendID(dst []byte, id ID) []byte {
	if id.raw == "" {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}

// ResultEnvelope returns the bytes around a result:
// head is {"jsonrpc":"2.0","id":<id>,"result": and tail is }. A writer can
// send head, then the result's bytes as they are produced, then tail. Both
// slices are new on each call. A zero id is written as null (which is not
// a valid result response: pass the request's id).
func ResultEnvelope(id ID) (head, tail []byte) {
	n := len(jsonrpcHead) + max(len(id.raw), 4) + len(`,"result":`)
	buf := make([]byte, 0, n+1)
	buf = append(buf, jsonrpcHead...)
	buf = appendID(buf, id)
	buf = append(buf, `,"result":`...)
	n = len(buf)
	buf = append(buf, '}')
	return buf[:n:n], buf[n:]
}

// AppendResultHead appends the bytes before a result to dst:
// {"jsonrpc":"2.0","id":<id>,"result": — the head of [ResultEnvelope]
// without allocating. The tail is always "}".
func AppendResultHead(dst []byte, id ID) []byte {
	dst = append(dst, jsonrpcHead...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendResult appends a result response to dst:
// {"jsonrpc":"2.0","id":<id>,"result":<result>}. result must be valid JSON
// (it is not checked or re-encoded); an empty result is written as {}.
func AppendResult(dst []byte, id ID, result json.RawMessage) []byte {
	dst = append(dst, jsonrpcHead...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	if len(result) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, result...)
	}
	return append(dst, '}')
}

// AppendError appends an error response to dst:
// {"jsonrpc":"2.0","id":<id>,"error":{"code":…,"message":…,"data":…}}.
// A zero id is written as null. Data is omitted when nil, and also when it
// is not valid JSON (so a bad Data never corrupts the response). An empty
// Message is replaced by the standard one for the code, and a nil e is
// written as an internal error.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, jsonrpcHead...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	if e == nil {
		e = &Error{Code: CodeInternalError}
	}
	dst = appendErrorObject(dst, e)
	return append(dst, '}')
}

func appendErrorObject(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	msg := e.Message
	if msg == "" {
		msg = standardMessage(e.Code)
	}
	dst = jsonstrict.AppendString(dst, msg)
	if e.Data != nil && json.Valid(e.Data) {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

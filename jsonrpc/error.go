package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Error codes. The first five are JSON-RPC 2.0's own; the others are MCP's.
const (
	CodeParseError     = -32700 // the body is not valid JSON (or not valid UTF-8)
	CodeInvalidRequest = -32600 // valid JSON, but not a valid JSON-RPC message
	CodeMethodNotFound = -32601 // unknown method (also MCP's "capability not supported")
	CodeInvalidParams  = -32602 // params do not fit the method
	CodeInternalError  = -32603 // the server failed; say nothing more to the client

	// CodeResourceNotFound is MCP's legacy (2025-03-26 … 2025-11-25) code for an
	// unknown resource URI. The 2026-07-28 protocol reserves it and uses
	// CodeInvalidParams instead.
	CodeResourceNotFound = -32002

	// The 2026-07-28 protocol's codes.
	CodeHeaderMismatch             = -32020 // an HTTP header disagrees with the body
	CodeMissingClientCapability    = -32021 // data.requiredCapabilities
	CodeUnsupportedProtocolVersion = -32022 // data.supported, data.requested
)

// Error is a JSON-RPC error object. It is both a Go error and the "error"
// member of a response. Message is sent to the client as is, so it must be
// a fixed text, never internal error text or input bytes. Data, when not
// nil, is pre-encoded JSON sent as is.
//
// Errors returned by [Decode] carry one of the fixed messages "Parse error"
// and "Invalid Request" and never any part of the input.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage

	// reason says which rule a decoded message broke. It is fixed text, for
	// tests and debugging; it is never written to the wire.
	reason string
}

// NewError returns an Error with the given code and message.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Error returns "jsonrpc: error <code>: <message>". The message is quoted
// when it holds control or non-printable characters. For an Error decoded
// from a peer's response the message is peer-controlled: log the Code.
func (e *Error) Error() string {
	if e == nil {
		return "jsonrpc: <nil>"
	}
	msg := e.Message
	if strings.IndexFunc(msg, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		msg = strconv.QuoteToASCII(msg)
	}
	return "jsonrpc: error " + strconv.FormatInt(e.Code, 10) + ": " + msg
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && e != nil && e.Code == t.Code
}

// WithData returns a copy of e whose Data is json.Marshal(v). If v cannot be
// encoded, the copy has no Data (the error is still sent, without details).
func (e *Error) WithData(v any) *Error {
	c := *e
	c.Data = nil
	if b, err := json.Marshal(v); err == nil {
		c.Data = b
	}
	return &c
}

// MarshalJSON encodes e as a JSON-RPC error object: code, message and, when
// not nil, data. A nil e encodes as null.
func (e *Error) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("null"), nil
	}
	return appendErrorObject(nil, e), nil
}

// TooLargeError is returned by [Decode] and [DecodeBatch] when the body is
// longer than the byte limit. Its Error text mentions only the limit.
// HTTP servers answer it with 413.
type TooLargeError struct {
	Limit int64 // the limit in bytes that was exceeded
}

func (e *TooLargeError) Error() string {
	return "jsonrpc: message larger than " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// standardMessage returns the fixed message for a code, or "Server error".
func standardMessage(code int64) string {
	switch code {
	case CodeParseError:
		return "Parse error"
	case CodeInvalidRequest:
		return "Invalid Request"
	case CodeMethodNotFound:
		return "Method not found"
	case CodeInvalidParams:
		return "Invalid params"
	case CodeInternalError:
		return "Internal error"
	case CodeResourceNotFound:
		return "Resource not found"
	case CodeHeaderMismatch:
		return "Header mismatch"
	case CodeMissingClientCapability:
		return "Missing required client capability"
	case CodeUnsupportedProtocolVersion:
		return "Unsupported protocol version"
	}
	return "Server error"
}

func errParse(reason string) *Error {
	return &Error{Code: CodeParseError, Message: "Parse error", reason: reason}
}

func errInvalid(reason string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Invalid Request", reason: reason}
}

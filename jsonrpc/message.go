package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// ID is a request id: a JSON string or integer kept as the exact text
// received, so that a response echoes it byte for byte (large integers,
// escapes and all). The zero ID means "absent"; it encodes as null.
// IDs are comparable and may be used as map keys; two IDs are equal when
// their JSON text is equal ("1" and 1 differ, as they should).
type ID struct {
	raw string
}

// StringID returns the ID for the string s.
func StringID(s string) ID {
	return ID{raw: string(jsonstrict.AppendString(nil, s))}
}

// Int64ID returns the ID for the integer n.
func Int64ID(n int64) ID {
	return ID{raw: strconv.FormatInt(n, 10)}
}

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// Raw returns the id's exact JSON text, or "" when it is absent.
func (id ID) Raw() string { return id.raw }

// MarshalJSON returns the id's JSON text, or null when it is absent.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

var errBadID = errors.New("jsonrpc: id must be a string or an integer")

// UnmarshalJSON sets the id from a JSON string or integer, keeping its exact
// text; null gives the zero ID. Anything else (a fraction, an exponent, a
// boolean, an object, invalid UTF-8) is an error.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := jsonstrict.Parse(b)
	if err != nil {
		return errBadID
	}
	switch v.Kind() {
	case jsonstrict.Null:
		*id = ID{}
		return nil
	case jsonstrict.String:
	case jsonstrict.Number:
		if !isInteger(v.Raw()) {
			return errBadID
		}
	default:
		return errBadID
	}
	*id = ID{raw: string(v.Raw())}
	return nil
}

// Kind says what a message is. The zero Kind is KindInvalid.
type Kind uint8

const (
	KindInvalid      Kind = iota // not a valid message
	KindRequest                  // method and id: expects a response
	KindNotification             // method, no id: must not be answered
	KindResponse                 // result or error, and an id
)

// String returns "invalid", "request", "notification" or "response".
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Message is one decoded JSON-RPC message.
//
// Params, Result and Error.Data are sub-slices of the bytes given to
// [Decode] (no copy): they stay valid only as long as those bytes are not
// modified or reused.
type Message struct {
	Kind   Kind
	ID     ID     // zero for notifications and for error responses with "id": null
	Method string // requests and notifications

	Params json.RawMessage // nil when absent, else a JSON object

	Result json.RawMessage // responses: a JSON object, nil for an error response
	Error  *Error          // responses: the error object, nil for a result
}

// BatchItem is one element of a batch decoded by [DecodeBatch]: either a
// Message or, when the element is not a valid message, an *Error (whose
// Message.ID is still set when the element's id could be read).
type BatchItem struct {
	Message Message
	Err     error
}

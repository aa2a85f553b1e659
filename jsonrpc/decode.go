package jsonrpc

import (
	"errors"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// The decoder reads a body with the kit's strict JSON engine, in one pass:
// the engine checks the JSON (syntax, UTF-8, surrogates, depth, duplicate
// and case-variant names at any depth) and hands the top-level members to
// the envelope (envelope.go), which captures them and checks the JSON-RPC
// rules. A body that is not JSON is always a parse error, whatever rule it
// broke first.

// The engine's bounds: a message nests MaxDepth deep counting its own
// object; a batch adds the array around its elements.
var (
	messageOpts = jsonstrict.Options{MaxDepth: MaxDepth}
	batchOpts   = jsonstrict.Options{MaxDepth: MaxDepth + 1}
)

// Decode is [Limits.Decode] with Limits{MaxBytes: maxBytes}: maxBytes <= 0
// means [DefaultMaxBytes], and ids are bounded by [DefaultMaxIDBytes].
func Decode(data []byte, maxBytes int64) (Message, error) {
	return Limits{MaxBytes: maxBytes}.Decode(data)
}

// Decode decodes one JSON-RPC message strictly (see the package doc for
// the rules) within the limits l.
//
// A body over l.MaxBytes gives a *[TooLargeError]; any other failure gives
// an *[Error] with a fixed message: [CodeParseError] when the body is not
// JSON, [CodeInvalidRequest] when it is JSON but not a valid message (a
// batch array included, and an id longer than l.MaxIDBytes). On an
// Invalid Request error the returned Message still carries the ID when a
// valid, unambiguous id within the limit could be read, so that the error
// response can echo it; otherwise the Message is zero.
//
// The returned Params, Result and Error.Data alias data.
func (l Limits) Decode(data []byte) (Message, error) {
	if err := checkSize(data, l.maxBytes()); err != nil {
		return Message{}, err
	}
	if c := firstByte(data); c != '{' {
		reason := "not an object"
		if c == '[' {
			reason = "batch not allowed here"
		}
		_, err := messageOpts.Parse(data)
		if e := fatal(err); e != nil {
			return Message{}, e
		}
		return Message{}, errInvalid(reason)
	}
	return decodeObject(data, l.maxID())
}

// decodeObject decodes the message object data (its first byte, after
// white space, is '{').
func decodeObject(data []byte, maxID int) (Message, error) {
	env := envelope{maxID: maxID}
	err := messageOpts.Members(data, env.member)
	if e := fatal(err); e != nil {
		if e.Code == CodeParseError {
			return Message{}, e
		}
		return Message{ID: env.validID()}, e
	}
	if err != nil { // a duplicate name: every member was still seen
		return Message{ID: env.validID()}, errInvalid("duplicate member name")
	}
	return env.message()
}

// fatal maps the engine's failures that end a decode: a syntax error is a
// parse error, too deep is an invalid request. nil, a duplicate name and
// the wrong kind of value (JSON, but not a valid message or batch: the
// caller decides) give nil.
func fatal(err error) *Error {
	switch {
	case err == nil, errors.Is(err, jsonstrict.ErrDuplicate), errors.Is(err, jsonstrict.ErrKind):
		return nil
	case errors.Is(err, jsonstrict.ErrDepth):
		return errInvalid("nesting too deep")
	}
	return errParse(err.Error())
}

func checkSize(data []byte, maxBytes int64) error {
	if int64(len(data)) > maxBytes {
		return &TooLargeError{Limit: maxBytes}
	}
	return nil
}

// DecodeBatch is [Limits.DecodeBatch] with Limits{MaxBytes: maxBytes}:
// maxBytes <= 0 means [DefaultMaxBytes], at most [MaxBatch] elements.
func DecodeBatch(data []byte, maxBytes int64) ([]BatchItem, error) {
	return Limits{MaxBytes: maxBytes}.DecodeBatch(data)
}

// DecodeBatch decodes a JSON-RPC batch: a top-level array of up to
// l.MaxBatch messages, each decoded with the same rules as [Limits.Decode]
// into its own BatchItem, so that the caller can answer every element.
// Only callers that negotiated protocol 2025-03-26 should accept batches;
// use [IsBatch] to choose between Decode and DecodeBatch.
//
// The error is for the batch as a whole: *[TooLargeError] (the whole body
// over l.MaxBytes), an *[Error] with [CodeParseError] when the body is not
// JSON, or with [CodeInvalidRequest] when it is not an array, is empty,
// has more than l.MaxBatch elements or nests too deep. Per-element
// problems (an id over l.MaxIDBytes, a duplicate name included) are in
// BatchItem.Err.
func (l Limits) DecodeBatch(data []byte) ([]BatchItem, error) {
	if err := checkSize(data, l.maxBytes()); err != nil {
		return nil, err
	}
	maxBatch, maxID := l.maxBatch(), l.maxID()
	var items []BatchItem
	n := 0
	// One validating pass over the whole; each element, already validated,
	// is read as a message without validating it again.
	err := batchOpts.Elements(data, func(v jsonstrict.Value) bool {
		n++
		if n <= maxBatch {
			items = append(items, element(v, maxID, false))
		}
		return true
	})
	switch e := fatal(err); {
	case e != nil:
		return nil, e
	case errors.Is(err, jsonstrict.ErrKind):
		return nil, errInvalid("not a batch")
	case n == 0:
		return nil, errInvalid("empty batch")
	case n > maxBatch:
		return nil, errInvalid("batch too large")
	case err != nil:
		// A duplicate name somewhere (hostile input): find the elements
		// that have one by validating each again.
		items = items[:0]
		_ = batchOpts.Elements(data, func(v jsonstrict.Value) bool {
			items = append(items, element(v, maxID, true))
			return true
		})
	}
	return items, nil
}

// element decodes one validated batch element; validate says whether to
// look for duplicate names inside it.
func element(v jsonstrict.Value, maxID int, validate bool) BatchItem {
	if v.Kind() != jsonstrict.Object {
		return BatchItem{Err: errInvalid("batch element is not an object")}
	}
	var m Message
	var err error
	if validate {
		m, err = decodeObject(v.Raw(), maxID)
	} else {
		env := envelope{maxID: maxID}
		_ = v.Members(env.member)
		m, err = env.message()
	}
	return BatchItem{Message: m, Err: err}
}

// firstByte returns the first byte of data that is not JSON white space,
// or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// IsBatch reports whether the first byte of data that is not JSON white
// space is '['. It does not validate anything.
func IsBatch(data []byte) bool {
	return firstByte(data) == '['
}

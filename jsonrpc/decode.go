package jsonrpc

// Limits of the decoder.
const (
	// DefaultMaxBytes is the body limit of the zero [Limits].
	DefaultMaxBytes = 4 << 20

	// DefaultMaxIDBytes is the id limit of the zero [Limits].
	DefaultMaxIDBytes = 256

	// MaxDepth is the deepest nesting of objects and arrays a message may
	// have; the message object itself is at depth 1.
	MaxDepth = 64

	// MaxBatch is the batch limit of the zero [Limits]: the largest number
	// of elements DecodeBatch accepts by default.
	MaxBatch = 100
)

// Limits bounds what [Limits.Decode] and [Limits.DecodeBatch] accept. The
// zero value is the default; every zero (or negative) field means its
// default. Limits is a plain value, safe to copy and to use concurrently.
type Limits struct {
	// MaxBytes is the longest body accepted, in bytes. Zero means
	// DefaultMaxBytes (4 MiB). A longer body is a *TooLargeError, found
	// before anything else is read.
	MaxBytes int64

	// MaxIDBytes is the longest id accepted: the length of the id's JSON
	// text as received (quotes and escapes included). Zero means
	// DefaultMaxIDBytes (256). A message with a longer id is
	// CodeInvalidRequest, and the id is not echoed (the Message's ID is
	// zero), so that one request cannot make a server write or log
	// megabytes of someone else's choosing.
	MaxIDBytes int

	// MaxBatch is the largest number of elements of a batch. Zero means
	// MaxBatch (100). A bigger batch is CodeInvalidRequest as a whole.
	MaxBatch int
}

func (l Limits) maxBytes() int64 {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

func (l Limits) maxID() int {
	if l.MaxIDBytes <= 0 {
		return DefaultMaxIDBytes
	}
	return l.MaxIDBytes
}

func (l Limits) maxBatch() int {
	if l.MaxBatch <= 0 {
		return MaxBatch
	}
	return l.MaxBatch
}

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
	s := scanner{data: data, maxID: l.maxID()}
	s.ws()
	var ok bool
	switch s.at() {
	case '{':
		ok = s.object(1, modeTop)
	case '[':
		s.invalid("batch not allowed here")
		ok = s.array(1)
	default:
		s.invalid("not an object")
		ok = s.value(0)
	}
	if err := s.end(ok); err != nil {
		if err.Code == CodeParseError {
			return Message{}, err
		}
		return Message{ID: s.id()}, err
	}
	return s.message()
}

// end checks what follows the top-level value and reports a fatal failure.
func (s *scanner) end(ok bool) *Error {
	if ok {
		s.ws()
		if s.i != len(s.data) {
			s.parseErr("bytes after the value")
			ok = false
		}
	}
	if ok {
		return nil
	}
	if s.fail == failDepth {
		return errInvalid(s.reason)
	}
	return errParse(s.reason)
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
// problems (an id over l.MaxIDBytes included) are in BatchItem.Err.
func (l Limits) DecodeBatch(data []byte) ([]BatchItem, error) {
	if err := checkSize(data, l.maxBytes()); err != nil {
		return nil, err
	}
	maxBatch := l.maxBatch()
	s := scanner{data: data, maxID: l.maxID()}
	s.ws()
	if s.at() != '[' {
		if err := s.end(s.value(0)); err != nil {
			return nil, err
		}
		return nil, errInvalid("not a batch")
	}
	s.i++
	s.ws()
	if s.at() == ']' {
		s.i++
		if err := s.end(true); err != nil {
			return nil, err
		}
		return nil, errInvalid("empty batch")
	}
	var items []BatchItem
	n := 0
	for {
		n++
		if n > maxBatch { // only check the syntax of the rest
			if !s.value(1) {
				return nil, s.end(false)
			}
		} else {
			item, ok := s.element()
			if !ok {
				return nil, s.end(false)
			}
			items = append(items, item)
		}
		s.ws()
		switch s.at() {
		case ',':
			s.i++
			s.ws()
			continue
		case ']':
			s.i++
		default:
			s.parseErr("expected , or ]")
			return nil, s.end(false)
		}
		break
	}
	if err := s.end(true); err != nil {
		return nil, err
	}
	if n > maxBatch {
		return nil, errInvalid("batch too large")
	}
	return items, nil
}

// element decodes one batch element; ok is false on a fatal failure.
func (s *scanner) element() (item BatchItem, ok bool) {
	s.top, s.bad = top{}, ""
	if s.at() != '{' {
		if !s.value(1) {
			return item, false
		}
		return BatchItem{Err: errInvalid("batch element is not an object")}, true
	}
	if !s.object(1, modeTop) {
		return item, false
	}
	msg, err := s.message()
	return BatchItem{Message: msg, Err: err}, true
}

// IsBatch reports whether the first byte of data that is not JSON white
// space is '['. It does not validate anything.
func IsBatch(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '['
	}
	return false
}

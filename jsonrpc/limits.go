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

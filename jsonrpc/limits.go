package jsonrpc

import (
	"sync/atomic"
	"time"
)

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

	// DefaultBodyBudget is the size of the process-wide [BodyBudget] that
	// a [Limits] without one of its own draws from.
	DefaultBodyBudget = 64 << 20

	// DefaultReadTimeout is the body read deadline of the zero [Limits].
	DefaultReadTimeout = 10 * time.Second
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

	// Budget bounds the memory of all request bodies being read or
	// served at once (see [BodyBudget]); a request that finds no room
	// gets 503 with Retry-After. Nil means a process-wide budget of
	// DefaultBodyBudget (64 MiB), shared by every Limits without one.
	Budget *BodyBudget

	// ReadTimeout bounds the time reading a body may take, from the
	// first read: a body that is still arriving then gets 400, and its
	// connection is closed. It is set as the connection's read deadline
	// (http.ResponseController) while the body is read and cleared
	// after, so it replaces the http.Server's ReadTimeout for the body
	// and a response stream may follow. Zero means DefaultReadTimeout
	// (10 s); negative means none (the server's deadlines alone).
	ReadTimeout time.Duration
}

// BodyBudget bounds the memory that request bodies hold at once, across
// every request that draws from it: a body's storage is charged to it as
// the storage grows with the bytes received (never by the Content-Length
// a client declares), and returned when the body is released. A request
// whose storage cannot be charged is refused with 503 and Retry-After,
// so that slow or large bodies can take no more than the budget, whoever
// sends them. It is safe for concurrent use.
type BodyBudget struct {
	max  int64
	used atomic.Int64
}

// NewBodyBudget returns a budget of maxBytes; zero or negative means
// DefaultBodyBudget.
func NewBodyBudget(maxBytes int64) *BodyBudget {
	if maxBytes <= 0 {
		maxBytes = DefaultBodyBudget
	}
	return &BodyBudget{max: maxBytes}
}

// InUse returns the bytes charged now.
func (b *BodyBudget) InUse() int64 { return b.used.Load() }

// reserve charges n bytes, and reports whether they fit.
func (b *BodyBudget) reserve(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// release returns n bytes charged before.
func (b *BodyBudget) release(n int64) {
	if b != nil && n != 0 {
		b.used.Add(-n)
	}
}

// defaultBudget is the budget of every Limits without one.
var defaultBudget = NewBodyBudget(DefaultBodyBudget)

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

func (l Limits) budget() *BodyBudget {
	if l.Budget == nil {
		return defaultBudget
	}
	return l.Budget
}

func (l Limits) readTimeout() time.Duration {
	if l.ReadTimeout == 0 {
		return DefaultReadTimeout
	}
	return l.ReadTimeout
}

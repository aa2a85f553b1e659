package jsonrpc

import (
	"net/http"
	"net/netip"
	"time"
)

// Limits of the decoder.
const (
	// DefaultMaxBytes is the body limit of the zero [Limits] for a
	// signed-in caller.
	DefaultMaxBytes = 4 << 20

	// DefaultAnonymousMaxBytes is the body limit of the zero [Limits] for
	// an anonymous caller: enough for initialize, server/discover and
	// ping with room to spare, the calls a caller without credentials
	// makes.
	DefaultAnonymousMaxBytes = 64 << 10

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
	// before anything else is read. An anonymous caller's body is held
	// to the smaller AnonymousMaxBytes.
	MaxBytes int64

	// AnonymousMaxBytes is the longest body accepted from an anonymous
	// caller (see [Limits.ReadBody]: a request without a principal). Zero
	// means DefaultAnonymousMaxBytes (64 KiB); it never exceeds MaxBytes.
	// A body declared longer is refused with 413 before any of it is
	// read.
	AnonymousMaxBytes int64

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
	// served at once, in shares: anonymous callers in a small pool of
	// their own, each signed-in principal at most its share (see
	// [BodyBudget]); a request that finds no room in its share gets 503
	// with Retry-After. Nil means a process-wide budget of
	// DefaultBodyBudget (64 MiB) with the default shares, shared by every
	// Limits without one; so does a BodyBudget not made by NewBodyBudget.
	Budget *BodyBudget

	// ClientAddr returns the address of a request's client, whose share
	// of the anonymous pool an anonymous body is charged to (see
	// [BudgetOptions]). Nil, or an invalid result, means r.RemoteAddr.
	// Behind a reverse proxy, give the address it vouches for (the
	// method value of mcphttp/ratelimit's TrustedProxies.ClientAddr), or
	// every anonymous caller shares the proxy's.
	ClientAddr func(r *http.Request) netip.Addr

	// ReadTimeout bounds the time reading a body may take, from the
	// first read: a body that is still arriving then gets 400, and its
	// connection is closed. It is set as the connection's read deadline
	// (http.ResponseController) while the body is read and cleared
	// after, so it replaces the http.Server's ReadTimeout for the body
	// and a response stream may follow. Zero means DefaultReadTimeout
	// (10 s); negative means none (the server's deadlines alone).
	ReadTimeout time.Duration
}

// defaultBudget is the budget of every Limits without one.
var defaultBudget = NewBodyBudget(DefaultBodyBudget, BudgetOptions{})

func (l Limits) maxBytes() int64 {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

// maxBytesFor is the body limit of a caller: anonymous or signed in.
func (l Limits) maxBytesFor(anonymous bool) int64 {
	m := l.maxBytes()
	if !anonymous {
		return m
	}
	a := l.AnonymousMaxBytes
	if a <= 0 {
		a = DefaultAnonymousMaxBytes
	}
	return min(a, m)
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
	if l.Budget == nil || l.Budget.max <= 0 { // nil, or not made by NewBodyBudget
		return defaultBudget
	}
	return l.Budget
}

// clientAddr is the address of r's client (see Limits.ClientAddr); the
// zero Addr when it has none.
func (l Limits) clientAddr(r *http.Request) netip.Addr {
	if l.ClientAddr != nil {
		if a := l.ClientAddr(r); a.IsValid() {
			return a
		}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{} // a Unix socket, a test: one share for all of them
	}
	return ap.Addr()
}

func (l Limits) readTimeout() time.Duration {
	if l.ReadTimeout == 0 {
		return DefaultReadTimeout
	}
	return l.ReadTimeout
}

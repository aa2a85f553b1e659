package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Body is the decoded body of one JSON-RPC POST request: one message, or a
// batch. The [Decoder] middleware makes it and puts it in the request
// context; everything after it works from this one strict decode.
type Body struct {
	// Raw is the body exactly as received, for a handler that forwards
	// it. It and everything decoded from it alias pooled storage that is
	// valid until the Decoder's next handler returns.
	Raw []byte
	// Batch reports a JSON array: Items holds its elements, each decoded
	// on its own. Otherwise Message is the one message.
	Batch   bool
	Message Message
	Items   []BatchItem

	pooled *rawBuf
}

type bodyKey struct{}

// NewContext returns a copy of ctx that carries b.
func NewContext(ctx context.Context, b *Body) context.Context {
	return context.WithValue(ctx, bodyKey{}, b)
}

// FromContext returns the Body the [Decoder] put in ctx, and whether one
// was there.
func FromContext(ctx context.Context) (*Body, bool) {
	b, ok := ctx.Value(bodyKey{}).(*Body)
	return b, ok && b != nil
}

// Decoder returns middleware that reads and decodes the body of every POST
// request once, strictly, under l (see [Limits.Decode] for the rules) and
// the share of its caller: the principal an authentication middleware in
// front put in the context (principal.FromContext), else anonymous (see
// [Limits.ReadBody]), and
// calls next with the [Body] in the request context ([FromContext]) and
// r.Body reset to the same bytes, so that a handler that reads the body
// itself still can. Requests with other methods pass through untouched.
//
// Malformed input is answered here and never reaches next:
//
//	Content-Type not application/json     415
//	body over l.MaxBytes                  413 (after reading at most that many bytes)
//	body not JSON                         400, -32700
//	not a JSON-RPC message                400, -32600 (echoing the id when it is unambiguous)
//	batch empty, too long or not JSON     400, -32600 / -32700
//
// Elements of a batch that are not valid messages are not answered here:
// their errors are in Body.Items, for next to answer each in the batch's
// response. Whether a batch is allowed at all is next's decision (MCP
// allows them only in protocol 2025-03-26).
func Decoder(l Limits) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			if _, ok := FromContext(r.Context()); ok { // decoded already
				next.ServeHTTP(w, r)
				return
			}
			b, ok := l.ReadBody(w, r)
			if !ok {
				return
			}
			defer b.Release()
			raw := b.Raw
			r = r.WithContext(NewContext(r.Context(), b))
			r.Body = io.NopCloser(bytes.NewReader(raw))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
			next.ServeHTTP(w, r)
		})
	}
}

// ReadBody reads and decodes r's body as the [Decoder] does, answering
// malformed input itself: ok is false when it has answered. It does not
// look at r's method, and it does not put the Body in the context. Call
// b.Release once nothing uses the Body any more.
//
// The body is read as its caller's: the principal in r's context
// (principal.FromContext: authentication ran in front), else an
// anonymous caller's, held to AnonymousMaxBytes and the budget's
// anonymous pool. Credentials in r's headers that nothing verified yet
// count for nothing: authenticate first (or call [Limits.ReadBodyFor]
// with the caller).
func (l Limits) ReadBody(w http.ResponseWriter, r *http.Request) (b *Body, ok bool) {
	if p, ok := principal.FromContext(r.Context()); ok {
		return l.ReadBodyFor(w, r, &p)
	}
	return l.ReadBodyFor(w, r, nil)
}

// ReadBodyFor is [Limits.ReadBody] for a caller already known: caller's
// share of the budget and MaxBytes, or, for a nil caller, its client
// address's share of the anonymous pool (see Limits.ClientAddr) and
// AnonymousMaxBytes. A body over the caller's limit is 413
// (refused before it is read when so declared); a body that finds no
// room in the caller's share is 503 with Retry-After, and costs no other
// caller anything.
func (l Limits) ReadBodyFor(w http.ResponseWriter, r *http.Request, caller *principal.Principal) (b *Body, ok bool) {
	if mt, _, _ := strings.Cut(firstValue(r.Header["Content-Type"]), ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		WriteHTTPError(w, http.StatusUnsupportedMediaType, ID{}, NewError(CodeInvalidRequest, "Content-Type must be application/json"))
		return nil, false
	}
	raw, err := l.read(w, r, caller)
	if err != nil {
		switch {
		case errors.Is(err, errTooLarge):
			WriteHTTPError(w, http.StatusRequestEntityTooLarge, ID{}, NewError(CodeInvalidRequest, "Request body too large"))
		case errors.Is(err, errBusy):
			w.Header().Set("Retry-After", "1")
			WriteHTTPError(w, http.StatusServiceUnavailable, ID{}, NewError(CodeInternalError, "Server busy"))
		default:
			WriteHTTPError(w, http.StatusBadRequest, ID{}, NewError(CodeInvalidRequest, "Cannot read request body"))
		}
		return nil, false
	}
	b = &Body{Raw: raw.b, pooled: raw}
	if IsBatch(raw.b) {
		b.Batch = true
		b.Items, err = l.DecodeBatch(raw.b)
	} else {
		b.Message, err = l.Decode(raw.b)
	}
	if err != nil {
		var id ID
		if !b.Batch {
			id = b.Message.ID
		}
		b.Release()
		writeDecodeError(w, id, err)
		return nil, false
	}
	return b, true
}

// ErrBusy is the error of [Limits.ReadRawFor] for a body that finds no
// room in its caller's share of the budget: answer 503 with Retry-After.
var ErrBusy = errBusy

// ReadRawFor reads r's body as [Limits.ReadBodyFor] does, without
// decoding it: at most max bytes (zero or negative: the caller's limit,
// MaxBytes or AnonymousMaxBytes), into storage that grows with the bytes
// received and is charged to caller's share of l's budget (for a nil
// caller, its client address's share of the anonymous pool), within the
// read timeout. It is for the other routes of a server that read request
// bodies, a REST API beside the MCP endpoint, so that their bodies count
// in the same memory accounting. It writes nothing to w but the
// connection's read deadline.
//
// Call release once nothing uses raw; raw must not be used afterwards.
// err is a *[TooLargeError] for a body over max, [ErrBusy] when the
// caller's share has no room (answer 503 with Retry-After), else the
// read's own error (answer 400).
func (l Limits) ReadRawFor(w http.ResponseWriter, r *http.Request, caller *principal.Principal, max int64) (raw []byte, release func(), err error) {
	if max <= 0 {
		max = l.maxBytesFor(caller == nil)
	}
	rb, err := l.readMax(w, r, caller, max)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, nil, &TooLargeError{Limit: max}
	case err != nil:
		return nil, nil, err
	}
	return rb.b, func() {
		if rb != nil {
			putRaw(rb)
			rb = nil
		}
	}, nil
}

// read reads r's body under the caller's byte limit and share of the
// budget, and l's read timeout.
func (l Limits) read(w http.ResponseWriter, r *http.Request, caller *principal.Principal) (*rawBuf, error) {
	return l.readMax(w, r, caller, l.maxBytesFor(caller == nil))
}

// readMax is read with a byte limit of max.
func (l Limits) readMax(w http.ResponseWriter, r *http.Request, caller *principal.Principal, max int64) (*rawBuf, error) {
	var addr netip.Addr
	if caller == nil {
		addr = l.clientAddr(r)
	}
	acct := l.budget().accountOf(caller, addr)
	timeout := l.readTimeout()
	if timeout <= 0 {
		return readLimited(r, max, acct)
	}
	// The connection's read deadline for the body alone. A ResponseWriter
	// that cannot set one leaves the server's deadlines.
	rc := http.NewResponseController(w)
	set := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	rb, err := readLimited(r, max, acct)
	if set && err == nil {
		// Read to the end: an event stream may follow on this request.
		// After a failure the deadline stays, so that net/http does not
		// wait for the rest of a trickling body before it answers.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return rb, err
}

// Release returns the Body's storage for reuse. The Body, its Raw bytes
// and everything decoded from them must not be used afterwards. Calling it
// is optional; calling it twice is harmless.
func (b *Body) Release() {
	if b == nil || b.pooled == nil {
		return
	}
	putRaw(b.pooled)
	b.pooled, b.Raw, b.Message, b.Items = nil, nil, Message{}, nil
}

// writeDecodeError answers a body that is not a valid message: always 400,
// echoing the id when it could be read.
func writeDecodeError(w http.ResponseWriter, id ID, err error) {
	var e *Error
	if !errors.As(err, &e) {
		status := http.StatusBadRequest
		var tl *TooLargeError
		if errors.As(err, &tl) {
			status = http.StatusRequestEntityTooLarge
		}
		WriteHTTPError(w, status, id, NewError(CodeInvalidRequest, ""))
		return
	}
	WriteHTTPError(w, http.StatusBadRequest, id, e)
}

// WriteHTTPError writes a JSON-RPC error response with the given HTTP
// status, as answers to malformed requests are written: Content-Type
// application/json, Cache-Control no-store, and an explicit
// Content-Length.
func WriteHTTPError(w http.ResponseWriter, status int, id ID, e *Error) {
	body := AppendError(make([]byte, 0, 96), id, e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// rawBuf is pooled body storage, charged to the account (a share of a
// BodyBudget) it came from.
type rawBuf struct {
	b    []byte
	acct account
	held int64 // bytes of budget charged for b's capacity
}

// Body storage starts at initialBodyBytes, pooled, and doubles as bytes
// arrive. Only storage of the initial size is pooled: a body that grew
// leaves its storage to the collector, so that every body starts with
// (and is charged) the same small amount.
const initialBodyBytes = 4 << 10

var rawPool = sync.Pool{New: func() any { return &rawBuf{b: make([]byte, 0, initialBodyBytes)} }}

func putRaw(rb *rawBuf) {
	rb.acct.release(rb.held)
	rb.acct, rb.held = account{}, 0
	if cap(rb.b) != initialBodyBytes {
		return
	}
	rb.b = rb.b[:0]
	rawPool.Put(rb)
}

var (
	errTooLarge = errors.New("jsonrpc: body too large")
	errBusy     = errors.New("jsonrpc: body budget exhausted")
)

// readLimited reads the body into pooled storage, reading at most max+1
// bytes: a larger body is errTooLarge. Storage follows the bytes that
// arrive, never the Content-Length a client declares: it starts at
// initialBodyBytes and doubles when full and more bytes arrive (a
// declared length only caps the growth, so that a body of the length
// declared fits exactly), each step charged to acct first: errBusy
// when its share has no room.
func readLimited(r *http.Request, max int64, acct account) (*rawBuf, error) {
	if r.ContentLength > max {
		return nil, errTooLarge // declared too large: refused before anything is read
	}
	if !acct.reserve(initialBodyBytes) {
		return nil, errBusy
	}
	rb := rawPool.Get().(*rawBuf)
	rb.acct, rb.held = acct, initialBodyBytes
	buf, err := readInto(r, rb, max)
	rb.b = buf
	if err == nil && int64(len(buf)) > max {
		err = errTooLarge
	}
	if err != nil {
		putRaw(rb)
		return nil, err
	}
	return rb, nil
}

// readInto reads r's body into rb's storage, growing it (and rb.held)
// as bytes arrive, until the end or until more than max bytes arrived.
func readInto(r *http.Request, rb *rawBuf, max int64) ([]byte, error) {
	buf := rb.b[:0]
	for {
		var n int
		var err error
		if len(buf) < cap(buf) {
			n, err = r.Body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		} else {
			// Full: grow only when more bytes come.
			var probe [512]byte
			if n, err = r.Body.Read(probe[:]); n > 0 {
				if buf, err = grow(buf, rb, n, r.ContentLength, max); err != nil {
					return buf, err
				}
				buf = append(buf, probe[:n]...)
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return buf, err
		case int64(len(buf)) > max:
			return buf, nil // too large: the caller refuses it
		}
	}
}

// grow returns buf with room for at least n more bytes: twice its
// capacity, up to the declared length while the body is within it, and
// up to max+1 (enough to see that a body is too large) after. The growth
// is charged to rb's account first.
func grow(buf []byte, rb *rawBuf, n int, declared, max int64) ([]byte, error) {
	limit := max + 1
	if int64(len(buf)) < declared {
		limit = declared
	}
	size := max64(int64(len(buf)+n), min(2*int64(cap(buf)), limit))
	more := size - int64(cap(buf))
	if !rb.acct.reserve(more) {
		return buf, errBusy
	}
	rb.held += more
	grown := make([]byte, len(buf), size)
	copy(grown, buf)
	return grown, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// firstValue is the first of a header's values, "" without one: Get for
// a key looked up in its canonical form.
func firstValue(vs []string) string {
	if len(vs) > 0 {
		return vs[0]
	}
	return ""
}

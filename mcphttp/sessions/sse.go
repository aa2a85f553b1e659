package sessions

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// The event streams' writer. A stream starts as an ordinary response:
// headers, the opening comment and the first messages go through the
// ResponseWriter. On HTTP/1.1 it then detaches from the handler
// (Hijack): the handler returns, and a goroutine of the stream's own
// writes the rest of the chunked response straight to the connection and
// closes it at the end, while another waits for the client to go. That
// frees what net/http keeps for a handler that is still running (its
// goroutine's stack, a background reader's, the connection's and the
// response's buffers): an idle stream costs some 10 KiB instead of 30.
// Anything else (HTTP/2, a ResponseWriter of a middleware that cannot
// hijack, a response whose body a middleware encodes: Content-Encoding)
// keeps the stream in the handler.

// streamWriteTimeout bounds one write to a stream: a client that stops
// reading is disconnected.
const streamWriteTimeout = 30 * time.Second

// sse writes Server-Sent Events to one stream.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	// Once detached: the connection, written to in HTTP/1.1 chunks. mu
	// is held through each write to it: the stream's goroutine writes,
	// and the keep-alive wheel (keepAlive) tries to.
	mu   sync.Mutex
	conn net.Conn
	// raw is conn's file descriptor, where it has one (TCP; not TLS): the
	// wheel writes keep-alives through it without waiting.
	raw syscall.RawConn
	// rest is the end of a keep-alive the wheel could only write in part;
	// the stream's next write sends it first.
	rest []byte
	// closed: the stream has ended; nothing more is written.
	closed bool
}

// startSSE sends the stream's headers. The server's WriteTimeout would cut
// a long-lived stream, so it is lifted and replaced by a deadline per write.
// A stream that may detach says that its connection closes when it ends
// (a detached stream closes it): a client must not take the connection
// back into its pool then, where its next request could go out on a
// connection the server has just closed.
//
// The stream's first bytes are its caller's: a legacy GET stream's
// priming event, a listen's opening comment.
func startSSE(w http.ResponseWriter, r *http.Request) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Add("Vary", "Authorization")
	if chunked(r) {
		h.Set("Connection", "close") // HTTP/1 only: on HTTP/2 it would shut the connection down
	}
	s := &sse{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	return s
}

func (s *sse) write(b []byte) error {
	s.mu.Lock()
	if s.conn != nil {
		defer s.mu.Unlock()
		if s.closed {
			return net.ErrClosed
		}
		if len(s.rest) > 0 {
			_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			if _, err := s.conn.Write(s.rest); err != nil {
				return err
			}
			s.rest = nil
		}
		return writeChunk(s.conn, b)
	}
	s.mu.Unlock()
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// writeChunk writes b as one HTTP/1.1 chunk, with the stream's write
// deadline.
func writeChunk(conn net.Conn, b []byte) error {
	c := make([]byte, 0, len(b)+16)
	c = strconv.AppendInt(c, int64(len(b)), 16)
	c = append(append(append(c, '\r', '\n'), b...), '\r', '\n')
	_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := conn.Write(c)
	return err
}

// message sends one JSON-RPC message as an SSE "message" event, with id
// (printable ASCII: see parseEventID) unless it is "".
func (s *sse) message(id string, msg []byte) error {
	b := make([]byte, 0, len(msg)+len(id)+40)
	b = append(b, "event: message\n"...)
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(b, "data: "...)
	b = append(b, msg...)
	return s.write(append(b, "\n\n"...))
}

func (s *sse) comment(text string) error {
	return s.write([]byte(": " + text + "\n\n"))
}

// keepAliveChunk is a keep-alive comment as one HTTP/1.1 chunk.
var keepAliveChunk = []byte("e\r\n: keep-alive\n\n\r\n")

// keepAlive is the wheel's keep-alive (see keepalive.go): on a detached
// stream with a file descriptor, one write of the comment that never
// waits. It reports false when the stream's goroutine must write it
// instead: the stream is not detached, has no descriptor, or its socket
// took none or part of the chunk (a client that reads slowly, or not at
// all, meets the stream's write deadline there, as with any write). A
// write of the stream's under way is traffic enough: nothing to add. The
// stream's messages leave a write deadline behind, which would fail the
// write once past: it is lifted first (no other write runs meanwhile).
func (s *sse) keepAlive() bool {
	if !s.mu.TryLock() {
		return true // the stream is writing (or detaching, or closing)
	}
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return true
	case s.raw == nil || len(s.rest) > 0:
		return false
	}
	n, err := rawWrite(s.raw, keepAliveChunk)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		_ = s.conn.SetWriteDeadline(time.Time{})
		n, err = rawWrite(s.raw, keepAliveChunk)
	}
	switch {
	case err == nil && n == len(keepAliveChunk):
		return true
	case n > 0:
		s.rest = keepAliveChunk[n:]
	}
	return false
}

// prime sends an event with id (printable ASCII) and empty data: the
// client keeps the id as its Last-Event-ID and dispatches nothing.
func (s *sse) prime(id string) error {
	return s.write([]byte("id: " + id + "\ndata: \n\n"))
}

// retry sends an event with only a retry field: how many milliseconds the
// client waits before it reconnects once the server has closed the
// connection.
func (s *sse) retry(ms int) error {
	return s.write([]byte("retry: " + strconv.Itoa(ms) + "\n\n"))
}

// detach takes the connection over from net/http when r is an HTTP/1.1
// request whose ResponseWriter can hijack, so that the handler can return
// while the stream goes on. It returns the stream's context and true;
// false when the stream must stay in the handler. After a detach, close
// must end the stream.
//
// The context carries the caller (principal.FromContext) and none of r's
// other values: they belong to a request whose middleware has returned
// and may have closed or recycled them (a transaction, a pooled router
// context that already serves another request). It is done when the
// client closes the connection or sends anything, which a stream has no
// use for.
func (s *sse) detach(r *http.Request, caller *principal.Principal) (context.Context, bool) {
	if !chunked(r) {
		return nil, false
	}
	if h := s.w.Header(); len(h["Content-Encoding"]) > 0 || len(h["Content-Length"]) > 0 || len(h["Transfer-Encoding"]) > 0 {
		// A middleware encodes or frames the body (gzip, say): what the
		// client reads is not what the stream writes, so the rest of it
		// must go through that middleware too.
		return nil, false
	}
	if err := s.rc.Flush(); err != nil {
		return nil, false
	}
	conn, _, err := s.rc.Hijack()
	if err != nil {
		return nil, false // HTTP/2, or a ResponseWriter that cannot hijack
	}
	base := context.Background()
	if caller != nil {
		base, _ = principal.NewContext(base, *caller) // a verified caller: it obeys the rules
	}
	ctx, cancel := context.WithCancel(base)
	s.attach(conn)
	go func() {
		// The client closing the connection (or writing to it) ends the
		// stream, as net/http's background read cancelled the request's
		// context before.
		var one [1]byte
		_, _ = conn.Read(one[:])
		cancel()
	}()
	return ctx, true
}

// attach makes conn the stream's: every later write goes to it.
func (s *sse) attach(conn net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn, s.w, s.rc = conn, nil, nil
	if sc, ok := conn.(syscall.Conn); ok && canRawWrite {
		s.raw, _ = sc.SyscallConn()
	}
}

// chunked reports whether the response to r is an HTTP/1.1 chunked one,
// the only kind a stream detaches from.
func chunked(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ProtoMinor >= 1 && r.Method != http.MethodHead
}

// close ends a detached stream: the last chunk, then the connection.
func (s *sse) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.closed {
		return
	}
	s.closed = true
	_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
	if len(s.rest) == 0 || writeAll(s.conn, s.rest) {
		_, _ = s.conn.Write([]byte("0\r\n\r\n"))
	}
	_ = s.conn.Close()
}

// writeAll reports whether b was written whole.
func writeAll(conn net.Conn, b []byte) bool {
	n, err := conn.Write(b)
	return err == nil && n == len(b)
}

// keep runs loop, the rest of a stream whose headers and first messages
// are out: in a goroutine of its own once the stream is detached (the
// handler returns; loop's context then carries caller and nothing else of
// r's), else in the handler, with r's context. end runs after loop either
// way.
func (s *sse) keep(r *http.Request, caller *principal.Principal, loop func(ctx context.Context), end func()) {
	if ctx, ok := s.detach(r, caller); ok {
		go func() {
			defer end()
			defer s.close()
			loop(ctx)
		}()
		return
	}
	defer end()
	loop(r.Context())
}

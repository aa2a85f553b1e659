package intercept

import (
	"bytes"
	"net/http/httptest"
	"slices"
	"testing"
)

// atBoundary is the reference for mergeWriter.scan: a stream is between
// events when its last line ended, and was empty.
func atBoundary(stream []byte) bool {
	if len(stream) == 0 {
		return true
	}
	if last := stream[len(stream)-1]; last != '\n' && last != '\r' {
		return false
	}
	lines := sseLines(stream)
	return len(lines) > 0 && lines[len(lines)-1] == ""
}

// FuzzSSEBoundary: however legacy splits its writes, the merge writer
// knows exactly when its output is between events (where a notification
// may go), and passes the bytes through unchanged.
func FuzzSSEBoundary(f *testing.F) {
	f.Add([]byte("event: message\ndata: {}\n\n"), uint8(3))
	f.Add([]byte("data: a\r\n\r\ndata: b\r"), uint8(9))
	f.Add([]byte("data: a\r\rdata: b\n\r\n"), uint8(1))
	f.Add([]byte(": comment\n\n\n"), uint8(0))
	f.Fuzz(func(t *testing.T, stream []byte, step uint8) {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "text/event-stream")
		m := &mergeWriter{ResponseWriter: rec, onStream: func() {}}
		m.cond.L = &m.mu
		n := int(step%16) + 1
		for i := 0; i < len(stream); i += n {
			chunk := stream[i:min(i+n, len(stream))]
			if _, err := m.Write(chunk); err != nil {
				t.Fatal(err)
			}
			if got, want := m.boundary, atBoundary(stream[:i+len(chunk)]); got != want {
				t.Fatalf("after %q: boundary %v, want %v", stream[:i+len(chunk)], got, want)
			}
		}
		if !bytes.Equal(rec.Body.Bytes(), stream) {
			t.Fatalf("passed %q, legacy wrote %q", rec.Body.Bytes(), stream)
		}
	})
}

// FuzzRewriteEvents: a stream whose events the rewrite declines keeps its
// events; one whose every event it accepts has each replaced, in order.
// Nothing panics on any stream legacy may send.
func FuzzRewriteEvents(f *testing.F) {
	f.Add([]byte("event: message\nid: 1\ndata: {\"id\":1}\n\n"))
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\n\ndata: d"))
	f.Add([]byte("\n\n\rdata:x\r"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		events := func(s []byte) [][]byte { return messagesOf(&recorder{header: sseHeader, body: *bytes.NewBuffer(s)}) }
		want := events(stream)
		kept := rewriteEvents(stream, func([]byte) ([]byte, bool) { return nil, false })
		if got := events(kept); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("declined: events %q, want %q", got, want)
		}
		replaced := rewriteEvents(stream, func(b []byte) ([]byte, bool) { return []byte("R"), true })
		for i, ev := range events(replaced) {
			if string(ev) != "R" {
				t.Fatalf("accepted: event %d is %q, want R (stream %q)", i, ev, stream)
			}
		}
		if got := len(events(replaced)); got != len(want) {
			t.Fatalf("accepted: %d events, want %d", got, len(want))
		}
	})
}

var sseHeader = map[string][]string{"Content-Type": {"text/event-stream"}}

package mcphttp

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Reading a request: content negotiation and the bounded body. Both run on
// every request, so they parse headers by hand instead of allocating.

// negotiateContent checks Content-Type (415) and Accept (406). On failure
// it has answered the request.
func negotiateContent(w http.ResponseWriter, r *http.Request) bool {
	if mt, _ := splitMediaType(r.Header.Get("Content-Type")); !strings.EqualFold(mt, "application/json") {
		writeTransportError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return false
	}
	if !acceptsType(r.Header.Values("Accept"), "application/json", "application/*") {
		writeTransportError(w, http.StatusNotAcceptable, "Accept must admit application/json")
		return false
	}
	return true
}

// splitMediaType returns the type/subtype of a media type (or media range)
// and its parameters, both without surrounding spaces.
func splitMediaType(v string) (mediaType, params string) {
	mediaType, params, _ = strings.Cut(v, ";")
	return strings.TrimSpace(mediaType), params
}

// acceptsType reports whether the Accept header values admit mediaType: the
// type itself, its major wildcard (given, e.g. "application/*") or */*,
// with a non-zero quality. An absent header admits everything.
func acceptsType(values []string, mediaType, wildcard string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, params := splitMediaType(part)
			if !strings.EqualFold(mt, mediaType) && !strings.EqualFold(mt, wildcard) && mt != "*/*" {
				continue
			}
			if !zeroQuality(params) {
				return true
			}
		}
	}
	return false
}

// zeroQuality reports whether media range parameters hold q=0 (not
// acceptable).
func zeroQuality(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && f == 0
		}
	}
	return false
}

// body is a pooled request body.
type body struct{ b []byte }

var bodyPool = sync.Pool{New: func() any { return &body{b: make([]byte, 0, 4096)} }}

func putBody(b *body) {
	if cap(b.b) > 64<<10 {
		return // do not keep the occasional huge body alive
	}
	b.b = b.b[:0]
	bodyPool.Put(b)
}

// readLimited reads the body, reading at most MaxBodyBytes+1 bytes: a
// larger body gets 413. On failure it has answered the request. The caller
// returns the buffer with putBody.
func (e *Endpoint) readLimited(w http.ResponseWriter, r *http.Request) (*body, bool) {
	if r.ContentLength > e.maxBody {
		writeTransportError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return nil, false
	}
	bb := bodyPool.Get().(*body)
	buf := bb.b[:0]
	if r.ContentLength > 0 && int64(cap(buf)) < r.ContentLength {
		buf = make([]byte, 0, r.ContentLength+1) // +1: room to see the end
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > e.maxBody {
				break
			}
			buf = append(buf, 0)[:len(buf)] // grow
		}
		room := buf[len(buf):int(min(int64(cap(buf)), e.maxBody+1))]
		n, err := r.Body.Read(room)
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bb.b = buf
			putBody(bb)
			writeTransportError(w, http.StatusBadRequest, "Cannot read request body")
			return nil, false
		}
		if int64(len(buf)) > e.maxBody {
			break
		}
	}
	bb.b = buf
	if int64(len(buf)) > e.maxBody {
		putBody(bb)
		writeTransportError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return nil, false
	}
	return bb, true
}

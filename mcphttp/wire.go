package mcphttp

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The wire: responses assembled from the inventory's Go values, in pooled
// storage, under the inventory's byte limit, and written with their
// headers.

// respBuf is the storage of one response: the inventory's page, the
// JSON-RPC head and the response itself. respPool recycles it.
type respBuf struct {
	head, body, tail, trailer []byte
	page                      inventory.ResourcePage
	templates                 inventory.TemplatePage
}

var respPool = sync.Pool{New: func() any { return &respBuf{head: make([]byte, 0, 64), body: make([]byte, 0, 16<<10)} }}

func getResp() *respBuf { return respPool.Get().(*respBuf) }

// release returns a response's storage to the pool. Huge responses are not
// kept alive.
func release(buf *respBuf, body []byte) {
	if buf == nil {
		return
	}
	if body != nil {
		if cap(body) > 256<<10 {
			return
		}
		buf.body = body[:0]
	}
	respPool.Put(buf)
}

// meta returns the result members c's results end with: in the modern
// protocol, resultType, the caching hints of a per-caller result and
// _meta; nothing in the legacy ones.
func (e *Endpoint) meta(c *call) []byte {
	if c.modern {
		return e.metaPrivate
	}
	return nil
}

// reserve is what the envelope of c adds to a result object: head,
// `,`+meta, and the closing brace.
func reserve(head, meta []byte) int {
	n := len(head) + len("}")
	if len(meta) > 0 {
		n += 1 + len(meta)
	}
	return n
}

// closeResult appends (`,` meta) `}` `}`: the end of the result object and
// of the response.
func closeResult(dst, meta []byte) []byte {
	if len(meta) > 0 {
		dst = append(append(dst, ','), meta...)
	}
	return append(dst, '}', '}')
}

// assemble writes head ‖ {"<member>":[items](,"nextCursor":"…")(,meta)} ‖ }
// into buf.body, under limit bytes (exactly: the length is counted before
// anything is copied). items appends the page's items, comma-separated,
// n bytes; the inventory filled the page under the same limit, so a
// failure here means the two disagree (never expected).
func assemble(buf *respBuf, member string, n int, items func([]byte) []byte, cursor string, meta []byte, limit int) ([]byte, error) {
	buf.head = append(append(append(buf.head, `{"`...), member...), `":[`...)
	buf.trailer = append(buf.trailer[:0], ']')
	if cursor != "" {
		buf.trailer = append(append(append(buf.trailer, `,"nextCursor":"`...), cursor...), '"')
	}
	buf.trailer = closeResult(buf.trailer, meta)
	size := len(buf.head) + n + len(buf.trailer)
	if size > limit {
		return nil, fmt.Errorf("mcphttp: a page of %d bytes is over the limit of %d", size, limit)
	}
	out := buf.body[:0]
	if cap(out) < size {
		out = make([]byte, 0, size)
	}
	out = items(append(out, buf.head...))
	if len(out) != len(buf.head)+n {
		return nil, fmt.Errorf("mcphttp: the page's items are %d bytes, not %d", len(out)-len(buf.head), n)
	}
	return append(out, buf.trailer...), nil
}

// appendContents encodes one item of a read result.
func appendContents(dst []byte, c *inventory.Contents) []byte {
	dst = append(dst, `{"uri":`...)
	dst = budget.AppendString(dst, c.URI)
	if c.MIMEType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = budget.AppendString(dst, c.MIMEType)
	}
	if c.Blob != nil {
		dst = append(dst, `,"blob":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, c.Blob)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `,"text":`...)
		dst = budget.AppendString(dst, c.Text)
	}
	return append(dst, '}')
}

func resultReply(id jsonrpc.ID, result []byte) reply {
	return reply{body: jsonrpc.AppendResult(make([]byte, 0, len(result)+48), id, result)}
}

// write sends a reply.
func (e *Endpoint) write(w http.ResponseWriter, r *http.Request, rep reply) {
	if rep.authErr != nil {
		release(rep.pooled, nil)
		e.auth.WriteError(w, r, rep.authErr)
		return
	}
	if rep.stream != nil {
		rep.stream(w, r)
		return
	}
	h := w.Header()
	// The values of this response's own, in one allocation: a handler that
	// edits them changes no other response.
	vals := make([]string, 3)
	vals[0] = "private, max-age=0"
	h["Cache-Control"] = vals[0:1:1]
	appendVary(h, "Authorization")
	if rep.sessionID != "" {
		h.Set(headerSessionID, rep.sessionID)
	}
	if rep.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(rep.retryAfter))
	}
	if rep.body == nil {
		w.WriteHeader(cmpOr(rep.status, http.StatusAccepted))
		return
	}
	vals[1], vals[2] = "application/json", strconv.Itoa(len(rep.body))
	h["Content-Type"], h["Content-Length"] = vals[1:2:2], vals[2:3:3]
	w.WriteHeader(cmpOr(rep.status, http.StatusOK))
	_, _ = w.Write(rep.body)
	release(rep.pooled, rep.body)
}

// setPrivate marks a response private: Cache-Control: private, max-age=0,
// and Authorization appended to Vary (never replacing what an outer
// handler put there). Every response gets values of its own: a handler
// that edits them changes no other response.
func setPrivate(h http.Header) {
	h["Cache-Control"] = []string{"private, max-age=0"}
	appendVary(h, "Authorization")
}

// listHas reports whether the comma-separated header value lists name,
// case-insensitively.
func listHas(list, name string) bool {
	for item := range strings.SplitSeq(list, ",") {
		if strings.EqualFold(strings.TrimSpace(item), name) {
			return true
		}
	}
	return false
}

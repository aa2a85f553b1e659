package intercept

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// serveBatch routes a 2025-03-26 batch. One whose elements are all valid
// and legacy's is forwarded whole, byte for byte; one with nothing of
// legacy's is the endpoint's. Any other is split: legacy gets the array
// of its elements, each as received (so it never sees an element the
// strict decode did not read, or read as a resource method), the endpoint
// the array of the rest (invalid elements included: it answers their
// errors), and a first tools/list page goes to both and is merged. The
// answer is one array of all the responses (JSON-RPC lets them come in
// any order).
func (h *handler) serveBatch(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	routes := make([]route, len(b.Items))
	forwarded, others := 0, 0
	for i, it := range b.Items {
		routes[i] = routeOwn // an invalid element: the endpoint answers it
		if it.Err == nil {
			routes[i] = h.route(it.Message)
		}
		switch routes[i] {
		case routeForward, routeRewrite:
			forwarded++ // a batch's initialize is legacy's to refuse: never rewritten
		default:
			others++
		}
	}
	switch {
	case others == 0:
		r, caller := h.caller(r)
		h.forward(w, r, b.Raw, caller)
	case forwarded == 0 && !hasMerge(routes):
		h.ep.ServeHTTP(w, own(r))
	default:
		h.serveSplit(w, r, b, routes)
	}
}

func hasMerge(routes []route) bool {
	for _, rt := range routes {
		if rt == routeMerge {
			return true
		}
	}
	return false
}

// errBatchSplit: the batch's elements could not be told apart again
// (cannot happen for a body the strict decode accepted).
var errBatchSplit = &mcphttp.Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeInvalidRequest, Message: "Invalid batch"}

// serveSplit serves a batch whose elements go both ways. The request is
// authenticated once; the endpoint answers first, so that a refusal of
// its (a challenge, a rate limit) is the answer and legacy runs nothing.
// A refusal of legacy's (a session it does not know) is the answer too.
func (h *handler) serveSplit(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body, routes []route) {
	elems, err := elements(b.Raw)
	if err != nil || len(elems) != len(b.Items) {
		mcphttp.WriteError(w, errBatchSplit)
		return
	}
	var toLegacy, toEndpoint [][]byte
	var merged []jsonrpc.ID
	for i, rt := range routes {
		switch rt {
		case routeForward, routeRewrite:
			toLegacy = append(toLegacy, elems[i])
		case routeMerge:
			toLegacy = append(toLegacy, elems[i])
			toEndpoint = append(toEndpoint, elems[i])
			merged = append(merged, b.Items[i].Message.ID)
		default:
			toEndpoint = append(toEndpoint, elems[i])
		}
	}
	r, caller := h.caller(r)

	epRec := newRecorder()
	h.ep.ServeHTTP(epRec, withBody(own(r), array(toEndpoint)))
	if epRec.status != http.StatusOK && epRec.status != http.StatusAccepted {
		epRec.writeTo(w)
		return
	}
	legacyRec := newRecorder()
	h.forward(legacyRec, r, array(toLegacy), caller)
	if legacyRec.status != http.StatusOK && legacyRec.status != http.StatusAccepted {
		legacyRec.writeTo(w)
		return
	}

	epResps, _ := batchMessages(epRec)
	legacyResps, extra := batchMessages(legacyRec)
	all := h.mergeResponses(merged, epResps, legacyResps)

	dst := w.Header()
	if v := legacyRec.header.Values(mcpwire.HeaderSessionID); len(v) > 0 {
		dst[mcpwire.HeaderSessionID] = v
	}
	httpheader.SetPrivate(dst)
	if len(all) == 0 && len(extra) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if len(extra) == 0 || !strings.HasPrefix(legacyRec.header.Get("Content-Type"), "text/event-stream") {
		dst.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(array(all))
		return
	}
	// Legacy's stream carried messages besides its responses (progress,
	// a request of its own): they go first, each an event, then the
	// responses.
	dst.Set("Content-Type", "text/event-stream")
	dst.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	for _, m := range append(extra, array(all)) {
		_, _ = w.Write(sseEvent(m))
	}
}

// mergeResponses returns the endpoint's responses and legacy's, where
// each merged id (a request both answered) has one response: the two
// tools lists merged, or the one side that answered usefully.
func (h *handler) mergeResponses(merged []jsonrpc.ID, epResps, legacyResps [][]byte) [][]byte {
	for _, id := range merged {
		lr, li := take(&legacyResps, id)
		er, ei := take(&epResps, id)
		var out []byte
		switch {
		case li && isMethodNotFound(lr):
			out = er // legacy has no tools: the endpoint's answer alone
		case li && ei:
			if m, ok := h.mergeTools(lr, id, toolsOf(er), false); ok {
				out = m
			} else {
				out = lr
			}
		case li:
			out = lr
		default:
			out = er
		}
		if out != nil {
			legacyResps = append(legacyResps, out)
		}
	}
	return append(epResps, legacyResps...)
}

// elements returns the bytes of each element of a JSON array: legacy's
// output, and the client's batch, where it only cuts the bytes apart —
// what each element is was decided by the strict decode (b.Items), whose
// invalid elements (a duplicate member, say) the strict engine would not
// cut out of the array at all.
func elements(raw []byte) ([][]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out, nil
}

// array joins messages into a JSON array.
func array(msgs [][]byte) []byte {
	n := 2
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}

// withBody returns r with body as its body, for the endpoint to read and
// decode (the batch's decode in the context is not this body's).
func withBody(r *http.Request, body []byte) *http.Request {
	r = r.WithContext(jsonrpc.NewContext(r.Context(), nil))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}

// batchMessages returns the responses of a recorded answer to a batch
// (a JSON array, or SSE events each holding one message or an array) and
// the other messages it carried (legacy's notifications and requests).
func batchMessages(rec *recorder) (responses, others [][]byte) {
	if rec.status != http.StatusOK {
		return nil, nil
	}
	for _, m := range messagesOf(rec) {
		m = bytes.TrimSpace(m)
		var list [][]byte
		if len(m) > 0 && m[0] == '[' {
			elems, err := elements(m)
			if err != nil {
				continue
			}
			list = elems
		} else if len(m) > 0 {
			list = [][]byte{m}
		}
		for _, e := range list {
			var probe struct {
				Method *string `json:"method"`
			}
			if json.Unmarshal(e, &probe) != nil {
				continue
			}
			if probe.Method != nil {
				others = append(others, e)
			} else {
				responses = append(responses, e)
			}
		}
	}
	return responses, others
}

// take removes and returns the response to id from msgs.
func take(msgs *[][]byte, id jsonrpc.ID) ([]byte, bool) {
	for i, m := range *msgs {
		var resp response
		if json.Unmarshal(m, &resp) == nil && string(bytes.TrimSpace(resp.ID)) == id.Raw() {
			*msgs = append((*msgs)[:i:i], (*msgs)[i+1:]...)
			return m, true
		}
	}
	return nil, false
}

// isMethodNotFound reports whether msg is a -32601 error response.
func isMethodNotFound(msg []byte) bool {
	var resp response
	return json.Unmarshal(msg, &resp) == nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeMethodNotFound
}

// sseEvent frames a JSON message as an SSE message event, a data line
// per line of it (JSON may hold line breaks between its tokens).
func sseEvent(msg []byte) []byte {
	ev := make([]byte, 0, len(msg)+32)
	ev = append(ev, "event: message\n"...)
	for _, line := range sseLines(msg) {
		ev = append(append(append(ev, "data: "...), line...), '\n')
	}
	return append(ev, '\n')
}

// writeTo writes the recorded answer as it is.
func (r *recorder) writeTo(w http.ResponseWriter) {
	dst := w.Header()
	for k, v := range r.header {
		dst[k] = v
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}

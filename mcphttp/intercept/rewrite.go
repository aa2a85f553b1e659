package intercept

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// Rewriting legacy's answers. These read and write what legacy sent — its
// own output, never the client's params — so they use encoding/json; the
// endpoint's output is read with the core's strict reader.

// capability is one member of a capabilities object: its name and JSON.
type capability struct {
	name  string
	value json.RawMessage
}

// capabilities are the endpoint's, as it announces them without event
// streams (plain) and with them (notifying).
type capabilities struct {
	plain, notifying []capability
}

// capabilitiesOf reads the endpoint's capabilities once.
func capabilitiesOf(ep seam.Endpoint) (capabilities, error) {
	read := func(obj []byte) ([]capability, error) {
		var caps []capability
		err := mcpwire.Members(obj, func(name string, value []byte) bool {
			caps = append(caps, capability{name, json.RawMessage(value)})
			return true
		})
		if err != nil {
			return nil, errors.New("intercept: the endpoint's capabilities are not an object")
		}
		return caps, nil
	}
	var c capabilities
	var err error
	if c.plain, err = read(ep.Capabilities(false)); err != nil {
		return c, err
	}
	c.notifying, err = read(ep.Capabilities(true))
	return c, err
}

// forwardRewriting passes an initialize or server/discover request to
// legacy and adds the endpoint's capabilities to its result.
func (h *handler) forwardRewriting(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	msg := b.Message
	r, caller := h.caller(r)
	rec := newRecorder()
	forward(h.legacy, rec, r, b.Raw)
	// The modern protocol's event streams are the endpoint's own
	// (subscriptions/listen): server/discover announces them as the
	// endpoint does. A legacy session carries the endpoint's
	// notifications only when Sessions adopted it.
	caps := h.caps.plain
	notifying := msg.Method == "server/discover"
	if id := newSession(r, rec.header, rec.status); id != "" {
		adopted, err := h.bind(r, id, caller, h.versionOf(rec, msg))
		if err != nil {
			h.endLegacy(r, id)
			mcphttp.WriteError(w, err)
			return
		}
		notifying = notifying || adopted
	}
	if notifying {
		caps = h.caps.notifying
	}
	h.writeRewritten(w, rec, false, func(m []byte) ([]byte, bool) { return rewriteCapabilities(m, msg.ID, caps, h.resourcesOwned) })
}

// rewriteCapabilities gives the result of a JSON-RPC response to id the
// endpoint's capabilities: its resources capability replaces legacy's
// (every resource method is the endpoint's), and each other one is added
// where legacy has none (legacy's own tools or completions stay as they
// are). ok is false when msg is not such a response; it is then left
// alone. owned, when legacy announces resources, is told (it logs once).
func rewriteCapabilities(msg []byte, id jsonrpc.ID, caps []capability, owned func()) ([]byte, bool) {
	return rewriteResult(msg, id, func(result map[string]json.RawMessage) bool {
		var legacyCaps map[string]json.RawMessage
		if raw, ok := result["capabilities"]; ok && json.Unmarshal(raw, &legacyCaps) != nil {
			return false
		}
		if legacyCaps == nil {
			legacyCaps = map[string]json.RawMessage{}
		}
		if _, has := legacyCaps["resources"]; has && owned != nil {
			owned()
		}
		for _, c := range caps {
			if _, has := legacyCaps[c.name]; !has || c.name == "resources" {
				legacyCaps[c.name] = c.value
			}
		}
		b, err := json.Marshal(legacyCaps)
		result["capabilities"] = b
		return err == nil
	})
}

// rewriteResult decodes the result object of a JSON-RPC response to id,
// lets edit change it, and encodes the response again. ok is false when
// msg is not such a response or edit refused it.
func rewriteResult(msg []byte, id jsonrpc.ID, edit func(result map[string]json.RawMessage) bool) ([]byte, bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(msg, &resp) != nil || string(bytes.TrimSpace(resp["id"])) != id.Raw() {
		return nil, false
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(resp["result"], &result) != nil || result == nil || !edit(result) {
		return nil, false
	}
	var err error
	if resp["result"], err = json.Marshal(result); err != nil {
		return nil, false
	}
	out, err := json.Marshal(resp)
	return out, err == nil
}

// writeRewritten writes a recorded legacy answer with its JSON-RPC
// response rewritten: a JSON body, or the matching event of an SSE
// stream. Any other answer (an error status, another content type) passes
// unchanged. private marks the answer per-caller.
func (h *handler) writeRewritten(w http.ResponseWriter, rec *recorder, private bool, rewrite func([]byte) ([]byte, bool)) {
	out := rec.body.Bytes()
	if rec.status == http.StatusOK {
		ct := rec.header.Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "application/json"):
			if b, ok := rewrite(out); ok {
				out = b
			}
		case strings.HasPrefix(ct, "text/event-stream"):
			out = rewriteEvents(out, rewrite)
		}
	}
	dst := w.Header()
	for k, v := range rec.header {
		dst[k] = v
	}
	if dst.Get("Content-Length") != "" {
		dst.Set("Content-Length", strconv.Itoa(len(out)))
	}
	if private {
		httpheader.SetPrivate(dst)
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(out)
}

// rewriteEvents rewrites the data of each event of a short SSE stream
// that rewrite accepts (the response); other events, and the other fields
// of the rewritten one, pass unchanged.
func rewriteEvents(stream []byte, rewrite func([]byte) ([]byte, bool)) []byte {
	var out bytes.Buffer
	var event []string
	flush := func() {
		var data, rest []string
		for _, line := range event {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			} else {
				rest = append(rest, line)
			}
		}
		if len(data) > 0 {
			if b, ok := rewrite([]byte(strings.Join(data, "\n"))); ok {
				for _, line := range rest {
					out.WriteString(line + "\n")
				}
				out.WriteString("data: " + string(b) + "\n\n")
				event = event[:0]
				return
			}
		}
		for _, line := range event {
			out.WriteString(line + "\n")
		}
		if len(event) > 0 {
			out.WriteString("\n")
		}
		event = event[:0]
	}
	for _, line := range sseLines(stream) {
		if line == "" {
			flush()
			continue
		}
		event = append(event, line)
	}
	flush()
	return out.Bytes()
}

// sseLines splits an SSE stream into its lines (ended by CRLF, LF or CR).
func sseLines(stream []byte) []string {
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64<<10), len(stream)+1)
	sc.Split(scanSSELine)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// scanSSELine is a bufio.SplitFunc for SSE lines: CRLF, LF or a lone CR
// ends one.
func scanSSELine(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a CRLF may be split across reads
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// messagesOf returns the JSON messages of a recorded answer: the body, or
// the data of each SSE event.
func messagesOf(rec *recorder) [][]byte {
	body := rec.body.Bytes()
	if !strings.HasPrefix(rec.header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{body}
	}
	var out [][]byte
	var data []string
	for _, line := range sseLines(body) {
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		} else if line == "" && data != nil {
			out = append(out, []byte(strings.Join(data, "\n")))
			data = nil
		}
	}
	if data != nil {
		out = append(out, []byte(strings.Join(data, "\n")))
	}
	return out
}

// recorder buffers an answer of legacy (or of the endpoint) to rewrite
// it once the handler returns.
type recorder struct {
	header    http.Header
	status    int
	committed bool
	body      bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: make(http.Header), status: http.StatusOK} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.committed {
		r.status, r.committed = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.committed = true
	return r.body.Write(b)
}

// Flush is a no-op: the whole answer is rewritten once the handler returns.
func (r *recorder) Flush() {}

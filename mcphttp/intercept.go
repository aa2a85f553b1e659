package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Intercept returns a handler that puts inv in front of an existing
// ("legacy") MCP handler, such as one from the official go-sdk
// (mcp.NewStreamableHTTPHandler) or mcp-go (server.NewStreamableHTTPServer).
//
// The returned handler owns the resource methods — resources/list,
// resources/read, resources/templates/list, and completion/complete for
// ref/resource — and answers them exactly as an [Endpoint] does, with the
// same authentication and error rules. Everything else (tools, prompts,
// sessions, GET streams, DELETE, notifications, batches) goes to legacy with
// a byte-identical body and untouched headers, Mcp-Session-Id included.
// Routing peeks at the method with gjson; it does not decode params.
//
// The legacy handler's initialize result (or server/discover result) is
// rewritten so that the client learns the resources capability (and
// completions, when a template completes), whether the legacy handler
// answered with JSON or with a one-event SSE stream.
//
// Origin and DNS-rebinding protection and the body limit apply to every
// request. Forwarded requests are not authenticated by Intercept: protect
// the legacy handler with its own middleware if it needs it.
func Intercept(inv *inventory.Inventory, legacy http.Handler, opts Options) (http.Handler, error) {
	if opts.Notifications != nil {
		return nil, errors.New("mcphttp: Options.Notifications is not supported by Intercept: the legacy handler owns sessions and streams")
	}
	if legacy == nil {
		return nil, errors.New("mcphttp: nil legacy handler")
	}
	e, err := New(inv, opts)
	if err != nil {
		return nil, err
	}
	return &interceptor{e: e, legacy: legacy}, nil
}

type interceptor struct {
	e      *Endpoint
	legacy http.Handler
}

func (h *interceptor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.e.origins.check(r) {
		writeTransportError(w, http.StatusForbidden, "Forbidden origin")
		return
	}
	if r.Method != http.MethodPost {
		h.legacy.ServeHTTP(w, r)
		return
	}
	buf, ok := h.e.readLimited(w, r)
	if !ok {
		return
	}
	defer putBody(buf)
	body := buf.b

	p := jsonrpc.Peek(body)
	switch {
	case p.Kind == jsonrpc.KindRequest && owns(p.Method, body):
		if negotiateContent(w, r) {
			h.e.serveBody(w, r, body)
		}
	case p.Kind == jsonrpc.KindRequest && (p.Method == "initialize" || p.Method == "server/discover"):
		h.forwardRewriting(w, r, body, p.ID)
	default:
		h.forward(w, r, body)
	}
}

// owns reports whether a request method is one the inventory answers.
func owns(method string, body []byte) bool {
	switch method {
	case "resources/list", "resources/read", "resources/templates/list":
		return true
	case "completion/complete":
		return gjson.GetBytes(body, "params.ref.type").Str == "ref/resource"
	}
	return false
}

// forward passes the request to the legacy handler with the same body.
func (h *interceptor) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	h.legacy.ServeHTTP(w, r)
}

// forwardRewriting passes an initialize or server/discover request to the
// legacy handler and adds the inventory's capabilities to its result.
func (h *interceptor) forwardRewriting(w http.ResponseWriter, r *http.Request, body []byte, id jsonrpc.ID) {
	rec := &recorder{header: make(http.Header)}
	h.forward(rec, r, body)

	out := rec.body.Bytes()
	if rec.status == 0 || rec.status == http.StatusOK {
		ct := rec.header.Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "application/json"):
			if b, ok := h.rewriteMessage(out, id); ok {
				out = b
			}
		case strings.HasPrefix(ct, "text/event-stream"):
			out = h.rewriteStream(out, id)
		}
	}
	dst := w.Header()
	for k, v := range rec.header {
		dst[k] = v
	}
	if dst.Get("Content-Length") != "" {
		dst.Set("Content-Length", strconv.Itoa(len(out)))
	}
	w.WriteHeader(cmpOr(rec.status, http.StatusOK))
	_, _ = w.Write(out)
}

// rewriteMessage sets result.capabilities.resources (and completions) in a
// JSON-RPC response to the request with the given id. ok is false when
// msg is not such a response; it is then left alone.
func (h *interceptor) rewriteMessage(msg []byte, id jsonrpc.ID) ([]byte, bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(msg, &resp) != nil || string(bytes.TrimSpace(resp["id"])) != id.Raw() {
		return nil, false
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(resp["result"], &result) != nil || result == nil {
		return nil, false
	}
	var caps map[string]json.RawMessage
	if raw, ok := result["capabilities"]; ok && json.Unmarshal(raw, &caps) != nil {
		return nil, false
	}
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["resources"] = json.RawMessage(`{"subscribe":false,"listChanged":false}`)
	if h.e.inv.Completes() {
		caps["completions"] = json.RawMessage(`{}`)
	}
	var err error
	if result["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, false
	}
	if resp["result"], err = json.Marshal(result); err != nil {
		return nil, false
	}
	out, err := json.Marshal(resp)
	return out, err == nil
}

// rewriteStream rewrites the response event of a short SSE stream; other
// events and fields pass unchanged.
func (h *interceptor) rewriteStream(stream []byte, id jsonrpc.ID) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64<<10), len(stream)+1)
	var event []string
	flush := func() {
		var data []string
		var rest []string
		for _, line := range event {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			} else {
				rest = append(rest, line)
			}
		}
		if len(data) > 0 {
			if b, ok := h.rewriteMessage([]byte(strings.Join(data, "\n")), id); ok {
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
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			flush()
			continue
		}
		event = append(event, line)
	}
	flush()
	return out.Bytes()
}

// recorder buffers the legacy handler's answer to an initialize request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// Flush is a no-op: the whole answer is rewritten once the handler returns.
func (r *recorder) Flush() {}

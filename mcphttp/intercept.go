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
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Intercept returns a handler that puts inv in front of an existing
// ("legacy") MCP handler, such as one from the official go-sdk
// (mcp.NewStreamableHTTPHandler) or mcp-go (server.NewStreamableHTTPServer).
//
// The returned handler owns the resource methods — every resources/…
// method, and completion/complete unless its params.ref.type is exactly
// "ref/prompt" — and answers them exactly as an [Endpoint] does, with the
// same authentication and error rules. Everything else (tools, prompts,
// sessions, GET streams, DELETE, notifications, client responses) goes to
// legacy with a byte-identical body and untouched headers, Mcp-Session-Id
// included.
//
// Routing is decided on one strict decode of the body (see
// [jsonrpc.Decoder]; a Decoder in front of Intercept is used when there is
// one): a body the strict decoder refuses — duplicate or case-variant
// member names such as two "method" members or a lone "Method", invalid
// UTF-8, a bad id — is answered with a JSON-RPC error and never reaches
// legacy, whose own decoder might read it differently (last key wins,
// case-insensitive names) and serve a resource method of its own. A
// 2025-03-26 batch is forwarded whole only when none of its elements is
// owned and all are valid; a batch of owned methods is served here; a
// batch that mixes them, or holds an invalid element beside forwarded
// ones, gets 400 and reaches nobody.
//
// The legacy handler's initialize result (or server/discover result) is
// rewritten so that the client learns the resources capability (and
// completions, when a template completes), whether the legacy handler
// answered with JSON or with a one-event SSE stream.
//
// With Options.Tools (the tools bridge), tools/call is routed by its
// strictly decoded params.name: the bridge's tool names are served here
// (and so is a call without a readable name: -32602), every other name
// goes to legacy. A first tools/list page is forwarded and the bridge's
// tools that the caller may use are added to the legacy handler's answer
// (JSON or a one-event SSE stream; a legacy handler without tools, which
// answers -32601, gets the bridge's list alone); later pages, with a
// cursor, are the legacy handler's own. At construction Intercept lists
// the legacy handler's tools in-process (initialize, tools/list to the
// last page, DELETE of the probe's session) and fails when one is named
// like a bridge tool: a name clash is never a silent shadow. When the
// legacy handler cannot be listed then (it needs a token, say), or its
// tools change later, a clash found in a tools/list answer is logged once
// and the bridge's tool wins: it is listed, and called, instead. A 2025-03-26
// batch holding a first tools/list page gets 400.
//
// Origin and DNS-rebinding protection and the body limit apply to every
// request. Forwarded requests are not authenticated by Intercept: protect
// the legacy handler with its own middleware if it needs it. The one
// exception is a first tools/list page with the tools bridge: Intercept
// authenticates it (to list the caller's bridge tools) and forwards it
// with that principal in its context (principal.NewContext), so that the
// legacy handler's authn middleware uses it instead of verifying the
// request again, which a DPoP proof, good for one use, would fail.
func Intercept(inv *inventory.Inventory, legacy http.Handler, opts Options) (http.Handler, error) {
	if opts.Notifications != nil {
		return nil, errors.New("mcphttp: Options.Notifications is not supported by Intercept: the legacy handler owns sessions and streams")
	}
	if legacy == nil {
		return nil, errors.New("mcphttp: nil legacy handler")
	}
	e, err := newEndpoint(inv, opts, "", true)
	if err != nil {
		return nil, err
	}
	h := &interceptor{e: e, legacy: legacy}
	if e.tools != nil {
		if err := h.checkLegacyTools(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

type interceptor struct {
	e       *Endpoint
	legacy  http.Handler
	clashes sync.Map // legacy tool names already logged as shadowed by the bridge
}

func (h *interceptor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.e.origins.check(r) {
		writeTransportError(w, errForbiddenOrigin)
		return
	}
	if h.e.origins.serveCORS(w, r) {
		return // a preflight
	}
	if r.Method != http.MethodPost {
		h.legacy.ServeHTTP(w, r)
		return
	}
	b, ok := jsonrpc.FromContext(r.Context())
	if !ok {
		if b, ok = h.e.limits.ReadBody(w, r); !ok {
			return // refused input never reaches legacy
		}
		defer b.Release()
	}
	if b.Batch {
		h.serveBatch(w, r, b)
		return
	}
	msg := b.Message
	switch {
	case owns(msg) || h.ownsTool(msg):
		h.serveOwned(w, r, b)
	case h.mergesTools(msg):
		h.serveToolsList(w, r, b)
	case msg.Kind == jsonrpc.KindRequest && (msg.Method == "initialize" || msg.Method == "server/discover"):
		h.forwardRewriting(w, r, b.Raw, msg.ID)
	default:
		h.forward(w, r, b.Raw)
	}
}

// serveOwned answers a body of owned methods as the Endpoint does.
func (h *interceptor) serveOwned(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	if !acceptsType(r.Header.Values("Accept"), "application/json", "application/*") {
		writeTransportError(w, errNotAcceptable)
		return
	}
	h.e.serveBody(w, r, b)
}

// serveBatch routes a batch: forwarded whole when nothing in it is owned
// and every element is valid, served here when every valid element is
// owned, refused otherwise.
func (h *interceptor) serveBatch(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	owned, forwarded, invalid := 0, 0, 0
	for _, it := range b.Items {
		switch {
		case it.Err != nil, h.mergesTools(it.Message):
			invalid++ // a merged tools/list is answered for single messages only
		case owns(it.Message) || h.ownsTool(it.Message):
			owned++
		default:
			forwarded++
		}
	}
	switch {
	case forwarded > 0 && owned == 0 && invalid == 0:
		h.forward(w, r, b.Raw)
	case forwarded == 0:
		h.serveOwned(w, r, b)
	default:
		writeTransportError(w, errBatchMixed)
	}
}

// owns reports whether a message is one the inventory answers: any
// resources/… method, and completion/complete unless it is strictly for a
// prompt (a reference the strict decode cannot read is ours: the legacy
// handler never sees a resource completion it might read differently).
func owns(msg jsonrpc.Message) bool {
	switch {
	case strings.HasPrefix(msg.Method, "resources/"):
		return true
	case msg.Method == "completion/complete":
		var p struct {
			Ref *struct {
				Type string `json:"type"`
			} `json:"ref"`
		}
		return jsonrpc.UnmarshalParams(msg.Params, &p) != nil || p.Ref == nil || p.Ref.Type != "ref/prompt"
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
			out = rewriteEvents(out, func(m []byte) ([]byte, bool) { return h.rewriteMessage(m, id) })
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
	if _, ok := caps["tools"]; !ok && h.e.tools != nil {
		caps["tools"] = json.RawMessage(`{"listChanged":false}`) // the legacy handler's own stays as it is
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

// rewriteEvents rewrites the response event of a short SSE stream (the one
// rewrite accepts); other events and fields pass unchanged.
func rewriteEvents(stream []byte, rewrite func([]byte) ([]byte, bool)) []byte {
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

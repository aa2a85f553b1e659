package mcphttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The tools bridge in front of a legacy handler (Intercept): tools/call is
// routed by the strictly decoded tool name — the bridge's names are served
// here, every other name goes to the legacy handler — and tools/list
// answers merge the legacy handler's tools with the bridge's.

// probeTimeout bounds the in-process probe of the legacy handler's tools.
const probeTimeout = 10 * time.Second

// maxProbePages bounds the tools/list pages the probe follows.
const maxProbePages = 50

// errProbe: the legacy handler did not answer the probe with a tool list.
var errProbe = errors.New("mcphttp: the legacy handler did not list its tools")

// checkLegacyTools probes the legacy handler's tools in-process (initialize,
// notifications/initialized, tools/list to the last page, and DELETE of
// the session if one was minted) and refuses a bridge tool name the legacy
// handler has. A handler that cannot be probed (it needs a token for
// tools/list, say) is logged; clashes are then found at run time.
func (h *interceptor) checkLegacyTools() error {
	names, err := probeTools(h.legacy)
	if err != nil {
		h.e.log.Warn("mcphttp: Intercept could not list the legacy handler's tools at construction; a tool name clash will be found (and logged) at run time, where the bridge's tool wins",
			"error", err.Error())
		return nil
	}
	for _, n := range names {
		if h.e.tools.byName[n] != nil {
			return fmt.Errorf("mcphttp: the legacy handler has a tool named %q, as the tools bridge does: rename one of them (typed tools: ToolOptions.Templates)", n)
		}
	}
	return nil
}

// probeTools lists the tool names of an MCP handler in-process.
func probeTools(legacy http.Handler) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	post := func(session, version, body string) *recorder {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set(headerSessionID, session)
		}
		if version != "" {
			r.Header.Set(headerProtocolVersion, version)
		}
		rec := &recorder{header: make(http.Header)}
		legacy.ServeHTTP(rec, r)
		return rec
	}
	init := post("", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+Version20251125+
		`","capabilities":{},"clientInfo":{"name":"mcpkit-intercept-probe","version":"1"}}}`)
	result, ok := resultOf(init, "1")
	if !ok {
		return nil, errProbe
	}
	version := gjson.GetBytes(result, "protocolVersion").String()
	session := init.header.Get(headerSessionID)
	if session != "" {
		defer func() {
			r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost/", nil)
			r.Header.Set(headerSessionID, session)
			legacy.ServeHTTP(&recorder{header: make(http.Header)}, r)
		}()
	}
	post(session, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if !gjson.GetBytes(result, "capabilities.tools").Exists() {
		return nil, nil // no tools at all
	}
	var names []string
	cursor := ""
	for page := range maxProbePages {
		params := "{}"
		if cursor != "" {
			params = `{"cursor":` + string(jsonString(cursor)) + `}`
		}
		id := strconv.Itoa(page + 2)
		res, ok := resultOf(post(session, version, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":`+params+`}`), id)
		if !ok {
			return nil, errProbe
		}
		for _, n := range gjson.GetBytes(res, "tools.#.name").Array() {
			names = append(names, n.String())
		}
		if cursor = gjson.GetBytes(res, "nextCursor").String(); cursor == "" {
			return names, nil
		}
	}
	return nil, errProbe
}

func jsonString(s string) []byte { b, _ := json.Marshal(s); return b }

// resultOf returns the result of the JSON-RPC response with the given id
// in a recorded answer (JSON, or an SSE stream), and whether there is one.
func resultOf(rec *recorder, id string) (json.RawMessage, bool) {
	if rec.status != 0 && rec.status != http.StatusOK {
		return nil, false
	}
	for _, msg := range messagesOf(rec) {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(msg, &resp) == nil && string(bytes.TrimSpace(resp.ID)) == id && len(resp.Result) > 0 {
			return resp.Result, true
		}
	}
	return nil, false
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
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
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

// ownsTool reports whether a tools/call is the bridge's: its strictly
// decoded name is a bridge tool, or it has no such name (answered here
// with -32602: a call the strict decoder cannot name never reaches the
// legacy handler, whose decoder might name it differently).
func (h *interceptor) ownsTool(msg jsonrpc.Message) bool {
	if h.e.tools == nil || msg.Method != "tools/call" || msg.Kind != jsonrpc.KindRequest {
		return false
	}
	name, ok := toolNameOf(msg.Params)
	return !ok || h.e.tools.byName[name] != nil
}

// mergesTools reports whether a message is a tools/list whose answer
// merges the legacy tools with the bridge's: a request without a cursor
// (later pages are the legacy handler's own).
func (h *interceptor) mergesTools(msg jsonrpc.Message) bool {
	if h.e.tools == nil || msg.Method != "tools/list" || msg.Kind != jsonrpc.KindRequest {
		return false
	}
	cursor, err := cursorOf(msg.Params)
	return err != nil || cursor == ""
}

// serveToolsList forwards a first tools/list page to the legacy handler
// and adds the bridge's tools that the caller may use to its answer. A
// legacy handler without tools (-32601) gets the bridge's list alone; any
// other answer (an error, a refused session) passes unchanged.
func (h *interceptor) serveToolsList(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	msg := b.Message
	// The request is authenticated once, here, and the principal goes
	// with it to the legacy handler and to serveOwned: a second
	// Authenticate of the same request would find its DPoP proof used
	// already (a replay) and lose the caller.
	caller := h.e.softPrincipal(r)
	if caller != nil {
		if _, ok := principal.FromContext(r.Context()); !ok {
			if ctx, err := principal.NewContext(r.Context(), *caller); err == nil { // a verified caller: it obeys the rules
				r = r.WithContext(ctx)
			}
		}
	}
	rec := &recorder{header: make(http.Header)}
	h.forward(rec, r, b.Raw)
	if code := errorCodeOf(rec, msg.ID.Raw()); code == jsonrpc.CodeMethodNotFound {
		h.serveOwned(w, r, b)
		return
	}
	version, modern := requestVersion(r, msg)
	defs, err := h.e.toolDefs(r.Context(), caller, version, nil)
	if err != nil {
		defs = nil // a failing grant store (logged): the legacy tools alone
	}
	rewrite := func(m []byte) ([]byte, bool) { return h.mergeToolsResult(m, msg.ID, defs, modern) }
	h.writeRewritten(w, rec, rewrite)
}

// mergeToolsResult appends the bridge's tool definitions to the tools of a
// tools/list response, dropping a legacy tool whose name a bridge tool has
// (logged once per name: the bridge's tool wins, and tools/call of that
// name is served by the bridge). A per-caller list is private.
func (h *interceptor) mergeToolsResult(msg []byte, id jsonrpc.ID, defs []byte, modern bool) ([]byte, bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(msg, &resp) != nil || string(bytes.TrimSpace(resp["id"])) != id.Raw() {
		return nil, false
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(resp["result"], &result) != nil || result == nil {
		return nil, false
	}
	var tools []json.RawMessage
	if raw, ok := result["tools"]; ok && json.Unmarshal(raw, &tools) != nil {
		return nil, false
	}
	merged := []byte{'['}
	for _, t := range tools {
		name := gjson.GetBytes(t, "name").String()
		if h.e.tools.byName[name] != nil {
			h.clash(name)
			continue
		}
		if len(merged) > 1 {
			merged = append(merged, ',')
		}
		merged = append(merged, t...)
	}
	if len(defs) > 0 {
		if len(merged) > 1 {
			merged = append(merged, ',')
		}
		merged = append(merged, defs...)
	}
	result["tools"] = append(merged, ']')
	if modern || result["cacheScope"] != nil {
		result["cacheScope"] = json.RawMessage(`"private"`)
		result["ttlMs"] = json.RawMessage(`0`)
	}
	var err error
	if resp["result"], err = json.Marshal(result); err != nil {
		return nil, false
	}
	out, err := json.Marshal(resp)
	return out, err == nil
}

// clash logs, once per name, a legacy tool the bridge shadows.
func (h *interceptor) clash(name string) {
	if _, seen := h.clashes.LoadOrStore(name, true); !seen {
		h.e.log.Error("mcphttp: the legacy handler lists a tool named like a tool of the bridge; the bridge's tool is listed and called instead",
			"tool", name)
	}
}

// writeRewritten writes a recorded legacy answer, its JSON-RPC message
// rewritten (a JSON body, or the one matching event of an SSE stream).
func (h *interceptor) writeRewritten(w http.ResponseWriter, rec *recorder, rewrite func([]byte) ([]byte, bool)) {
	out := rec.body.Bytes()
	if rec.status == 0 || rec.status == http.StatusOK {
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
	setPrivate(dst)
	w.WriteHeader(cmpOr(rec.status, http.StatusOK))
	_, _ = w.Write(out)
}

// errorCodeOf returns the JSON-RPC error code of the recorded response
// to id, or 0.
func errorCodeOf(rec *recorder, id string) int64 {
	if rec.status != 0 && rec.status != http.StatusOK {
		return 0
	}
	for _, msg := range messagesOf(rec) {
		if gjson.GetBytes(msg, "id").Raw == id {
			return gjson.GetBytes(msg, "error.code").Int()
		}
	}
	return 0
}

// requestVersion is the protocol version a forwarded request speaks, for
// the bridge's part of a merged answer: the modern _meta version, the
// MCP-Protocol-Version header, or 2025-03-26.
func requestVersion(r *http.Request, msg jsonrpc.Message) (string, bool) {
	if v := gjson.GetBytes(msg.Params, `_meta.io\.modelcontextprotocol/protocolVersion`); v.Type == gjson.String && isModernVersion(v.Str) {
		return v.Str, true
	}
	if v := r.Header.Get(headerProtocolVersion); isLegacyVersion(v) {
		return v, false
	}
	return Version20250326, false
}

// softPrincipal is the caller for a merged answer: the context principal,
// else the Authenticator's, else anonymous — never a refusal, since the
// request belongs to the legacy handler, which answers it as it does.
func (e *Endpoint) softPrincipal(r *http.Request) *principal.Principal {
	if p, ok := principal.FromContext(r.Context()); ok {
		return &p
	}
	if e.auth == nil {
		return nil
	}
	if p, err := e.auth.Authenticate(r); err == nil {
		return &p
	}
	return nil
}

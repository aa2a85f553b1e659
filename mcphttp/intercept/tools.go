package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// Tools on both sides: tools/call is routed by what the endpoint claims
// (the tools part claims its tools' strictly decoded names), and a first
// tools/list page merges legacy's tools with the endpoint's. A legacy tool
// is shadowed exactly when the endpoint claims a call of its name: that
// is the one definition of a clash, at construction and at run time, and
// it needs no list of the endpoint's tool names (a tool the endpoint
// hides from some callers clashes all the same).

// probeTimeout bounds the in-process probe of legacy's tools.
const probeTimeout = 10 * time.Second

// maxProbePages bounds the tools/list pages the probe follows.
const maxProbePages = 50

// errProbe: legacy did not answer the probe with a tool list.
var errProbe = errors.New("intercept: the legacy handler did not list its tools")

// claims reports whether the endpoint serves a tools/call of name.
func (h *handler) claims(name string) bool {
	params := append(append([]byte(`{"name":`), mcpwire.AppendString(nil, name)...), '}')
	return h.view.Serves(jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: params})
}

// checkLegacyTools lists legacy's tools in-process and refuses one the
// endpoint claims. A legacy handler that cannot be listed (it needs a
// token for tools/list, say) is logged; clashes are then found, and
// logged, at run time.
func (h *handler) checkLegacyTools() error {
	names, resources, err := probeTools(h.legacy, h.tools)
	if resources {
		h.resourcesOwned()
	}
	if !h.tools {
		return nil
	}
	if err != nil {
		h.log.Warn("intercept: could not list the legacy handler's tools at construction; a tool name clash will be found (and logged) at run time, where the endpoint's tool wins",
			"error", err.Error())
		return nil
	}
	for _, n := range names {
		if h.claims(n) {
			return fmt.Errorf("intercept: the legacy handler has a tool named %q, as the endpoint does: rename one of them", n)
		}
	}
	return nil
}

// probeTools lists the tool names of an MCP handler in-process:
// initialize, notifications/initialized, tools/list to the last page
// (when tools is set), and DELETE of the session if one was minted.
// resources reports whether its initialize announced resources.
func probeTools(legacy http.Handler, tools bool) (names []string, resources bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	post := func(session, version, body string) *recorder {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set(mcpwire.HeaderSessionID, session)
		}
		if version != "" {
			r.Header.Set("MCP-Protocol-Version", version)
		}
		rec := newRecorder()
		legacy.ServeHTTP(rec, r)
		return rec
	}
	init := post("", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcpwire.Version20251125+
		`","capabilities":{},"clientInfo":{"name":"mcpkit-intercept-probe","version":"1"}}}`)
	raw, ok := resultOf(init, "1")
	if !ok {
		return nil, false, errProbe
	}
	var result struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(raw, &result) != nil {
		return nil, false, errProbe
	}
	_, resources = result.Capabilities["resources"]
	session := init.header.Get(mcpwire.HeaderSessionID)
	if session != "" {
		defer func() {
			r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost/", http.NoBody) // a server request always has a Body
			r.Header.Set(mcpwire.HeaderSessionID, session)
			legacy.ServeHTTP(newRecorder(), r)
		}()
	}
	post(session, result.ProtocolVersion, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if _, ok := result.Capabilities["tools"]; !ok || !tools {
		return nil, resources, nil // no tools at all, or none asked for
	}
	cursor := ""
	for page := range maxProbePages {
		params := "{}"
		if cursor != "" {
			params = `{"cursor":` + string(mcpwire.AppendString(nil, cursor)) + `}`
		}
		id := strconv.Itoa(page + 2)
		raw, ok := resultOf(post(session, result.ProtocolVersion, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":`+params+`}`), id)
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if !ok || json.Unmarshal(raw, &list) != nil {
			return nil, resources, errProbe
		}
		for _, t := range list.Tools {
			names = append(names, t.Name)
		}
		if cursor = list.NextCursor; cursor == "" {
			return names, resources, nil
		}
	}
	return nil, resources, errProbe
}

// response is a JSON-RPC response of legacy's.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

// responseOf returns the JSON-RPC response to id in a recorded answer
// (JSON, or an SSE stream), and whether there is one.
func responseOf(rec *recorder, id string) (response, bool) {
	if rec.status != http.StatusOK {
		return response{}, false
	}
	for _, msg := range messagesOf(rec) {
		var resp response
		if json.Unmarshal(msg, &resp) == nil && string(bytes.TrimSpace(resp.ID)) == id {
			return resp, true
		}
	}
	return response{}, false
}

// resultOf returns the result of the response to id in a recorded answer.
func resultOf(rec *recorder, id string) (json.RawMessage, bool) {
	resp, ok := responseOf(rec, id)
	return resp.Result, ok && len(resp.Result) > 0
}

// serveToolsList forwards a first tools/list page to legacy and adds the
// endpoint's tools for the caller to its answer. The request is
// authenticated once, here, and the caller goes to both in the context.
// A legacy handler without tools (-32601) gets the endpoint's answer
// alone; any other legacy answer (an error, a refused session) passes
// unchanged, and so does one the endpoint cannot add to (its own
// refusal: a rate limit, a failing store; legacy's tools alone).
func (h *handler) serveToolsList(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	msg := b.Message
	r, caller := h.caller(r)
	rec := newRecorder()
	h.forward(rec, r, b.Raw, caller)
	toEndpoint := own(r)
	if caller == nil {
		toEndpoint = anonymous(r) // credentials that prove no caller list the anonymous tools, as legacy answers them
	}
	if resp, ok := responseOf(rec, msg.ID.Raw()); ok && resp.Error != nil && resp.Error.Code == jsonrpc.CodeMethodNotFound {
		h.ep.ServeHTTP(w, toEndpoint)
		return
	}
	own := newRecorder()
	h.ep.ServeHTTP(own, toEndpoint)
	tools := endpointTools(own)
	_, modern := modernVersion(msg.Params)
	h.writeRewritten(w, rec, true, func(m []byte) ([]byte, bool) { return h.mergeTools(m, msg.ID, tools, modern) })
}

// endpointTools returns the elements of the tools array of the
// endpoint's recorded tools/list result (the comma-separated JSON text
// between its brackets), or nil when it answered otherwise.
func endpointTools(rec *recorder) []byte {
	if rec.status != http.StatusOK {
		return nil
	}
	return toolsOf(rec.body.Bytes())
}

// toolsOf returns the elements of the tools array of a tools/list
// response message, or nil when it is not a result with tools.
func toolsOf(msg []byte) []byte {
	result, ok := mcpwire.ObjectParam(msg, "result")
	if !ok {
		return nil
	}
	var tools []byte
	_ = mcpwire.Members(result, func(name string, value []byte) bool {
		if name == "tools" {
			tools = value
			return false
		}
		return true
	})
	tools = bytes.TrimSpace(tools)
	if len(tools) < 2 || tools[0] != '[' || tools[len(tools)-1] != ']' {
		return nil
	}
	return bytes.TrimSpace(tools[1 : len(tools)-1])
}

// modernVersion returns the 2026-07-28 version a request's params._meta
// names, and whether it names one.
func modernVersion(params []byte) (string, bool) {
	meta, ok := mcpwire.ObjectParam(params, "_meta")
	if !ok {
		return "", false
	}
	v, _, err := mcpwire.StringParam(meta, "io.modelcontextprotocol/protocolVersion")
	return v, err == nil && mcpwire.IsModernVersion(v)
}

// mergeTools appends the endpoint's tools to the tools of legacy's
// tools/list response, dropping a legacy tool the endpoint claims (logged
// once per name: the endpoint's tool is listed, and called, instead). A
// modern result, or one with caching hints, becomes private.
func (h *handler) mergeTools(msg []byte, id jsonrpc.ID, own []byte, modern bool) ([]byte, bool) {
	return rewriteResult(msg, id, func(result map[string]json.RawMessage) bool {
		var tools []json.RawMessage
		if raw, ok := result["tools"]; ok && json.Unmarshal(raw, &tools) != nil {
			return false
		}
		merged := []byte{'['}
		for _, t := range tools {
			var def struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(t, &def)
			if h.claims(def.Name) {
				h.clash(def.Name)
				continue
			}
			if len(merged) > 1 {
				merged = append(merged, ',')
			}
			merged = append(merged, t...)
		}
		if len(own) > 0 {
			if len(merged) > 1 {
				merged = append(merged, ',')
			}
			merged = append(merged, own...)
		}
		result["tools"] = append(merged, ']')
		if modern || result["cacheScope"] != nil {
			result["cacheScope"] = json.RawMessage(`"private"`)
			result["ttlMs"] = json.RawMessage(`0`)
		}
		return true
	})
}

// clash logs, once per name, a legacy tool the endpoint shadows.
func (h *handler) clash(name string) {
	if _, seen := h.clashes.LoadOrStore(name, true); !seen {
		h.log.Error("intercept: the legacy handler lists a tool named like one of the endpoint's; the endpoint's tool is listed and called instead",
			"tool", name)
	}
}

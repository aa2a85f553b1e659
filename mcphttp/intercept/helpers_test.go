package intercept_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// Intercept in front of the real go-sdk and mcp-go servers is tested in
// examples/interop, outside the core module, so that the core's go.mod
// needs neither SDK. The legacy handlers here stand for them: they decode
// the lax way those servers do (encoding/json: last duplicate key wins,
// member names match case-insensitively).

// permissiveLegacy stands for a legacy MCP handler whose decoder reads a
// body the lenient way. It records every method it was asked to serve,
// and answers each with an empty result.
type permissiveLegacy struct {
	mu      sync.Mutex
	methods []string
	bodies  []string
	headers []http.Header
}

func (l *permissiveLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	l.methods = append(l.methods, lenientMethods(raw)...)
	l.bodies = append(l.bodies, string(raw))
	l.headers = append(l.headers, r.Header.Clone())
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

// reset forgets what legacy saw (the probe of New).
func (l *permissiveLegacy) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.methods, l.bodies, l.headers = nil, nil, nil
}

func (l *permissiveLegacy) seen() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.methods), slices.Clone(l.bodies)
}

// lenientMethods returns the methods encoding/json reads in a body (one
// message or a batch).
func lenientMethods(raw []byte) []string {
	type msg struct {
		Method string `json:"method"`
	}
	var ms []msg
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		_ = json.Unmarshal(raw, &ms)
	} else {
		var m msg
		_ = json.Unmarshal(raw, &m)
		ms = append(ms, m)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Method)
	}
	return out
}

// toolServer is a legacy MCP handler with tools, decoding bodies the lax
// way.
type toolServer struct {
	tools     []string // its tool names
	sse       bool     // answer with one-event SSE streams
	noTools   bool     // no tools capability: tools/list is -32601
	needToken bool     // 401 without an Authorization header
	pages     int      // tools/list in this many pages (0: one)
	calls     atomic.Int64
	deletes   atomic.Int64
	batches   atomic.Int64 // batches received
	lastCall  atomic.Value // the tool name of the last tools/call
}

func (s *toolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		s.deletes.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if s.needToken && r.Header.Get("Authorization") == "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		s.serveBatch(w, b)
		return
	}
	answer, session := s.answer(body)
	if session {
		w.Header().Set("Mcp-Session-Id", "legacy-session")
	}
	if answer == "" {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.write(w, answer)
}

// serveBatch answers a batch (2025-03-26): a JSON array, or with sse one
// event per response after a progress notification of its own.
func (s *toolServer) serveBatch(w http.ResponseWriter, body []byte) {
	s.batches.Add(1)
	var elems []json.RawMessage
	_ = json.Unmarshal(body, &elems)
	var answers []string
	for _, e := range elems {
		if a, _ := s.answer(e); a != "" {
			answers = append(answers, a)
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !s.sse {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "["+strings.Join(answers, ",")+"]")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", legacyProgress)
	for _, a := range answers {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
	}
}

// legacyProgress is the notification toolServer's batch streams begin with.
const legacyProgress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`

// answer is toolServer's response to one message ("" for a
// notification), and whether it begins a session.
func (s *toolServer) answer(body []byte) (string, bool) {
	var msg struct {
		ID     json.RawMessage
		Method string
		Params struct {
			Name   string
			Cursor string
		}
	}
	_ = json.Unmarshal(body, &msg)
	if msg.ID == nil {
		return "", false
	}
	var result string
	session := false
	switch msg.Method {
	case "initialize":
		caps := `{"tools":{"listChanged":true}}`
		if s.noTools {
			caps = `{}`
		}
		result = `{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"legacy","version":"1"}}`
		session = true
	case "tools/list":
		if s.noTools {
			return `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`, false
		}
		result = s.listPage(msg.Params.Cursor)
	case "tools/call":
		s.calls.Add(1)
		s.lastCall.Store(msg.Params.Name)
		result = `{"content":[{"type":"text","text":"legacy ` + msg.Params.Name + `"}]}`
	default:
		return `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`, false
	}
	return `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + result + `}`, session
}

// listPage is the tools/list page a cursor asks for: one tool a page when
// s.pages is set.
func (s *toolServer) listPage(cursor string) string {
	def := func(n string) string { return `{"name":"` + n + `","inputSchema":{"type":"object"}}` }
	if s.pages == 0 {
		var defs []string
		for _, n := range s.tools {
			defs = append(defs, def(n))
		}
		return `{"tools":[` + strings.Join(defs, ",") + `]}`
	}
	i, _ := strconv.Atoi(strings.TrimPrefix(cursor, "page-"))
	next := ""
	if i+1 < len(s.tools) {
		next = `,"nextCursor":"page-` + strconv.Itoa(i+1) + `"`
	}
	return `{"tools":[` + def(s.tools[i]) + `]` + next + `}`
}

func (s *toolServer) write(w http.ResponseWriter, msg string) {
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\nid: 1\ndata: %s\n\n", msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, msg)
}

// bridgeTools are the tools of bridge for a caller with a subject.
var bridgeTools = []string{"list_resources", "read_resource", "search", "fetch"}

// bridge is a tools part for these tests, registered as mcphttp/tools
// registers its tools: tools/list and tools/call (claiming the calls of
// its tools' names, and calls without a readable name), and the tools
// capability. A caller with a subject has every tool of bridgeTools, any
// other caller read_resource alone. read_resource reads through the
// inventory; the others answer their name.
type bridge struct{}

func (bridge) Setup(s *mcphttp.Setup) error {
	inv := s.Inventory()
	s.Capability("tools", func(n bool) string { return `{"listChanged":` + strconv.FormatBool(n) + `}` })
	s.Handle("tools/list", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
		names := []string{"read_resource"}
		if c.Principal != nil && c.Principal.Subject != "" {
			names = bridgeTools
		}
		b := []byte(`"tools":[`)
		for i, n := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = mcpwire.AppendString(append(b, `{"name":`...), n)
			b = append(b, `,"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`...)
		}
		return mcphttp.JSONResult(c, json.RawMessage(append(append([]byte{'{'}, b...), "]}"...)), mcphttp.CachePrivate)
	}, mcphttp.MethodOptions{})
	s.Handle("tools/call", func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
		name, _, _ := mcpwire.StringParam(c.Params(), "name")
		if !slices.Contains(bridgeTools, name) {
			return mcphttp.Result{}, mcpwire.InvalidParams("unknown tool")
		}
		c.NoteTarget(name)
		text := name
		if name == "read_resource" {
			args, _ := mcpwire.ObjectParam(c.Params(), "arguments")
			uri, _, err := mcpwire.StringParam(args, "uri")
			if err != nil || uri == "" {
				return mcphttp.Result{}, mcpwire.InvalidParams("uri is required")
			}
			contents, err := inv.Read(ctx, c.Principal, uri)
			if err != nil {
				return mcphttp.JSONResult(c, json.RawMessage(`{"content":[{"type":"text","text":"not found"}],"isError":true}`), mcphttp.CachePrivate)
			}
			text = contents[0].Text
		}
		return mcphttp.JSONResult(c, map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}, mcphttp.CachePrivate)
	}, mcphttp.MethodOptions{NameMember: "name", Claims: func(params []byte) bool {
		name, present, err := mcpwire.StringParam(params, "name")
		return err != nil || !present || slices.Contains(bridgeTools, name)
	}})
	return nil
}

// alice is the principal the service's own middleware found.
var alice = principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: mcptest.Resource}

// withPrincipal returns r with p in its context.
func withPrincipal(t testing.TB, r *http.Request, p principal.Principal) *http.Request {
	t.Helper()
	ctx, err := principal.NewContext(r.Context(), p)
	require.NoError(t, err)
	return r.WithContext(ctx)
}

// interceptTools wraps legacy in Intercept in front of an endpoint with
// the bridge and no Authenticator (the context principal is the caller).
func interceptTools(t *testing.T, legacy http.Handler, logs io.Writer) (*mcptest.Fixture, http.Handler, error) {
	t.Helper()
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }}, bridge{})
	if logs == nil {
		logs = io.Discard
	}
	h, err := intercept.New(f.EP, legacy, intercept.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	return f, h, err
}

// quiet is a logger for tests that do not look at the log.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// request is a POST to the handler: the body, and headers set on it.
func request(body string, headers map[string]string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, mcptest.Resource, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

// serve serves r with h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// jsonOf returns the JSON-RPC message of an answer: its body, or the data
// of its last SSE event.
func jsonOf(t testing.TB, w *httptest.ResponseRecorder) []byte {
	t.Helper()
	body := w.Body.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		i := bytes.LastIndex(body, []byte("data: ")) // the response comes last
		require.GreaterOrEqual(t, i, 0, string(body))
		body = body[i+len("data: "):]
		body = bytes.TrimSpace(body[:bytes.IndexByte(body, '\n')+1])
	}
	return body
}

// toolNames returns the tool names of a tools/list answer.
func toolNames(t testing.TB, w *httptest.ResponseRecorder) []string {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	body := jsonOf(t, w)
	require.NoError(t, json.Unmarshal(body, &r), string(body))
	var names []string
	for _, tl := range r.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer = logbuf.Buffer

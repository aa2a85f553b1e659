package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// Calls of tools of one's own: arguments, results, classes.

// TestUserToolArguments: a tool's string arguments are checked exactly
// before its handler runs; a call that breaks them is a tool error naming
// the argument, and the handler never sees it.
func TestUserToolArguments(t *testing.T) {
	var got sync.Map // the last Args and Arguments the handler saw
	var calls atomic.Int64
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "note", Access: inventory.Public,
		Args: []tools.Arg{{Name: "title", Required: true, MaxLen: 8}, {Name: "tag"}},
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			calls.Add(1)
			got.Store("args", req.Args)
			got.Store("raw", string(req.Arguments))
			return tools.TextResult("ok"), nil
		},
	}}})
	for _, tc := range []struct {
		name string
		args string // params.arguments
		want string // the tool error's text; "" for a call that reaches the handler
		seen map[string]string
	}{
		{"both", `{"title":"t","tag":"x"}`, "", map[string]string{"title": "t", "tag": "x"}},
		{"the optional one absent", `{"title":"t"}`, "", map[string]string{"title": "t"}},
		{"the optional one empty", `{"title":"t","tag":""}`, "", map[string]string{"title": "t", "tag": ""}},
		{"escaped name and value", `{"t\u0069tle":"\u00e9"}`, "", map[string]string{"title": "é"}},
		{"eight characters of two code units each are 16", `{"title":"` + strings.Repeat("😀", 4) + `"}`, "", map[string]string{"title": strings.Repeat("😀", 4)}},
		{"too long in code units", `{"title":"` + strings.Repeat("😀", 5) + `"}`, `Invalid arguments: argument "title" is too long (at most 8 characters)`, nil},
		{"missing", `{"tag":"x"}`, `Invalid arguments: missing argument "title"`, nil},
		{"no arguments", ``, `Invalid arguments: missing argument "title"`, nil},
		{"empty required", `{"title":""}`, `Invalid arguments: argument "title" must not be empty`, nil},
		{"a number", `{"title":1}`, `Invalid arguments: argument "title" must be a string`, nil},
		{"a case variant", `{"Title":"t"}`, `Invalid arguments: unknown argument "Title" (this tool takes "title", "tag")`, nil},
		{"the smallest unknown name first", `{"title":"t","zz":1,"aa":2}`, `Invalid arguments: unknown argument "aa" (this tool takes "title", "tag")`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := `{"name":"note"}`
			if tc.args != "" {
				params = `{"name":"note","arguments":` + tc.args + `}`
			}
			before := calls.Load()
			w := f.raw(t, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			r := decode(t, w)
			require.Nil(t, r.Error, w.Body.String())
			var res toolResult
			require.NoError(t, json.Unmarshal(r.Result, &res))
			if tc.want != "" {
				assert.True(t, res.IsError)
				assert.Equal(t, tc.want, res.Content[0].Text)
				assert.Equal(t, before, calls.Load(), "the handler did not run")
				return
			}
			require.False(t, res.IsError, res.Content)
			args, _ := got.Load("args")
			assert.Equal(t, tc.seen, args)
			raw, _ := got.Load("raw")
			assert.Equal(t, tc.args, raw, "the raw arguments as received")
		})
	}
}

// TestUserToolRawArguments: a tool with an InputSchema and no Args reads
// its arguments itself; they must still be an object.
func TestUserToolRawArguments(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "add", Access: inventory.Public,
		InputSchema: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			var sum string
			err := mcpwire.Members(req.Arguments, func(name string, v []byte) bool {
				sum += name + "=" + string(v) + ";"
				return true
			})
			if err != nil || req.Args != nil {
				return tools.ErrorResult("unreadable"), nil
			}
			return tools.TextResult(sum), nil
		},
	}, {
		Name: "ping", Access: inventory.Public, // no Args, no schema: no arguments
		Handler: func(context.Context, *tools.Request) (tools.Result, error) { return tools.TextResult("pong"), nil },
	}}})
	res := f.callTool(t, nil, eraModern, "add", map[string]any{"a": 1, "b": 2.5})
	assert.Equal(t, "a=1;b=2.5;", res.Content[0].Text)
	w := f.post(t, nil, eraModern, "tools/call", map[string]any{"name": "add", "arguments": []int{1, 2}})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code, "arguments are an object")

	res = f.callTool(t, nil, eraModern, "ping", nil)
	assert.Equal(t, "pong", res.Content[0].Text)
	res = f.callTool(t, nil, eraModern, "ping", map[string]any{"x": 1})
	assert.True(t, res.IsError)
	assert.Equal(t, `Invalid arguments: unknown argument "x" (this tool takes no arguments)`, res.Content[0].Text)

	_, result := f.listTools(t, nil, eraModern)
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations json.RawMessage `json:"annotations"`
			Description *string         `json:"description"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(result, &list))
	schemas := map[string]string{}
	for _, tl := range list.Tools {
		schemas[tl.Name] = string(tl.InputSchema)
		if tl.Name == "add" || tl.Name == "ping" {
			assert.Nil(t, tl.Annotations, "not read-only: no hint")
			assert.Nil(t, tl.Description, "no description: none sent")
		}
	}
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`, schemas["add"])
	assert.JSONEq(t, `{"type":"object","properties":{},"additionalProperties":false}`, schemas["ping"])
}

// TestUserToolDefinition: a tool of one's own is defined as the built-in
// ones are: its title and output schema from 2025-06-18 on, its schema
// made from its arguments, read-only when it says so.
func TestUserToolDefinition(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{{
		Name: "summarize", Title: "Summarize", Description: "Summarizes a document.", ReadOnly: true,
		Access: inventory.Public, OutputSchema: `{"type":"object","properties":{"summary":{"type":"string"}}}`,
		Args:    []tools.Arg{{Name: "uri", Required: true, Description: "The document."}, {Name: "style", MaxLen: 16}},
		Handler: func(context.Context, *tools.Request) (tools.Result, error) { return tools.Result{}, nil },
	}}})
	def := func(e era) map[string]json.RawMessage {
		_, result := f.listTools(t, nil, e)
		var list struct{ Tools []map[string]json.RawMessage }
		require.NoError(t, json.Unmarshal(result, &list))
		for _, d := range list.Tools {
			if string(d["name"]) == `"summarize"` {
				return d
			}
		}
		t.Fatal("summarize is not listed")
		return nil
	}
	now := def(eraModern)
	assert.JSONEq(t, `"Summarize"`, string(now["title"]))
	assert.JSONEq(t, `"Summarizes a document."`, string(now["description"]))
	assert.JSONEq(t, `{"readOnlyHint":true}`, string(now["annotations"]))
	assert.JSONEq(t, `{"type":"object","properties":{"summary":{"type":"string"}}}`, string(now["outputSchema"]))
	assert.JSONEq(t, `{"type":"object","properties":{
		"uri":{"type":"string","minLength":1,"maxLength":2048,"description":"The document."},
		"style":{"type":"string","maxLength":16}},
		"required":["uri"],"additionalProperties":false}`, string(now["inputSchema"]))
	old := def(eraOld)
	assert.NotContains(t, old, "title")
	assert.NotContains(t, old, "outputSchema")
	assert.Equal(t, now["inputSchema"], old["inputSchema"])
}

// TestUserToolResults: what a handler returns and how it fails.
func TestUserToolResults(t *testing.T) {
	var (
		mu     sync.Mutex
		result tools.Result // what the handler answers
		fail   error        // the error it returns, when set
	)
	answer := func(res tools.Result, err error) { mu.Lock(); result, fail = res, err; mu.Unlock() }
	obs := &recorder{}
	f := newFixture(t, fixtureOptions{maxBytes: 32 << 10, parts: []mcphttp.Part{mcphttp.Observe(obs)}, extra: []tools.Tool{{
		Name: "answer", Access: inventory.Public, Class: mcphttp.ClassRead,
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail != nil {
				return tools.Result{}, fail
			}
			req.NoteURI("docs://documents/alice-0001")
			return result, nil
		},
	}}})
	call := func(e era) (*mcptestRPC, toolResult) {
		t.Helper()
		w := f.post(t, nil, e, "tools/call", map[string]any{"name": "answer"})
		var res toolResult
		if w.Code != http.StatusOK {
			return &mcptestRPC{status: w.Code, header: w.Header()}, res // a challenge
		}
		r := decode(t, w)
		if r.Error == nil {
			require.NoError(t, json.Unmarshal(r.Result, &res), w.Body.String())
		}
		return &mcptestRPC{status: w.Code, header: w.Header(), code: codeOf(r.Error), message: messageOf(r.Error)}, res
	}

	// Text, an embedded resource and structured content.
	answer(tools.Result{
		Content: []tools.Content{
			{Text: "hello <b> \u2028"},
			{Resource: &inventory.Contents{URI: "test://logo", MIMEType: "image/png", Blob: []byte("\x89PNG")}},
			{Resource: &inventory.Contents{URI: "test://about", MIMEType: "text/plain", Text: "about"}},
		},
		Structured: []byte(`{"n":1}`),
	}, nil)
	for _, e := range []era{eraModern, eraLegacy, eraOld} {
		_, res := call(e)
		require.Len(t, res.Content, 3)
		assert.Equal(t, "hello <b> \u2028", res.Content[0].Text)
		assert.Equal(t, "resource", res.Content[1].Type)
		assert.Equal(t, "iVBORw==", res.Content[1].Resource.Blob)
		assert.Equal(t, "about", res.Content[2].Resource.Text)
		assert.False(t, res.IsError)
		if e == eraOld {
			assert.Nil(t, res.StructuredContent, "2025-03-26 has no structured content")
		} else {
			assert.JSONEq(t, `{"n":1}`, string(res.StructuredContent))
		}
		got := obs.one(t)
		assert.Equal(t, "answer", got.Target)
		assert.Equal(t, "docs://documents/alice-0001", got.URI)
		assert.Equal(t, mcphttp.ClassRead, got.class)
	}

	// A tool error result of the handler's own.
	answer(tools.ErrorResult("No such note."), nil)
	_, res := call(eraLegacy)
	assert.True(t, res.IsError)
	assert.Equal(t, "No such note.", res.Content[0].Text)
	got := obs.one(t)
	assert.Equal(t, mcphttp.ErrorTypeToolError, got.ErrorType)
	assert.Equal(t, mcphttp.OutcomeInvalid, got.Outcome)

	// Malformed or oversized results are the generic tool error, logged.
	for _, tc := range []struct {
		name string
		res  tools.Result
		log  string
	}{
		{"structured content not an object", tools.Result{Structured: []byte(`[1]`)}, "not a JSON object"},
		{"structured content not JSON", tools.Result{Structured: []byte(`{"a":`)}, "not a JSON object"},
		{"over the byte limit", tools.TextResult(strings.Repeat("x", 33<<10)), "over the byte limit"},
		{"over the byte limit once escaped", tools.TextResult(strings.Repeat(`"`, 17<<10)), "over the byte limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer(tc.res, nil)
			for _, e := range bothEras {
				rpc, res := call(e)
				assert.Equal(t, 200, rpc.status)
				assert.True(t, res.IsError)
				assert.Equal(t, "The server could not complete this call.", res.Content[0].Text)
				got := obs.one(t)
				assert.Equal(t, mcphttp.OutcomeError, got.Outcome)
				assert.Equal(t, mcphttp.ErrorTypeToolError, got.ErrorType)
			}
			assert.Contains(t, f.logs.String(), tc.log)
			assert.Contains(t, f.logs.String(), `"tool":"answer"`)
		})
	}

	// Errors of the handler.
	for _, tc := range []struct {
		name    string
		err     error
		status  int
		code    int64
		text    string
		outcome mcphttp.Outcome
	}{
		{"not found", inventory.ErrNotFound, 200, 0, "Resource not found.", mcphttp.OutcomeNotFound},
		{"wrapped not found", errors.Join(errors.New("x"), inventory.ErrNotFound), 200, 0, "Resource not found.", mcphttp.OutcomeNotFound},
		{"params", &inventory.ParamsError{Problems: []string{"a is odd", "b is even"}}, 200, 0, "Invalid arguments: a is odd; b is even.", mcphttp.OutcomeInvalid},
		{"cursor", &inventory.CursorError{Reason: inventory.ReasonExpired}, 200, 0, "Invalid cursor (expired).", mcphttp.OutcomeInvalidCursor},
		{"an internal error", errors.New("pq: password=hunter2"), 200, 0, "The server could not complete this call.", mcphttp.OutcomeError},
		{"a deadline", context.DeadlineExceeded, 200, 0, "The server could not complete this call.", mcphttp.OutcomeError},
		{"no caller", principal.ErrUnauthenticated, 401, 0, "", mcphttp.OutcomeUnauthenticated},
		{"a scope", &principal.ScopeError{Required: []string{"notes:write"}}, 403, 0, "", mcphttp.OutcomeDenied},
		{"a protocol error of its own", &mcphttp.Error{Code: -32042, Message: "Try later"}, 200, -32042, "", mcphttp.OutcomeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer(tools.Result{}, tc.err)
			rpc, res := call(eraLegacy)
			assert.Equal(t, tc.status, rpc.status)
			assert.Equal(t, tc.code, rpc.code)
			if tc.text != "" {
				assert.True(t, res.IsError)
				assert.Equal(t, tc.text, res.Content[0].Text)
			}
			assert.Equal(t, tc.outcome, obs.one(t).Outcome)
		})
	}
	assert.Contains(t, f.logs.String(), "hunter2", "the operator sees the cause")
}

// TestToolClasses: each tool call is of its tool's class (what
// mcphttp.Call.Class reports to rate limits and observers), tools/list
// is a list; and a limit per class applies to tool calls by what they do.
func TestToolClasses(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	classes := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				mu.Lock()
				seen = append(seen, c.Class())
				mu.Unlock()
				return next(ctx, c)
			}
		})
		return nil
	})
	var calls atomic.Int64
	f := newFixture(t, fixtureOptions{parts: []mcphttp.Part{classes}, extra: []tools.Tool{
		echo(&calls, tools.Tool{Name: "find", Class: mcphttp.ClassSearch}),
		echo(&calls, tools.Tool{Name: "other"}),
	}})
	for _, tc := range []struct {
		method string
		params map[string]any
		class  string
	}{
		{"tools/list", nil, mcphttp.ClassList},
		{"tools/call", map[string]any{"name": "list_resources"}, mcphttp.ClassList},
		{"tools/call", map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "test://about"}}, mcphttp.ClassRead},
		{"tools/call", map[string]any{"name": "read_document", "arguments": map[string]any{"id": "alice-0001"}}, mcphttp.ClassRead},
		{"tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"id": "test://about"}}, mcphttp.ClassRead},
		{"tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "x"}}, mcphttp.ClassSearch},
		{"tools/call", map[string]any{"name": "find", "arguments": map[string]any{"text": "x"}}, mcphttp.ClassSearch},
		{"tools/call", map[string]any{"name": "other", "arguments": map[string]any{"text": "x"}}, ""},
		{"tools/call", map[string]any{"name": "no_such_tool"}, ""},
		{"tools/call", map[string]any{"name": 7}, ""}, // legacy only: a modern one has no Mcp-Name to repeat it
	} {
		for _, e := range bothEras {
			if _, named := tc.params["name"].(string); e == eraModern && !named && tc.params != nil {
				continue
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			f.post(t, alicePrincipal, e, tc.method, maps.Clone(tc.params)) // mcptest.Modern adds _meta to the map
			mu.Lock()
			assert.Equal(t, []string{tc.class}, seen, "%s %v", tc.method, tc.params)
			mu.Unlock()
		}
	}

	// A limit of one search a caller: search and find share it, reads do
	// not take from it.
	limit := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		var mu sync.Mutex
		used := map[string]bool{}
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				if c.Class() == mcphttp.ClassSearch && c.Principal != nil {
					mu.Lock()
					over := used[c.Principal.Subject]
					used[c.Principal.Subject] = true
					mu.Unlock()
					if over {
						return mcphttp.Result{}, &mcphttp.Error{Status: http.StatusTooManyRequests, RetryAfter: 1, Code: -32000, Message: "Rate limit exceeded"}
					}
				}
				return next(ctx, c)
			}
		})
		return nil
	})
	g := newFixture(t, fixtureOptions{parts: []mcphttp.Part{limit}, extra: []tools.Tool{echo(&calls, tools.Tool{Name: "find", Class: mcphttp.ClassSearch})}})
	search := func() map[string]any {
		return map[string]any{"name": "search", "arguments": map[string]any{"query": "a"}}
	}
	read := func() map[string]any {
		return map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "docs://documents/alice-0001"}}
	}
	assert.Equal(t, http.StatusOK, g.post(t, alicePrincipal, eraLegacy, "tools/call", search()).Code)
	assert.Equal(t, http.StatusTooManyRequests, g.post(t, alicePrincipal, eraModern, "tools/call", search()).Code)
	assert.Equal(t, http.StatusTooManyRequests, g.post(t, alicePrincipal, eraLegacy, "tools/call", map[string]any{"name": "find", "arguments": map[string]any{"text": "a"}}).Code)
	for range 3 {
		assert.Equal(t, http.StatusOK, g.post(t, alicePrincipal, eraLegacy, "tools/call", read()).Code, "reads are not searches")
	}
	assert.Equal(t, http.StatusOK, g.post(t, bobPrincipal, eraLegacy, "tools/call", search()).Code, "bob has his own bucket")
}

type mcptestRPC struct {
	status  int
	header  http.Header
	code    int64
	message string
}

func codeOf(e *struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}) int64 {
	if e == nil {
		return 0
	}
	return e.Code
}

func messageOf(e *struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}) string {
	if e == nil {
		return ""
	}
	return e.Message
}

// FuzzUserToolArgs: whatever arguments a call of a tool with string
// arguments holds, the answer is a protocol error or a tool result, and
// the handler runs exactly when the result is not a tool error, with
// only the declared arguments, each a string within its length.
func FuzzUserToolArgs(f *testing.F) {
	for _, s := range []string{
		`{"title":"t","tag":"x"}`, `{"title":""}`, `{"Title":"t"}`, `{"title":1}`, `null`, `[]`, `"x"`,
		`{"t\u0069tle":"😀😀😀😀"}`, `{"title":"t","a":{"b":[1,{"c":null}]}}`,
	} {
		f.Add(s)
	}
	type seen struct {
		args map[string]string
	}
	var mu sync.Mutex
	var last *seen
	tf := newFixture(f, fixtureOptions{extra: []tools.Tool{{
		Name: "note", Access: inventory.Public,
		Args: []tools.Arg{{Name: "title", Required: true, MaxLen: 8}, {Name: "tag"}},
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			mu.Lock()
			last = &seen{args: req.Args}
			mu.Unlock()
			return tools.TextResult("ok"), nil
		},
	}}})
	f.Fuzz(func(t *testing.T, args string) {
		mu.Lock()
		last = nil
		mu.Unlock()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"note","arguments":` + args + `}}`
		w := tf.raw(t, nil, body, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		if w.Code != 200 {
			return // a body the strict decoder refuses
		}
		var r struct {
			Result *toolResult      `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r), w.Body.String())
		require.True(t, (r.Result == nil) != (r.Error == nil), w.Body.String())
		mu.Lock()
		defer mu.Unlock()
		if r.Error != nil || r.Result.IsError {
			assert.Nil(t, last, "the handler must not run: %s", w.Body.String())
			return
		}
		require.NotNil(t, last, w.Body.String())
		assert.NotEmpty(t, last.args["title"])
		for k, v := range last.args {
			assert.Contains(t, []string{"title", "tag"}, k)
			if k == "title" {
				assert.LessOrEqual(t, len(utf16.Encode([]rune(v))), 8)
			}
		}
	})
}

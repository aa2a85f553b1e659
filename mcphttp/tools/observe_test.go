package tools_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/principal"
)

// observed is what a recorder keeps of one call.
type observed struct {
	mcphttp.Call
	subject string // of the Principal at End
	class   string // Call.Class() at End
}

// recorder is an Observer that keeps copies of every call.
type recorder struct {
	mu    sync.Mutex
	calls []observed
	open  int // Start without End
}

func (o *recorder) Start(ctx context.Context, _ mcphttp.Call) context.Context {
	o.mu.Lock()
	o.open++
	o.mu.Unlock()
	return ctx
}

func (o *recorder) End(_ context.Context, c mcphttp.Call) {
	rec := observed{Call: c, class: c.Class()}
	rec.HTTP = nil // not compared
	rec.Params = nil
	if c.Principal != nil {
		rec.subject = c.Principal.Subject
		rec.Principal = nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open--
	o.calls = append(o.calls, rec)
}

func (o *recorder) one(t *testing.T) observed {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.Zero(t, o.open, "every Start has its End")
	require.Len(t, o.calls, 1)
	c := o.calls[0]
	o.calls = nil
	return c
}

// TestObserverTools: a tools/call is observed with its tool as the target
// (a registered name, never the client's), the URI it read, and a tool
// error result (isError) as error type "tool_error" with the outcome the
// inventory gave. (The audit record is made of these fields — Target,
// Outcome, the caller's subject — and is tested with mcphttp/audit.)
func TestObserverTools(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testObserverTools(t, mcphttp.PartFunc(func(*mcphttp.Setup) error { return nil })) })
	// A middleware may hand the handlers inside a copy of the Request: the
	// part answers through it and its notes reach the observers the same.
	copying := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, req *mcphttp.Request) (mcphttp.Result, error) {
				cp := *req
				return next(ctx, &cp)
			}
		})
		return nil
	})
	t.Run("a copy", func(t *testing.T) { testObserverTools(t, copying) })
}

func testObserverTools(t *testing.T, front mcphttp.Part) {
	obs := &recorder{}
	f := newFixture(t, fixtureOptions{parts: []mcphttp.Part{mcphttp.Observe(obs), front}})
	noScope := &principal.Principal{Subject: "dave", ClientID: "client-1", Audience: testResource}
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "arguments": args}
	}
	for _, tc := range []struct {
		name      string
		caller    *principal.Principal
		e         era
		params    map[string]any
		status    int
		outcome   mcphttp.Outcome
		errorType string
		target    string
		uri       string
		entries   int
		reason    string
	}{
		{name: "read_resource", caller: alicePrincipal, e: eraLegacy, params: call("read_resource", map[string]any{"uri": "docs://documents/alice-0001"}),
			status: 200, target: "read_resource", uri: "docs://documents/alice-0001"},
		{name: "a template tool, modern", caller: alicePrincipal, e: eraModern, params: call("read_document", map[string]any{"id": "alice-0002"}),
			status: 200, target: "read_document", uri: "docs://documents/alice-0002"},
		{name: "list_resources", caller: alicePrincipal, e: eraLegacy, params: call("list_resources", nil),
			status: 200, target: "list_resources", entries: 14},
		// The query is the caller's text: never reported.
		{name: "search", caller: alicePrincipal, e: eraLegacy, params: call("search", map[string]any{"query": "alice-000"}),
			status: 200, target: "search"},
		{name: "fetch of another's document: a tool error", caller: alicePrincipal, e: eraLegacy, params: call("fetch", map[string]any{"id": "docs://documents/bob-0001"}),
			status: 200, outcome: mcphttp.OutcomeNotFound, errorType: mcphttp.ErrorTypeToolError, target: "fetch", uri: "docs://documents/bob-0001"},
		{name: "bad arguments: a tool error", caller: alicePrincipal, e: eraLegacy, params: call("read_resource", map[string]any{"url": "x"}),
			status: 200, outcome: mcphttp.OutcomeInvalid, errorType: mcphttp.ErrorTypeToolError, target: "read_resource"},
		{name: "tampered cursor: a tool error", caller: alicePrincipal, e: eraLegacy, params: call("list_resources", map[string]any{"cursor": "AAAA"}),
			status: 200, outcome: mcphttp.OutcomeInvalidCursor, errorType: mcphttp.ErrorTypeToolError, target: "list_resources", reason: inventory.ReasonInvalid},
		// An unknown tool is a protocol error, and its name (client input) is no target.
		{name: "unknown tool", caller: alicePrincipal, e: eraLegacy, params: call("teleport-"+string(make([]byte, 8)), nil),
			status: 200, outcome: mcphttp.OutcomeInvalid, errorType: "-32602"},
		{name: "missing scope: the challenge", caller: noScope, e: eraLegacy, params: call("read_resource", map[string]any{"uri": "docs://documents/dave-0001"}),
			status: 403, outcome: mcphttp.OutcomeDenied, errorType: "403", target: "read_resource", uri: "docs://documents/dave-0001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := f.post(t, tc.caller, tc.e, "tools/call", tc.params)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			got := obs.one(t)
			assert.Equal(t, "tools/call", got.Method)
			assert.Equal(t, tc.status, got.Status)
			assert.Equal(t, tc.outcome, got.Outcome, "outcome %s", got.Outcome)
			assert.Equal(t, tc.errorType, got.ErrorType)
			assert.Equal(t, tc.target, got.Target)
			assert.Equal(t, tc.uri, got.URI)
			assert.Equal(t, tc.entries, got.Entries)
			assert.Equal(t, tc.reason, got.CursorReason)
			assert.Equal(t, tc.caller.Subject, got.subject)
		})
	}

	// tools/list is a list call, never observed as a tool call.
	require.Equal(t, http.StatusOK, f.post(t, alicePrincipal, eraLegacy, "tools/list", nil).Code)
	got := obs.one(t)
	assert.Equal(t, mcphttp.OutcomeOK, got.Outcome)
	assert.Empty(t, got.Target)
	assert.Equal(t, mcphttp.ClassList, got.class)
}

// A search callback that fails is a tool error whose outcome is an error.
func TestObserverToolFailure(t *testing.T) {
	obs := &recorder{}
	f := newFixture(t, fixtureOptions{parts: []mcphttp.Part{mcphttp.Observe(obs)}})
	f.mu.Lock()
	f.searchErr = errors.New("index offline")
	f.mu.Unlock()
	w := f.post(t, alicePrincipal, eraLegacy, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "x"}})
	require.Equal(t, http.StatusOK, w.Code)
	got := obs.one(t)
	assert.Equal(t, mcphttp.OutcomeError, got.Outcome)
	assert.Equal(t, mcphttp.ErrorTypeToolError, got.ErrorType)
	assert.Empty(t, got.Message, "the tool's text is never the reported message")
}

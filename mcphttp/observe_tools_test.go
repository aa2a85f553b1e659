package mcphttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// TestObserverTools: a tools/call is observed with its tool as the target
// (a registered name, never the client's), the URI it read, and a tool
// error result (isError) as error type "tool_error" with the outcome the
// inventory gave; the audit records tool calls like resource calls.
func TestObserverTools(t *testing.T) {
	obs := &recorder{mark: "tools"}
	var audited []mcphttp.AuditRecord
	audit := mcphttp.NewAudit(mcphttp.AuditOptions{Record: func(_ context.Context, r mcphttp.AuditRecord) { audited = append(audited, r) }})
	f := newToolsFixture(t, toolsFixtureOptions{observer: mcphttp.Observers(obs, audit)})
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
			audited = nil
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
			require.Len(t, audited, 1)
			assert.Equal(t, tc.target, audited[0].Template)
			assert.Equal(t, tc.outcome, audited[0].Outcome)
			assert.Equal(t, tc.caller.Subject, audited[0].Subject)
		})
	}

	// tools/list is a list call, never audited as a tool call.
	require.Equal(t, http.StatusOK, f.post(t, alicePrincipal, eraLegacy, "tools/list", nil).Code)
	assert.Equal(t, mcphttp.OutcomeOK, obs.one(t).Outcome)
}

// A search callback that fails is a tool error whose outcome is an error.
func TestObserverToolFailure(t *testing.T) {
	obs := &recorder{mark: "tool-failure"}
	f := newToolsFixture(t, toolsFixtureOptions{observer: obs})
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

// Tool calls are limited in the search class, tools/list in the list class.
func TestRateLimitTools(t *testing.T) {
	clock := newFakeClock()
	limiter := newLimiter(t, mcphttp.RateLimits{Search: mcphttp.Rate{PerSecond: 1, Burst: 1}, List: mcphttp.Rate{PerSecond: 1, Burst: 1}, Now: clock.Now})
	f := newToolsFixture(t, toolsFixtureOptions{limiter: limiter})
	search := func() map[string]any { // a fresh map a call: modern() adds _meta to it
		return map[string]any{"name": "search", "arguments": map[string]any{"query": "a"}}
	}
	assert.Equal(t, http.StatusOK, f.post(t, alicePrincipal, eraLegacy, "tools/call", search()).Code)
	assert.Equal(t, http.StatusTooManyRequests, f.post(t, alicePrincipal, eraModern, "tools/call", search()).Code)
	assert.Equal(t, http.StatusOK, f.post(t, alicePrincipal, eraLegacy, "tools/list", nil).Code)
	assert.Equal(t, http.StatusTooManyRequests, f.post(t, alicePrincipal, eraLegacy, "tools/list", nil).Code)
	assert.Equal(t, http.StatusOK, f.post(t, bobPrincipal, eraLegacy, "tools/call", search()).Code, "bob has his own bucket")
}

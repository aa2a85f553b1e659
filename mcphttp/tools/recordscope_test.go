package tools_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// needs answers the *principal.ScopeError of one record when the caller
// lacks scope, as a callback of the application does.
func needs(caller *principal.Principal, scope string) error {
	if caller == nil || !caller.HasScopes(scope) {
		return &principal.ScopeError{Required: []string{scope}}
	}
	return nil
}

// projectsEndpoint is an endpoint whose one template (projects, static
// scope docs:read) has callbacks that each need a scope of their own:
// Read proj:<id>, List proj:list, Search proj:search, Complete
// proj:complete; and a tool of the service's own that needs proj:deploy.
// A Read of project "held" answers a ScopeError for a scope the caller
// holds (a callback's bug: no step-up could help).
func projectsEndpoint(t *testing.T, logs *syncBuffer) *mcphttp.Endpoint {
	t.Helper()
	entry := inventory.Entry{Key: "k7", URI: "proj://projects/7", Name: "Project 7"}
	projects := inventory.Template{
		Name: "projects", URITemplate: "proj://projects/{id}", MIMEType: "text/plain", RequiredScopes: []string{"docs:read"},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			if req.Params["id"] == "held" {
				return nil, &principal.ScopeError{Required: []string{"docs:read"}}
			}
			if err := needs(req.Principal, "proj:"+req.Params["id"]); err != nil {
				return nil, err
			}
			return []inventory.Contents{{URI: req.URI, Text: "project " + req.Params["id"]}}, nil
		},
		List: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			if err := needs(req.Principal, "proj:list"); err != nil {
				return inventory.Page{}, err
			}
			return inventory.Page{Entries: []inventory.Entry{entry}}, nil
		},
		Search: func(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
			if err := needs(req.Principal, "proj:search"); err != nil {
				return nil, err
			}
			return []inventory.SearchHit{{URI: entry.URI, Name: entry.Name}}, nil
		},
		Complete: map[string]inventory.CompleteFunc{"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			if err := needs(req.Principal, "proj:complete"); err != nil {
				return inventory.Completion{}, err
			}
			return inventory.Completion{Values: []string{"7"}}, nil
		}},
	}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	inv, err := inventory.New(nil, []inventory.Template{projects}, inventory.Options{Logger: log})
	require.NoError(t, err)
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"projects": {Name: "read_project"}}})
	require.NoError(t, err)
	deploy := tools.Tool{Name: "deploy", Description: "Deploys a project.",
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			if err := needs(req.Principal, "proj:deploy"); err != nil {
				return tools.Result{}, err
			}
			return tools.TextResult("deployed"), nil
		}}
	part, err := tools.New(append(builtin, deploy)...)
	require.NoError(t, err)
	return newEndpoint(t, inv, 0, log, part)
}

// Scopes per record (issue 37): a *principal.ScopeError from any callback
// — Read, List, Search, Complete, a tool handler, through the methods and
// through the built-in tools — is the 403 insufficient_scope challenge
// naming the scope the record needs, with resource_metadata and
// error_description, in both eras, exactly as a static RequiredScopes
// miss; never a JSON-RPC error or a tool result. Before, the inventory's
// callbacks' ScopeError was logged and answered -32603.
func TestScopeErrorFromEachCallback(t *testing.T) {
	logs := &syncBuffer{}
	ep := projectsEndpoint(t, logs)
	type request struct {
		name, method string
		params       map[string]any
		scope        string // what the challenge names
	}
	requests := []request{
		{"Read", "resources/read", map[string]any{"uri": "proj://projects/7"}, "proj:7"},
		{"List", "resources/list", nil, "proj:list"},
		{"Complete", "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "proj://projects/{id}"},
			"argument": map[string]any{"name": "id", "value": ""}}, "proj:complete"},
		{"Read via read_resource", "tools/call", map[string]any{"name": "read_resource", "arguments": map[string]any{"uri": "proj://projects/7"}}, "proj:7"},
		{"Read via fetch", "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"id": "proj://projects/7"}}, "proj:7"},
		{"Read via a template tool", "tools/call", map[string]any{"name": "read_project", "arguments": map[string]any{"id": "7"}}, "proj:7"},
		{"List via list_resources", "tools/call", map[string]any{"name": "list_resources"}, "proj:list"},
		{"Search via search", "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "Project"}}, "proj:search"},
		{"a tool handler", "tools/call", map[string]any{"name": "deploy"}, "proj:deploy"},
	}
	base := &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
	for _, e := range bothEras {
		for _, rq := range requests {
			t.Run(string(e)+" "+rq.name, func(t *testing.T) {
				w := post(t, ep, base, e, rq.method, clone(rq.params))
				require.Equal(t, 403, w.Code, w.Body.String())
				ch := w.Header().Get("WWW-Authenticate")
				assert.Contains(t, ch, `Bearer error="insufficient_scope", scope="`+rq.scope+`"`)
				assert.Contains(t, ch, `resource_metadata="`)
				assert.Contains(t, ch, `error_description="`)
				assert.NotContains(t, w.Body.String(), "-32603")

				// The step-up: the same request with the wider token.
				wider := *base
				wider.Scopes = append(slices.Clone(base.Scopes), rq.scope)
				w = post(t, ep, &wider, e, rq.method, clone(rq.params))
				require.Equal(t, 200, w.Code, w.Body.String())
				r := decode(t, w)
				require.Nil(t, r.Error, w.Body.String())
				assert.NotContains(t, string(r.Result), `"isError":true`, w.Body.String())
			})
		}
	}
	assert.NotContains(t, logs.String(), "callback failed", "a record's scope is no failure")

	// Exactly the challenge of a static RequiredScopes miss: a template
	// whose RequiredScopes are docs:read and proj:7, read by the same
	// caller, gets a WWW-Authenticate identical to the callback's (after
	// the scope), so a client that steps up on one steps up on the other.
	static := inventory.Template{Name: "static", URITemplate: "proj://static/{id}", RequiredScopes: []string{"proj:7"},
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, inventory.ErrNotFound
		}}
	sinv, err := inventory.New(nil, []inventory.Template{static}, inventory.Options{})
	require.NoError(t, err)
	sep := newEndpoint(t, sinv, 0, nil)
	for _, e := range bothEras {
		want := post(t, sep, base, e, "resources/read", map[string]any{"uri": "proj://static/7"})
		got := post(t, ep, base, e, "resources/read", map[string]any{"uri": "proj://projects/7"})
		require.Equal(t, 403, want.Code)
		assert.Equal(t, want.Header().Get("WWW-Authenticate"), got.Header().Get("WWW-Authenticate"), string(e))
		assert.Equal(t, want.Body.String(), got.Body.String(), string(e))
	}

	// A callback's ScopeError for a scope the caller holds would make the
	// client loop: a failed callback, logged; -32603 (or a tool error).
	w := post(t, ep, base, eraLegacy, "resources/read", map[string]any{"uri": "proj://projects/held"})
	require.Equal(t, 200, w.Code)
	r := decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32603), r.Error.Code)
	assert.Contains(t, logs.String(), "only scopes the caller holds")
}

// Through intercept (which serves the resource methods, completion and
// the endpoint's tools with the endpoint itself), a callback's ScopeError
// is the same 403 challenge in both eras, and legacy is never reached.
func TestScopeErrorThroughIntercept(t *testing.T) {
	ep := projectsEndpoint(t, &syncBuffer{})
	var hits atomic.Int64
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`))
	})
	h, err := intercept.New(ep, legacy, intercept.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	before := hits.Load()
	base := &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
	for _, e := range bothEras {
		for _, rq := range []struct {
			method string
			params map[string]any
			scope  string
		}{
			{"resources/read", map[string]any{"uri": "proj://projects/7"}, "proj:7"},
			{"resources/list", nil, "proj:list"},
			{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "proj://projects/{id}"},
				"argument": map[string]any{"name": "id", "value": ""}}, "proj:complete"},
			{"tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "Project"}}, "proj:search"},
			{"tools/call", map[string]any{"name": "deploy"}, "proj:deploy"},
		} {
			w := post(t, h, base, e, rq.method, clone(rq.params))
			require.Equal(t, 403, w.Code, "%s %s: %s", e, rq.method, w.Body.String())
			assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="insufficient_scope", scope="`+rq.scope+`"`)
			assert.Contains(t, w.Header().Get("WWW-Authenticate"), `resource_metadata="`)
		}
	}
	assert.Equal(t, before, hits.Load(), "legacy never reached")
}

func clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

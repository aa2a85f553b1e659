package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

// Tools of a service's own, next to the built-in ones.

// echo is a tool of one's own: its handler answers the text it got, and
// counts its calls.
func echo(calls *atomic.Int64, t tools.Tool) tools.Tool {
	if t.Name == "" {
		t.Name = "echo"
	}
	if t.Args == nil && t.InputSchema == "" {
		t.Args = []tools.Arg{{Name: "text", Required: true, Description: "What to echo."}}
	}
	t.Handler = func(_ context.Context, req *tools.Request) (tools.Result, error) {
		calls.Add(1)
		return tools.TextResult("echo: " + req.Args["text"]), nil
	}
	return t
}

// newGatedFixture is the fixture with two tools of one's own: a scoped
// one and a gated one, in an inventory with the gates beta and staff.
func newGatedFixture(t *testing.T, calls *atomic.Int64, global ...string) *fixture {
	t.Helper()
	staff := func(_ context.Context, p *principal.Principal) bool { return p != nil && p.HasScopes("staff") }
	return newFixture(t, fixtureOptions{
		invOpts: inventory.Options{Gates: []inventory.Gate{{Name: "beta"}, {Name: "staff", Policy: staff}}, GlobalGates: global},
		extra: []tools.Tool{
			echo(calls, tools.Tool{Name: "write_note", RequiredScopes: []string{"notes:write"}}),
			echo(calls, tools.Tool{Name: "beta_echo", Gates: []string{"beta"}, Access: inventory.Public}),
			echo(calls, tools.Tool{Name: "staff_echo", Gates: []string{"staff"}}),
		},
	})
}

// TestUserToolVisibility: a tool of one's own is listed, after the
// built-in ones, exactly to the callers its access, scopes and gates
// admit; calls of a gated one answer as an unknown tool's, calls without
// the access or scopes get the challenges, and the handler runs for the
// others only.
func TestUserToolVisibility(t *testing.T) {
	var calls atomic.Int64
	f := newGatedFixture(t, &calls)
	ctx := context.Background()
	writer := &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read", "notes:write"}}
	staffer := &principal.Principal{Subject: "carol", Scopes: []string{"staff"}}
	builtins := []string{"list_resources", "read_resource", "search", "fetch", "read_document"}
	for _, e := range bothEras {
		names, _ := f.listTools(t, alicePrincipal, e)
		assert.Equal(t, builtins, names, "alice lacks notes:write, is not in the beta, not staff")
		names, _ = f.listTools(t, writer, e)
		assert.Equal(t, append(builtins, "write_note"), names)
		names, _ = f.listTools(t, nil, e)
		assert.Equal(t, []string{"read_resource"}, names, "anonymous: a public tool still needs its gate")
		names, _ = f.listTools(t, staffer, e)
		assert.Equal(t, []string{"read_resource", "staff_echo"}, names, "the staff policy lets carol in (without docs:read, no listing)")
	}

	unknown := outcome{status: 200, code: -32602}
	try := func(t *testing.T, caller *principal.Principal, e era, name string) outcome {
		t.Helper()
		return tryCall(t, f, caller, e, name)
	}
	for _, e := range bothEras {
		for _, tc := range []struct {
			name   string
			caller *principal.Principal
			tool   string
			want   outcome
			ran    bool
		}{
			{"anonymous, a protected tool", nil, "write_note", outcome{status: 401}, false},
			{"without the scope", alicePrincipal, "write_note", outcome{status: 403}, false},
			{"with the scope", writer, "write_note", outcome{status: 200, text: "echo: hi"}, true},
			{"gated, not granted", alicePrincipal, "beta_echo", unknown, false},
			{"gated, anonymous", nil, "beta_echo", unknown, false},
			{"gated by policy, refused", writer, "staff_echo", unknown, false},
			{"gated by policy, admitted", staffer, "staff_echo", outcome{status: 200, text: "echo: hi"}, true},
		} {
			t.Run(tc.name+"/"+string(e), func(t *testing.T) {
				before := calls.Load()
				assert.Equal(t, tc.want, try(t, tc.caller, e, tc.tool))
				assert.Equal(t, tc.ran, calls.Load() > before, "the handler ran")
			})
		}
	}
	w := f.post(t, alicePrincipal, eraLegacy, "tools/call", map[string]any{"name": "write_note", "arguments": map[string]any{"text": "x"}})
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `scope="notes:write"`, "the 403 names the scope")

	// A grant opens the gated tool, to alice only; a revoke closes it.
	_, err := f.inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	names, _ := f.listTools(t, alicePrincipal, eraModern)
	assert.Equal(t, append(builtins, "beta_echo"), names)
	assert.Equal(t, outcome{status: 200, text: "echo: hi"}, try(t, alicePrincipal, eraModern, "beta_echo"))
	assert.Equal(t, unknown, try(t, bobPrincipal, eraModern, "beta_echo"))
	_, err = f.inv.Revoke(ctx, "alice", "beta")
	require.NoError(t, err)
	assert.Equal(t, unknown, try(t, alicePrincipal, eraModern, "beta_echo"))

	// The inventory's global gates guard tools of one's own too; the
	// built-in ones follow the inventory, which applies them.
	g := newGatedFixture(t, &calls, "beta")
	names, _ = g.listTools(t, writer, eraModern)
	assert.Equal(t, []string{"list_resources"}, names, "outside the beta, nothing but an empty listing (resources/list answers one)")
	assert.Equal(t, unknown, tryCall(t, g, writer, eraModern, "write_note"))
	_, err = g.inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	names, _ = g.listTools(t, writer, eraModern)
	assert.Equal(t, append(builtins, "write_note", "beta_echo"), names)
}

// outcome is how a call of a tool of one's own was answered.
type outcome struct {
	status int
	code   int64 // a protocol error's code
	text   string
}

// tryCall calls a tool with {"text":"hi"}.
func tryCall(t *testing.T, f *fixture, caller *principal.Principal, e era, name string) outcome {
	t.Helper()
	w := f.post(t, caller, e, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"text": "hi"}})
	if w.Code != 200 {
		assert.Contains(t, w.Header().Get("WWW-Authenticate"), "Bearer")
		return outcome{status: w.Code}
	}
	r := decode(t, w)
	if r.Error != nil {
		assert.Equal(t, "Unknown tool", r.Error.Message, "a hidden tool answers as an unknown one")
		return outcome{status: 200, code: r.Error.Code}
	}
	var res toolResult
	require.NoError(t, json.Unmarshal(r.Result, &res))
	return outcome{status: 200, text: res.Content[0].Text}
}

// TestUserToolSignature: the tools/list_changed watcher sees tools of
// one's own: a grant that opens a gated one changes the signature, a
// change that leaves them does not.
func TestUserToolSignature(t *testing.T) {
	var calls atomic.Int64
	f := newGatedFixture(t, &calls)
	ws := watchers(t, f.inv, f.part)
	require.Len(t, ws, 1)
	ctx := context.Background()
	sig := func(p *principal.Principal) string {
		t.Helper()
		s, ok := ws[0].Sig(ctx, p)
		require.True(t, ok)
		return s
	}
	seen := sig(alicePrincipal)
	f.store.add("alice", 3) // her resources change, her tools do not
	assert.Equal(t, seen, sig(alicePrincipal))
	_, err := f.inv.Authorize(ctx, "bob", "beta")
	require.NoError(t, err)
	assert.Equal(t, seen, sig(alicePrincipal), "bob's grant is not alice's")
	_, err = f.inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	assert.NotEqual(t, seen, sig(alicePrincipal), "beta_echo appeared")
	assert.NotEqual(t, sig(alicePrincipal), sig(&principal.Principal{Subject: "alice", Scopes: []string{"docs:read", "notes:write"}}),
		"another token's scopes show write_note")

	// A failing grant store: no signature (no change to tell), logged.
	failing := &failingGrants{Memory: grants.NewMemory()}
	h := newFixture(t, fixtureOptions{
		invOpts: inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}, Grants: failing},
		extra:   []tools.Tool{echo(&calls, tools.Tool{Gates: []string{"beta"}})},
	})
	ws = watchers(t, h.inv, h.part)
	failing.fail.Store(true)
	_, ok := ws[0].Sig(ctx, alicePrincipal)
	assert.False(t, ok)
	w := h.post(t, alicePrincipal, eraLegacy, "tools/list", nil)
	assert.Equal(t, int64(jsonrpc.CodeInternalError), decode(t, w).Error.Code)
	w = h.post(t, alicePrincipal, eraLegacy, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	assert.Equal(t, int64(jsonrpc.CodeInternalError), decode(t, w).Error.Code, "a gate that cannot be decided lets nobody through")
	assert.Contains(t, h.logs.String(), "grants offline")
}

// failingGrants is a grant store that fails when told to.
type failingGrants struct {
	*grants.Memory
	fail atomic.Bool
}

func (g *failingGrants) Grants(ctx context.Context, subject string) (grants.Grants, error) {
	if g.fail.Load() {
		return grants.Grants{}, errors.New("grants offline")
	}
	return g.Memory.Grants(ctx, subject)
}

// TestUserToolConstruction: a tool's definition is checked by New, its
// gates by the endpoint's Setup.
func TestUserToolConstruction(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	builtin, err := tools.Builtin(f.inv, tools.BuiltinOptions{})
	require.NoError(t, err)
	ok := func(context.Context, *tools.Request) (tools.Result, error) { return tools.Result{}, nil }
	for _, tc := range []struct {
		name string
		tool tools.Tool
		want string
	}{
		{"named like a built-in tool", tools.Tool{Name: "read_resource", Handler: ok}, `tool name "read_resource" is taken`},
		{"named like another built-in tool", tools.Tool{Name: "search", Handler: ok}, `tool name "search" is taken`},
		{"no name", tools.Tool{Handler: ok}, "tool names"},
		{"a space in the name", tools.Tool{Name: "my tool", Handler: ok}, "tool names"},
		{"no handler", tools.Tool{Name: "x"}, "no handler"},
		{"an unknown class", tools.Tool{Name: "x", Handler: ok, Class: "write"}, "Class"},
		{"public with scopes", tools.Tool{Name: "x", Handler: ok, Access: inventory.Public, RequiredScopes: []string{"a"}}, "public tool cannot require scopes"},
		{"an unknown access mode", tools.Tool{Name: "x", Handler: ok, Access: 7}, "access mode"},
		{"an invalid scope", tools.Tool{Name: "x", Handler: ok, RequiredScopes: []string{"a b"}}, "invalid scope"},
		{"an input schema that is not an object", tools.Tool{Name: "x", Handler: ok, InputSchema: `[]`}, "InputSchema"},
		{"an input schema that is not JSON", tools.Tool{Name: "x", Handler: ok, InputSchema: `{"type":`}, "InputSchema"},
		{"an output schema that is not an object", tools.Tool{Name: "x", Handler: ok, OutputSchema: `"s"`}, "OutputSchema"},
		{"an argument without a name", tools.Tool{Name: "x", Handler: ok, Args: []tools.Arg{{}}}, "no name"},
		{"an argument twice", tools.Tool{Name: "x", Handler: ok, Args: []tools.Arg{{Name: "a"}, {Name: "a"}}}, "named twice"},
		{"a negative length", tools.Tool{Name: "x", Handler: ok, Args: []tools.Arg{{Name: "a", MaxLen: -1}}}, "MaxLen"},
		{"a gate twice", tools.Tool{Name: "x", Handler: ok, Gates: []string{"g", "g"}}, "named twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tools.New(append(builtin, tc.tool)...)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err = tools.New(tools.Tool{Name: "x", Handler: ok}, tools.Tool{Name: "x", Handler: ok})
	assert.ErrorContains(t, err, `tool name "x" is taken`)

	part, err := tools.New(append(builtin, tools.Tool{Name: "x", Handler: ok, Gates: []string{"beta"}})...)
	require.NoError(t, err)
	_, err = mcphttp.New(f.inv, mcphttp.Options{}, part)
	assert.ErrorContains(t, err, `no gate "beta"`)

	// Before an endpoint sets it up, a part cannot tell who sees what.
	part, err = tools.New(tools.Tool{Name: "x", Handler: ok})
	require.NoError(t, err)
	_, err = part.AppendList(context.Background(), nil, nil, mcpwire.Version20250618)
	assert.Error(t, err)
	assert.Equal(t, []string{"x"}, part.Names())
}

// TestToolsClaims: tools/call is the part's when it names one of its
// tools, or no name can be read; other tools belong to a server behind.
func TestToolsClaims(t *testing.T) {
	var calls atomic.Int64
	f := newFixture(t, fixtureOptions{extra: []tools.Tool{echo(&calls, tools.Tool{Gates: nil})}})
	view, ok := seam.EndpointOf(f.ep)
	require.True(t, ok)
	for _, tc := range []struct {
		params string
		want   bool
	}{
		{`{"name":"read_resource"}`, true},
		{`{"name":"echo","arguments":{"text":"x"}}`, true},
		{`{"name":"legacy_tool"}`, false},
		{`{"name":"Echo"}`, false},
		{`{"name":7}`, true},
		{`{"Name":"echo"}`, true},
		{`{}`, true},
		{`{"name":"echo","arguments":[1]}`, true},
	} {
		msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+tc.params+`}`), 0)
		require.NoError(t, err)
		assert.Equal(t, tc.want, view.Serves(msg), tc.params)
	}
	assert.True(t, f.part.Has("echo"))
	assert.False(t, f.part.Has("ECHO"))
	assert.Equal(t, []string{"list_resources", "read_resource", "search", "fetch", "read_document", "read_report", "echo"}, f.part.Names())

	b, err := f.part.AppendList(context.Background(), []byte("x"), alicePrincipal, mcpwire.Version20250326)
	require.NoError(t, err)
	var defs []struct{ Name string }
	require.NoError(t, json.Unmarshal(append(append([]byte("["), b[1:]...), ']'), &defs))
	require.NotEmpty(t, defs)
	assert.Equal(t, "echo", defs[len(defs)-1].Name, "appended after what dst held")
}

// mcptestRPC is what TestUserToolResults looks at of an answer.
// TestToolsListCursor: tools/list is one page: a cursor, which the part
// never issues, is invalid.
func TestToolsListCursor(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, cursor := range []any{"", "AAAA", 7} {
		for _, e := range bothEras {
			w := f.post(t, alicePrincipal, e, "tools/list", map[string]any{"cursor": cursor})
			r := decode(t, w)
			require.NotNil(t, r.Error, "cursor %v", cursor)
			assert.Equal(t, int64(-32602), r.Error.Code)
		}
	}
}

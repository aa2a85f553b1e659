package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

func TestToolsOffByDefault(t *testing.T) {
	// An endpoint without the part: no tools capability, and tools/list
	// and tools/call are unknown methods.
	f := newFixture(t, fixtureOptions{})
	ep := newEndpoint(t, f.inv, 0, nil)
	w := raw(t, ep, nil, mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	assert.NotContains(t, w.Body.String(), `"tools"`, "no tools capability without the part")
	for _, method := range []string{"tools/list", "tools/call"} {
		r := decode(t, raw(t, ep, alicePrincipal, mcptest.Legacy(1, method, map[string]any{"name": "list_resources"}), map[string]string{"MCP-Protocol-Version": "2025-11-25"}))
		require.NotNil(t, r.Error)
		assert.Equal(t, int64(-32601), r.Error.Code)
	}
}

func TestToolsCapability(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	w := f.raw(t, nil, mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	assert.Contains(t, w.Body.String(), `"tools":{"listChanged":false}`)
	body, hdr := mcptest.Modern(1, "server/discover", nil)
	w = f.raw(t, nil, body, hdr)
	assert.Contains(t, w.Body.String(), `"tools":{"listChanged":false}`)

	// With a part that delivers notifications on event streams (sessions),
	// the answers that come with streams say listChanged: grant changes
	// reach the principal's streams.
	var setup *mcphttp.Setup
	streams := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		seam.Of(s).Notifying()
		setup = s
		s.Handle("initialize", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
			res := seam.Of(setup).InitializeResult(c.ProtocolVersion, true) // a session's answer
			return mcphttp.JSONResult(c, json.RawMessage(res), mcphttp.CacheNone)
		}, mcphttp.MethodOptions{Era: mcphttp.EraLegacy})
		return nil
	})
	part, err := tools.New()
	require.NoError(t, err)
	ep := newEndpoint(t, f.inv, 0, nil, streams, part)
	w = raw(t, ep, alicePrincipal, mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	assert.Contains(t, w.Body.String(), `"tools":{"listChanged":true}`)
	w = raw(t, ep, nil, body, hdr)
	assert.Contains(t, w.Body.String(), `"tools":{"listChanged":true}`)
}

// TestToolsListVisibility: tools/list shows each caller only the tools it
// may use — scopes, the template's owner, gates — in both eras.
func TestToolsListVisibility(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	all := []string{"list_resources", "read_resource", "search", "fetch", "read_document", "read_report"}
	for _, tc := range []struct {
		name   string
		caller *principal.Principal
		want   []string
	}{
		// Anonymous: public statics are readable; resources/list needs a
		// token, search a subject.
		{"anonymous", nil, []string{"read_resource"}},
		{"alice", alicePrincipal, []string{"list_resources", "read_resource", "search", "fetch", "read_document"}},
		{"reports reader", &principal.Principal{Subject: "carol", Scopes: []string{"docs:read", "reports:read"}}, all},
		// A token without docs:read: resources/list would be a 403, so
		// list_resources is not offered; nor search or read_document.
		{"no scopes", &principal.Principal{Subject: "dave"}, []string{"read_resource"}},
		// A service token has no subject: subject-owned templates are not
		// its records.
		{"no subject", &principal.Principal{ClientID: "svc", Scopes: []string{"docs:read", "reports:read"}}, []string{"list_resources", "read_resource"}},
	} {
		for _, e := range bothEras {
			t.Run(tc.name+"/"+string(e), func(t *testing.T) {
				names, result := f.listTools(t, tc.caller, e)
				assert.Equal(t, tc.want, names)
				var meta struct {
					ResultType string `json:"resultType"`
					TTLMs      *int   `json:"ttlMs"`
					CacheScope string `json:"cacheScope"`
					NextCursor *string
				}
				require.NoError(t, json.Unmarshal(result, &meta))
				assert.Nil(t, meta.NextCursor, "one page")
				if e == eraModern {
					assert.Equal(t, "complete", meta.ResultType)
					require.NotNil(t, meta.TTLMs)
					assert.Equal(t, 0, *meta.TTLMs)
					assert.Equal(t, "private", meta.CacheScope, "the list depends on the caller")
				} else {
					assert.Empty(t, meta.ResultType)
				}
			})
		}
	}
}

func TestToolsListGates(t *testing.T) {
	f := newFixture(t, fixtureOptions{invOpts: inventory.Options{Grants: grants.NewMemory()}})
	ctx := context.Background()
	_, err := f.inv.Disable(ctx, "alice", "documents")
	require.NoError(t, err)
	names, _ := f.listTools(t, alicePrincipal, eraModern)
	assert.Equal(t, []string{"list_resources", "read_resource"}, names, "a disabled template takes its tools along")
	res := f.callTool(t, alicePrincipal, eraModern, "read_document", map[string]any{"id": "alice-0001"})
	assert.True(t, res.IsError, "hidden: not found, as from resources/read")
	_, err = f.inv.Enable(ctx, "alice", "documents")
	require.NoError(t, err)
	names, _ = f.listTools(t, alicePrincipal, eraModern)
	assert.Contains(t, names, "read_document")
}

func TestToolDefinitions(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	type def struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	defs := func(e era) map[string]def {
		_, result := f.listTools(t, &principal.Principal{Subject: "carol", Scopes: []string{"docs:read", "reports:read"}}, e)
		var res struct{ Tools []def }
		require.NoError(t, json.Unmarshal(result, &res))
		out := map[string]def{}
		for _, d := range res.Tools {
			out[d.Name] = d
		}
		return out
	}
	now := defs(eraModern)
	for name, d := range now {
		assert.True(t, d.Annotations.ReadOnlyHint, name)
		assert.NotEmpty(t, d.Title, name)
		var schema struct {
			Type                 string `json:"type"`
			AdditionalProperties *bool  `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(d.InputSchema, &schema), name)
		assert.Equal(t, "object", schema.Type)
		require.NotNil(t, schema.AdditionalProperties, name)
		assert.False(t, *schema.AdditionalProperties, name)
	}
	assert.NotEmpty(t, now["list_resources"].OutputSchema)
	assert.JSONEq(t, `{"type":"object","properties":{
		"year":{"type":"string","minLength":1,"maxLength":2048,"description":"The {year} of docs://reports/{year}/{id}."},
		"id":{"type":"string","minLength":1,"maxLength":2048,"description":"The {id} of docs://reports/{year}/{id}."}},
		"required":["year","id"],"additionalProperties":false}`, string(now["read_report"].InputSchema),
		"one string per variable, and nothing of any caller's data")
	old := defs(eraOld)
	assert.Empty(t, old["list_resources"].OutputSchema, "2025-03-26 has no output schemas")
	assert.Empty(t, old["list_resources"].Title)
}

// TestListResourcesIsResourcesList: list_resources gives the pages of
// resources/list, in both eras, and their cursors are the same cursors.
func TestListResourcesIsResourcesList(t *testing.T) {
	f := newFixture(t, fixtureOptions{invOpts: inventory.Options{PageSize: 5}})
	for _, e := range []era{eraModern, eraLegacy, eraOld} {
		t.Run(string(e), func(t *testing.T) {
			viaResources := f.walkResources(t, alicePrincipal, e)
			assert.Equal(t, viaResources, f.walkTools(t, alicePrincipal, e))
			assert.Len(t, viaResources, 14, "2 statics and alice's 12 documents")
			for _, u := range viaResources {
				assert.NotContains(t, u, "bob")
			}
		})
	}
	// A resources/list cursor continues in list_resources, and the other
	// way round: one cursor format, one binding.
	w := f.post(t, alicePrincipal, eraModern, "resources/list", nil)
	var p listPage
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &p))
	res := f.callTool(t, alicePrincipal, eraModern, "list_resources", map[string]any{"cursor": p.NextCursor})
	require.False(t, res.IsError)
	var tp listPage
	require.NoError(t, json.Unmarshal(res.StructuredContent, &tp))
	w = f.post(t, alicePrincipal, eraModern, "resources/list", map[string]any{"cursor": p.NextCursor})
	var rp listPage
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &rp))
	assert.Equal(t, rp.Resources, tp.Resources)
	require.NotEmpty(t, tp.NextCursor)
	w = f.post(t, alicePrincipal, eraModern, "resources/list", map[string]any{"cursor": tp.NextCursor})
	require.Nil(t, decode(t, w).Error, "list_resources' cursor continues resources/list")

	// Bob's cursor is not alice's.
	res = f.callTool(t, bobPrincipal, eraModern, "list_resources", map[string]any{"cursor": p.NextCursor})
	assert.True(t, res.IsError)
	assert.Equal(t, "Invalid cursor (invalid): call list_resources again without a cursor.", res.Content[0].Text)
}

// TestReadSearchFetchSeeOnlyTheCallersOwn: bob's URIs and ids answer
// exactly like missing ones, in every tool, in both eras.
func TestReadSearchFetchSeeOnlyTheCallersOwn(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, e := range bothEras {
		t.Run(string(e), func(t *testing.T) {
			res := f.callTool(t, alicePrincipal, e, "read_resource", map[string]any{"uri": "docs://documents/alice-0003"})
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "text", res.Content[0].Type)
			assert.Equal(t, "Contents of Document alice-0003", res.Content[0].Text)
			if e == eraModern {
				assert.Equal(t, "complete", res.ResultType)
				assert.Equal(t, "private", res.CacheScope)
				require.NotNil(t, res.TTLMs)
			}

			res = f.callTool(t, alicePrincipal, e, "read_resource", map[string]any{"uri": "test://logo"})
			require.Len(t, res.Content, 1)
			assert.Equal(t, "resource", res.Content[0].Type, "binary contents are an embedded resource")
			assert.Equal(t, "iVBORw==", res.Content[0].Resource.Blob)
			assert.Equal(t, "image/png", res.Content[0].Resource.MIMEType)

			res = f.callTool(t, alicePrincipal, e, "read_document", map[string]any{"id": "alice-0003"})
			assert.Equal(t, "Contents of Document alice-0003", res.Content[0].Text, "the typed tool reads the same")

			missing := f.callTool(t, alicePrincipal, e, "read_resource", map[string]any{"uri": "docs://documents/nobody-0001"})
			assert.True(t, missing.IsError)
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"read_resource", map[string]any{"uri": "docs://documents/bob-0001"}},
				{"read_document", map[string]any{"id": "bob-0001"}},
				{"fetch", map[string]any{"id": "docs://documents/bob-0001"}},
				{"fetch", map[string]any{"id": "docs://documents/nobody-0001"}},
				{"fetch", map[string]any{"id": "no-such-id"}},
			} {
				got := f.callTool(t, alicePrincipal, e, call.tool, call.args)
				assert.Equal(t, missing, got, "%s %v answers like a missing resource", call.tool, call.args)
			}

			// search: one text item holding {"results":[{"id","title","url"}]}.
			res = f.callTool(t, alicePrincipal, e, "search", map[string]any{"query": "Document"})
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "text", res.Content[0].Type)
			assert.Nil(t, res.StructuredContent, "exactly the connector contract: the JSON is in the text")
			var found struct {
				Results []struct{ ID, Title, URL string } `json:"results"`
			}
			dec := json.NewDecoder(strings.NewReader(res.Content[0].Text))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&found))
			assert.Len(t, found.Results, 12, "alice's documents, not bob's")
			for _, r := range found.Results {
				assert.Contains(t, r.ID, "alice")
				assert.Equal(t, r.ID, r.URL)
				assert.Equal(t, "Document "+strings.TrimPrefix(r.ID, "docs://documents/"), r.Title)
			}
			// fetch every result: one text item holding {"id","title","text","url","metadata"}.
			for _, r := range found.Results {
				res := f.callTool(t, alicePrincipal, e, "fetch", map[string]any{"id": r.ID})
				require.False(t, res.IsError)
				require.Len(t, res.Content, 1)
				var doc struct {
					ID, Title, Text, URL string
					Metadata             map[string]any
				}
				dec := json.NewDecoder(strings.NewReader(res.Content[0].Text))
				dec.DisallowUnknownFields()
				require.NoError(t, dec.Decode(&doc))
				assert.Equal(t, r.ID, doc.ID)
				assert.Equal(t, "Title of "+strings.TrimPrefix(r.ID, "docs://documents/"), doc.Title)
				assert.Equal(t, "Contents of "+r.Title, doc.Text)
				assert.Equal(t, r.ID, doc.URL)
				assert.Equal(t, map[string]any{"uri": r.ID, "mimeType": "text/plain"}, doc.Metadata)
			}
			res = f.callTool(t, bobPrincipal, e, "search", map[string]any{"query": "alice"})
			assert.JSONEq(t, `{"results":[]}`, res.Content[0].Text, "bob finds none of alice's")
		})
	}
}

func TestToolsCitationURL(t *testing.T) {
	f := newFixture(t, fixtureOptions{builtin: &tools.BuiltinOptions{
		SearchLimit: 2,
		CitationURL: func(uri string) string {
			return "https://docs.example.com/" + strings.TrimPrefix(uri, "docs://documents/")
		},
	}})
	res := f.callTool(t, alicePrincipal, eraModern, "search", map[string]any{"query": "alice"})
	assert.JSONEq(t, `{"results":[
		{"id":"docs://documents/alice-0000","title":"Document alice-0000","url":"https://docs.example.com/alice-0000"},
		{"id":"docs://documents/alice-0001","title":"Document alice-0001","url":"https://docs.example.com/alice-0001"}]}`,
		res.Content[0].Text, "SearchLimit bounds the results")
}

// TestToolsAuthentication: the same challenges as the resource methods.
func TestToolsAuthentication(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, e := range bothEras {
		for _, call := range []struct {
			name   string
			caller *principal.Principal
			tool   string
			args   map[string]any
			status int
		}{
			{"anonymous list", nil, "list_resources", nil, 401},
			{"anonymous read of a protected URI", nil, "read_resource", map[string]any{"uri": "docs://documents/alice-0001"}, 401},
			{"anonymous search", nil, "search", map[string]any{"query": "x"}, 401},
			{"anonymous typed read", nil, "read_document", map[string]any{"id": "alice-0001"}, 401},
			{"list without the scope", &principal.Principal{Subject: "dave"}, "list_resources", nil, 403},
			{"read without the scope", &principal.Principal{Subject: "dave"}, "read_report", map[string]any{"year": "2026", "id": "1"}, 403},
			{"anonymous read of a public URI", nil, "read_resource", map[string]any{"uri": "test://about"}, 200},
		} {
			t.Run(call.name+"/"+string(e), func(t *testing.T) {
				params := map[string]any{"name": call.tool}
				if call.args != nil {
					params["arguments"] = call.args
				}
				w := f.post(t, call.caller, e, "tools/call", params)
				assert.Equal(t, call.status, w.Code, w.Body.String())
				if call.status != 200 {
					assert.Contains(t, w.Header().Get("WWW-Authenticate"), "Bearer")
				}
			})
		}
	}
}

func TestToolsConstruction(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	hidden, err := inventory.New(nil, []inventory.Template{{Name: "h", URITemplate: "h://{id}", Hidden: true,
		Read: inventory.TextReader("text/plain", "x")}}, inventory.Options{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		inv  *inventory.Inventory
		opts tools.BuiltinOptions
		want string
	}{
		{"unknown template", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"nope": {Name: "x"}}}, "no template"},
		{"by pattern, not name", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"docs://documents/{id}": {Name: "x"}}}, "no template"},
		{"hidden template", hidden, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"h": {Name: "x"}}}, "hidden"},
		{"empty name", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {}}}, "tool names"},
		{"space in name", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {Name: "read doc"}}}, "tool names"},
		{"name too long", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {Name: strings.Repeat("a", 129)}}}, "tool names"},
		{"clash with a fixed tool", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {Name: "search"}}}, "taken"},
		{"clash between templates", f.inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{
			"documents": {Name: "read"}, "reports": {Name: "read"}}}, "taken"},
		{"negative search limit", f.inv, tools.BuiltinOptions{SearchLimit: -1}, "SearchLimit"},
		{"search limit over the maximum", f.inv, tools.BuiltinOptions{SearchLimit: inventory.MaxSearchLimit + 1}, "SearchLimit"},
		{"no inventory", nil, tools.BuiltinOptions{}, "nil inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tools.Builtin(tc.inv, tc.opts)
			assert.ErrorContains(t, err, tc.want)
		})
	}

	// Built-in tools answer from their inventory: an endpoint of another
	// is refused.
	builtin, err := tools.Builtin(f.inv, tools.BuiltinOptions{})
	require.NoError(t, err)
	part, err := tools.New(builtin...)
	require.NoError(t, err)
	_, err = mcphttp.New(hidden, mcphttp.Options{}, part)
	assert.ErrorContains(t, err, "another inventory")
	other, err := tools.Builtin(hidden, tools.BuiltinOptions{})
	require.NoError(t, err)
	_, err = tools.New(append(builtin[:1:1], other[1])...)
	assert.ErrorContains(t, err, "another inventory")

	// Without a Search callback, search and fetch are not offered, and the
	// names are free.
	plain, err := inventory.New(nil, []inventory.Template{{Name: "d", URITemplate: "d://{id}", Read: inventory.TextReader("text/plain", "x")}}, inventory.Options{})
	require.NoError(t, err)
	builtin, err = tools.Builtin(plain, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"d": {Name: "search"}}})
	require.NoError(t, err)
	part, err = tools.New(builtin...)
	require.NoError(t, err)
	f.ep = newEndpoint(t, plain, 0, nil, part)
	names, _ := f.listTools(t, alicePrincipal, eraModern)
	assert.Equal(t, []string{"list_resources", "read_resource", "search"}, names)
	res := f.callTool(t, alicePrincipal, eraModern, "search", map[string]any{"id": "1"})
	assert.Equal(t, "x", res.Content[0].Text, "the typed tool of template d")
	w := f.post(t, alicePrincipal, eraModern, "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"id": "d://1"}})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code, "no fetch without search")
}

// watchers sets up parts on an endpoint over inv and returns the
// watchers they registered.
func watchers(t *testing.T, inv *inventory.Inventory, parts ...mcphttp.Part) []seam.Watcher {
	t.Helper()
	var get func() []seam.Watcher
	grab := mcphttp.PartFunc(func(s *mcphttp.Setup) error { get = seam.Of(s).Watchers; return nil })
	newEndpoint(t, inv, 0, nil, append(parts, grab)...)
	return get()
}

// TestToolsListChangedSignature: the tools part's watcher tells a grant
// change that changes the caller's tools (the event streams of the
// sessions part then send notifications/tools/list_changed) from a list
// change that leaves its tools as they were (a share), and from a change
// of someone else's.
func TestToolsListChangedSignature(t *testing.T) {
	store := newDocStore()
	store.add("alice", 2)
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"},
		Gates: []string{"beta"}, List: store.list, Read: store.read,
	}}, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}})
	require.NoError(t, err)
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{"documents": {Name: "read_document"}}})
	require.NoError(t, err)
	part, err := tools.New(builtin...)
	require.NoError(t, err)
	ws := watchers(t, inv, part)
	require.Len(t, ws, 1)
	require.Equal(t, "notifications/tools/list_changed", ws[0].Notification)
	ctx := context.Background()
	sig := func(p *principal.Principal) string {
		t.Helper()
		s, ok := ws[0].Sig(ctx, p)
		require.True(t, ok)
		return s
	}

	seen := sig(alicePrincipal)
	store.add("alice", 1) // a new document, a share: the tools stay
	assert.Equal(t, seen, sig(alicePrincipal))
	_, err = inv.Authorize(ctx, "alice", "beta") // read_document appears
	require.NoError(t, err)
	now := sig(alicePrincipal)
	assert.NotEqual(t, seen, now)
	names, _ := listTools(t, newEndpoint(t, inv, 0, nil, part), alicePrincipal, eraModern)
	assert.Contains(t, names, "read_document")
	seen = now
	_, err = inv.Authorize(ctx, "bob", "beta")
	require.NoError(t, err)
	assert.Equal(t, seen, sig(alicePrincipal), "bob's grant is not alice's")
	_, err = inv.Revoke(ctx, "alice", "beta")
	require.NoError(t, err)
	assert.NotEqual(t, seen, sig(alicePrincipal))
}

// TestFetchTitle: fetch reports Contents.Title clipped to the name limit;
// instead of an empty or unprintable one, the resource's own title as
// registered (a static resource's Title, then Name; a template's Title),
// and only then the URI.
func TestFetchTitle(t *testing.T) {
	var title string // what the reads below give as Contents.Title
	read := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		return []inventory.Contents{{URI: req.URI, Text: "x", Title: title}}, nil
	}
	statics := []inventory.Resource{
		{URI: "s://titled", Name: "about", Title: "About this server", Access: inventory.Public, Read: read},
		{URI: "s://named", Name: "named", Access: inventory.Public, Read: read},
	}
	templates := []inventory.Template{
		{Name: "d", URITemplate: "docs://documents/{id}", Read: read,
			Search: func(context.Context, inventory.SearchRequest) ([]inventory.SearchHit, error) { return nil, nil }},
		{Name: "readers", Title: "Readers of a document", URITemplate: "r://{id}", Read: read},
	}
	inv, err := inventory.New(statics, templates, inventory.Options{})
	require.NoError(t, err)
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
	require.NoError(t, err)
	part, err := tools.New(builtin...)
	require.NoError(t, err)
	ep := newEndpoint(t, inv, 0, nil, part)
	for _, tc := range []struct{ uri, title, want string }{
		{"docs://documents/1", "Plain", "Plain"},
		{"docs://documents/1", strings.Repeat("文", 600), strings.Repeat("文", 511) + "…"},
		{"docs://documents/1", "", "docs://documents/1"},
		{"docs://documents/1", "bell\a", "bell\uFFFD"}, // escaped as a listed name is (issue 35)
		{"docs://documents/1", "\xff", "\uFFFD"},
		{"s://titled", "Own", "Own"},
		{"s://titled", "", "About this server"},
		{"s://titled", "bell\a", "bell\uFFFD"},
		{"s://named", "", "named"},
		{"r://1", "", "Readers of a document"},
		{"r://1", "Alice's readers", "Alice's readers"},
	} {
		title = tc.title
		res := callTool(t, ep, alicePrincipal, eraLegacy, "fetch", map[string]any{"id": tc.uri})
		require.False(t, res.IsError, tc.uri)
		var doc struct{ Title string }
		require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &doc))
		assert.Equal(t, tc.want, doc.Title, "%s with %q", tc.uri, tc.title)
	}
}

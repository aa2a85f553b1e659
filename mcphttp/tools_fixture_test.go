package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// toolsFixture is an endpoint with the tools bridge on, over the
// docStore of the resource tests (alice 12 documents, bob 3), searchable
// by title; principals come from the request context, as with
// authentication middleware of the service's own.
type toolsFixture struct {
	inv   *inventory.Inventory
	ep    *mcphttp.Endpoint
	store *docStore
	logs  *syncBuffer
	// searchErr makes the search callback fail.
	searchErr error
	mu        sync.Mutex
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type toolsFixtureOptions struct {
	invOpts inventory.Options
	tools   *mcphttp.ToolOptions
	big     int // with a non-zero big, every document is that many bytes of text, with a long title
	// observer and limiter go to the endpoint's Options.
	observer mcphttp.Observer
	limiter  *mcphttp.RateLimiter
}

var (
	alicePrincipal = &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
	bobPrincipal   = &principal.Principal{Subject: "bob", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
)

func newToolsFixture(t testing.TB, o toolsFixtureOptions) *toolsFixture {
	t.Helper()
	f := &toolsFixture{store: newDocStore(), logs: &syncBuffer{}}
	f.store.add("alice", 12)
	f.store.add("bob", 3)
	read := f.store.read
	if o.big > 0 {
		read = func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			cs, err := f.store.read(ctx, req)
			if err == nil {
				cs[0].Text = strings.Repeat(`"quoted" \ text `, o.big/16)
				cs[0].Title = strings.Repeat("T", 500)
			}
			return cs, err
		}
		for subject, es := range f.store.entries {
			for i := range es {
				es[i].Name = strings.Repeat("N", 500) + es[i].URI[len(es[i].URI)-4:]
			}
			f.store.entries[subject] = es
		}
	}
	docs := inventory.Template{
		Name: "documents", Title: "Documents", Description: "The caller's own documents",
		URITemplate: "docs://documents/{id}", MIMEType: "text/plain", RequiredScopes: []string{"docs:read"},
		Validate: map[string]func(string) error{"id": func(v string) error {
			if strings.ContainsAny(v, "./") {
				return errors.New("no dots or slashes")
			}
			return nil
		}},
		List: f.store.list, Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			cs, err := read(ctx, req)
			if err == nil && cs[0].Title == "" {
				cs[0].Title = "Title of " + req.Params["id"]
			}
			return cs, err
		},
		Search: f.search,
	}
	reports := inventory.Template{
		Name: "reports", URITemplate: "docs://reports/{year}/{id}", RequiredScopes: []string{"reports:read"},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, Text: "report " + req.Params["year"] + "/" + req.Params["id"]}}, nil
		},
	}
	statics := []inventory.Resource{
		{URI: "test://about", Name: "about", MIMEType: "text/plain", Access: inventory.Public, Read: inventory.TextReader("text/plain", "public")},
		{URI: "test://logo", Name: "logo", MIMEType: "image/png", Access: inventory.Public, Read: inventory.BlobReader("image/png", []byte("\x89PNG"))},
	}
	if o.invOpts.Logger == nil {
		o.invOpts.Logger = slog.New(slog.NewJSONHandler(f.logs, nil))
	}
	inv, err := inventory.New(statics, []inventory.Template{docs, reports}, o.invOpts)
	require.NoError(t, err)
	auth, err := authn.NewAuthenticator(nil, authn.Options{Resource: testResource, Scopes: []string{"docs:read"}})
	require.NoError(t, err)
	tools := o.tools
	if tools == nil {
		tools = &mcphttp.ToolOptions{Templates: map[string]mcphttp.TemplateTool{
			"documents": {Name: "read_document"},
			"reports":   {Name: "read_report", Description: "A yearly report."},
		}}
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth, Tools: tools, Logger: o.invOpts.Logger,
		Observer: o.observer, RateLimiter: o.limiter})
	require.NoError(t, err)
	f.inv, f.ep = inv, ep
	return f
}

// search finds the caller's own documents whose title contains the query.
func (f *toolsFixture) search(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
	f.mu.Lock()
	err := f.searchErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []inventory.SearchHit
	for _, e := range f.store.entries[req.Principal.Subject] {
		if strings.Contains(e.Name, req.Query) && len(out) < req.Limit {
			out = append(out, inventory.SearchHit{URI: e.URI, Name: e.Name})
		}
	}
	return out, nil
}

// era is a protocol version to call in: "2026-07-28" or a legacy one.
type era string

const (
	eraModern era = "2026-07-28"
	eraLegacy era = "2025-11-25"
	eraOld    era = "2025-03-26" // no structuredContent, titles or output schemas
)

var bothEras = []era{eraModern, eraLegacy}

// post sends one request as caller (nil: anonymous) in era.
func (f *toolsFixture) post(t testing.TB, caller *principal.Principal, e era, method string, params map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	var body string
	hdr := map[string]string{}
	if e == eraModern {
		body, hdr = modern(1, method, params)
		if name, ok := params["name"].(string); ok && method == "tools/call" {
			hdr["Mcp-Name"] = name
		}
	} else {
		body = legacy(1, method, params)
		hdr["MCP-Protocol-Version"] = string(e)
	}
	return f.raw(t, caller, body, hdr)
}

func (f *toolsFixture) raw(t testing.TB, caller *principal.Principal, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	if caller != nil {
		ctx, err := principal.NewContext(r.Context(), *caller)
		require.NoError(t, err)
		r = r.WithContext(ctx)
	}
	w := httptest.NewRecorder()
	f.ep.ServeHTTP(w, r)
	return w
}

// toolResult is a decoded CallToolResult.
type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Resource *struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
			Blob     string `json:"blob"`
		} `json:"resource"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	TTLMs             *int            `json:"ttlMs"`
	CacheScope        string          `json:"cacheScope"`
}

// callTool calls a tool and returns its result; the call must not be a
// protocol error.
func (f *toolsFixture) callTool(t testing.TB, caller *principal.Principal, e era, name string, args any) toolResult {
	t.Helper()
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	w := f.post(t, caller, e, "tools/call", params)
	require.Equal(t, 200, w.Code, w.Body.String())
	r := decode(t, w)
	require.Nil(t, r.Error, w.Body.String())
	var res toolResult
	require.NoError(t, json.Unmarshal(r.Result, &res), w.Body.String())
	return res
}

// listTools returns the tool names tools/list shows caller.
func (f *toolsFixture) listTools(t testing.TB, caller *principal.Principal, e era) ([]string, json.RawMessage) {
	t.Helper()
	w := f.post(t, caller, e, "tools/list", nil)
	require.Equal(t, 200, w.Code, w.Body.String())
	r := decode(t, w)
	require.Nil(t, r.Error, w.Body.String())
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &res))
	names := []string{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, r.Result
}

// listPage is list_resources' structured result.
type listPage struct {
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
	NextCursor string `json:"nextCursor"`
}

// walkTools calls list_resources to the end and returns the URIs.
func (f *toolsFixture) walkTools(t testing.TB, caller *principal.Principal, e era) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 1000)
		args := map[string]any{}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := f.callTool(t, caller, e, mcphttp.ToolListResources, args)
		require.False(t, res.IsError, res.Content)
		require.Len(t, res.Content, 1)
		var p listPage
		require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &p), "the text is the page's JSON")
		if e != eraOld {
			require.JSONEq(t, res.Content[0].Text, string(res.StructuredContent))
		}
		for _, r := range p.Resources {
			uris = append(uris, r.URI)
		}
		if p.NextCursor == "" {
			return uris
		}
		cursor = p.NextCursor
	}
}

// walkResources lists resources/list to the end and returns the URIs.
func (f *toolsFixture) walkResources(t testing.TB, caller *principal.Principal, e era) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 1000)
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		w := f.post(t, caller, e, "resources/list", params)
		r := decode(t, w)
		require.Nil(t, r.Error, w.Body.String())
		var p listPage
		require.NoError(t, json.Unmarshal(r.Result, &p))
		for _, res := range p.Resources {
			uris = append(uris, res.URI)
		}
		if p.NextCursor == "" {
			return uris
		}
		cursor = p.NextCursor
	}
}

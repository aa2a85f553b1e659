package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

const testResource = mcptest.Resource

// docStore is an in-memory keyset source: each subject's documents sorted
// by key (the shape of mcptest.Store, with entries the fixture can
// rename).
type docStore struct {
	mu      sync.Mutex
	docs    map[string][]doc
	entries map[string][]inventory.Entry // the same documents as list entries
}

type doc struct{ key, id, uri, title string }

func newDocStore() *docStore {
	return &docStore{docs: map[string][]doc{}, entries: map[string][]inventory.Entry{}}
}

func (s *docStore) add(subject string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := len(s.docs[subject])
	for i := k; i < k+n; i++ {
		id := fmt.Sprintf("%s-%04d", subject, i)
		d := doc{key: fmt.Sprintf("k%06d", i), id: id, uri: "docs://documents/" + id, title: "Document " + id}
		s.docs[subject] = append(s.docs[subject], d)
		s.entries[subject] = append(s.entries[subject], inventory.Entry{Key: d.key, URI: d.uri, Name: d.title, MIMEType: "text/plain"})
	}
}

func (s *docStore) list(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.entries[req.Principal.Subject]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	return inventory.Page{Entries: all[i:end:end], HasMore: end < len(all)}, nil
}

func (s *docStore) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.docs[req.Principal.Subject] {
		if d.id == req.Params["id"] {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "Contents of " + d.title}}, nil
		}
	}
	return nil, inventory.ErrNotFound
}

// fixture is an endpoint with the tools part, over a docStore (alice 12
// documents, bob 3), searchable by title; principals come from the
// request context, as with authentication middleware of the service's
// own.
type fixture struct {
	inv   *inventory.Inventory
	ep    *mcphttp.Endpoint
	part  *tools.Part
	store *docStore
	logs  *syncBuffer
	// searchErr makes the search callback fail.
	searchErr error
	mu        sync.Mutex
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer = logbuf.Buffer

type fixtureOptions struct {
	invOpts inventory.Options
	// builtin are the built-in tools' options; nil: read_document and
	// read_report.
	builtin *tools.BuiltinOptions
	// extra are tools of one's own, after the built-in ones.
	extra []tools.Tool
	big   int // with a non-zero big, every document is that many bytes of text, with a long title
	// maxBytes is the endpoint's MaxResultBytes.
	maxBytes int
	// parts go to the endpoint before the tools part.
	parts []mcphttp.Part
}

var (
	alicePrincipal = &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
	bobPrincipal   = &principal.Principal{Subject: "bob", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: testResource}
)

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{store: newDocStore(), logs: &syncBuffer{}}
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
				es[i].Name = strings.Repeat(`"`, 500) + es[i].URI[len(es[i].URI)-4:]
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
	bo := o.builtin
	if bo == nil {
		bo = &tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{
			"documents": {Name: "read_document"},
			"reports":   {Name: "read_report", Description: "A yearly report."},
		}}
	}
	builtin, err := tools.Builtin(inv, *bo)
	require.NoError(t, err)
	part, err := tools.New(append(builtin, o.extra...)...)
	require.NoError(t, err)
	f.inv, f.part = inv, part
	f.ep = newEndpoint(t, inv, o.maxBytes, o.invOpts.Logger, append(o.parts, part)...)
	return f
}

// newEndpoint is an endpoint over inv whose Authenticator only answers
// challenges: callers come from the context.
func newEndpoint(t testing.TB, inv *inventory.Inventory, maxBytes int, log *slog.Logger, parts ...mcphttp.Part) *mcphttp.Endpoint {
	t.Helper()
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: challengeOnly(t), MaxResultBytes: maxBytes, Logger: log}, parts...)
	require.NoError(t, err)
	return ep
}

func challengeOnly(t testing.TB) *authn.Authenticator {
	t.Helper()
	a, err := authn.NewAuthenticator(nil, authn.Options{Resource: testResource, Scopes: []string{"docs:read"}})
	require.NoError(t, err)
	return a
}

// search finds the caller's own documents whose title contains the query.
func (f *fixture) search(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
	f.mu.Lock()
	err := f.searchErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
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
func (f *fixture) post(t testing.TB, caller *principal.Principal, e era, method string, params map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	return post(t, f.ep, caller, e, method, params)
}

func post(t testing.TB, h http.Handler, caller *principal.Principal, e era, method string, params map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	var body string
	hdr := map[string]string{}
	if e == eraModern {
		body, hdr = mcptest.Modern(1, method, params)
	} else {
		body = mcptest.Legacy(1, method, params)
		hdr["MCP-Protocol-Version"] = string(e)
	}
	return raw(t, h, caller, body, hdr)
}

func (f *fixture) raw(t testing.TB, caller *principal.Principal, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	return raw(t, f.ep, caller, body, hdr)
}

func raw(t testing.TB, h http.Handler, caller *principal.Principal, body string, hdr map[string]string) *httptest.ResponseRecorder {
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
	h.ServeHTTP(w, r)
	return w
}

func decode(t testing.TB, w *httptest.ResponseRecorder) mcptest.RPC {
	t.Helper()
	return mcptest.Decode(t, w)
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
			Text     string `json:"text"`
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
func (f *fixture) callTool(t testing.TB, caller *principal.Principal, e era, name string, args any) toolResult {
	t.Helper()
	return callTool(t, f.ep, caller, e, name, args)
}

func callTool(t testing.TB, h http.Handler, caller *principal.Principal, e era, name string, args any) toolResult {
	t.Helper()
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	w := post(t, h, caller, e, "tools/call", params)
	require.Equal(t, 200, w.Code, w.Body.String())
	r := decode(t, w)
	require.Nil(t, r.Error, w.Body.String())
	var res toolResult
	require.NoError(t, json.Unmarshal(r.Result, &res), w.Body.String())
	return res
}

// listTools returns the tool names tools/list shows caller.
func (f *fixture) listTools(t testing.TB, caller *principal.Principal, e era) ([]string, json.RawMessage) {
	t.Helper()
	return listTools(t, f.ep, caller, e)
}

func listTools(t testing.TB, h http.Handler, caller *principal.Principal, e era) ([]string, json.RawMessage) {
	t.Helper()
	w := post(t, h, caller, e, "tools/list", nil)
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
func (f *fixture) walkTools(t testing.TB, caller *principal.Principal, e era) []string {
	t.Helper()
	var uris []string
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 1000)
		args := map[string]any{}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := f.callTool(t, caller, e, tools.NameListResources, args)
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
func (f *fixture) walkResources(t testing.TB, caller *principal.Principal, e era) []string {
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

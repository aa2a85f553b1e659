package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
)

const testResource = "https://mcp.example.com/mcp"

// docStore is an in-memory keyset source: each subject's documents sorted
// by key.
type docStore struct {
	mu      sync.Mutex
	docs    map[string][]doc
	entries map[string][]inventory.Entry // the same documents as list entries
	// seen, when set, gets the context of every List and Read call.
	seen func(context.Context)
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

func (s *docStore) list(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen != nil {
		s.seen(ctx)
	}
	// A keyset lookup over entries built in advance: the page is a window
	// of the caller's sorted entries, found by binary search.
	all := s.entries[req.Principal.Subject]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	return inventory.Page{Entries: all[i:end:end], HasMore: end < len(all)}, nil
}

func (s *docStore) read(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen != nil {
		s.seen(ctx)
	}
	for _, d := range s.docs[req.Principal.Subject] {
		if d.id == req.Params["id"] {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "Contents of " + d.title}}, nil
		}
	}
	return nil, inventory.ErrNotFound
}

type fixture struct {
	issuer *testissuer.Issuer
	auth   *authn.Authenticator
	inv    *inventory.Inventory
	ep     *mcphttp.Endpoint
	store  *docStore
}

type fixtureOptions struct {
	noListSource bool
	origins      []string
	maxBody      int64
	pageSize     int
	observer     mcphttp.Observer
	limiter      *mcphttp.RateLimiter
	throttle     authn.Throttle
	maxPageBytes int
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	is, err := testissuer.New(testissuer.Options{Audience: testResource})
	require.NoError(t, err)
	t.Cleanup(is.Close)
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: is.ID(), Resource: testResource, JWKSURL: is.JWKSURL(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{
		Resource: testResource, Scopes: []string{"docs:read"}, Throttle: fo.throttle,
	})
	require.NoError(t, err)

	store := newDocStore()
	store.add("alice", 12)
	store.add("bob", 3)
	statics := []inventory.Resource{
		{URI: "test://static-text", Name: "static-text", Description: "A static text resource",
			MIMEType: "text/plain", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "This is the content of the static text resource.")},
		{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource",
			MIMEType: "image/png", Access: inventory.Public,
			Read: inventory.BlobReader("image/png", []byte("\x89PNG\r\n\x1a\n"))},
	}
	docs := inventory.Template{
		Name: "documents", Title: "Documents", Description: "The caller's own documents",
		URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{"docs:read"},
		Read: store.read,
	}
	if !fo.noListSource {
		docs.List = store.list
	}
	data := inventory.Template{
		Name: "template-data", URITemplate: "test://template/{id}/data", MIMEType: "application/json",
		Access: inventory.Public,
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			b, _ := json.Marshal(map[string]any{"id": req.Params["id"], "templateTest": true, "data": "Data for ID: " + req.Params["id"]})
			return []inventory.Contents{{URI: req.URI, MIMEType: "application/json", Text: string(b)}}, nil
		},
		Complete: map[string]inventory.CompleteFunc{
			"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
				var out []string
				for _, v := range []string{"123", "124", "200"} {
					if strings.HasPrefix(v, req.Value) {
						out = append(out, v)
					}
				}
				return inventory.Completion{Values: out}, nil
			},
		},
	}
	inv, err := inventory.New(statics, []inventory.Template{docs, data}, inventory.Options{PageSize: fo.pageSize, MaxPageBytes: fo.maxPageBytes})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{
		ServerInfo:     mcphttp.Implementation{Name: "fixture", Version: "1.0.0"},
		Instructions:   "Private documents.",
		Authenticator:  auth,
		AllowedOrigins: fo.origins,
		MaxBodyBytes:   fo.maxBody,
		Observer:       fo.observer,
		RateLimiter:    fo.limiter,
	})
	require.NoError(t, err)
	return &fixture{issuer: is, auth: auth, inv: inv, ep: ep, store: store}
}

// token mints an access token for subject with the given scopes.
func (f *fixture) token(t testing.TB, subject string, scopes ...string) string {
	t.Helper()
	if scopes == nil {
		scopes = []string{"docs:read"}
	}
	return f.issuer.Token(t, testissuer.Claims{Subject: subject, ClientID: "client-1", Scopes: scopes})
}

// request is one POST to the endpoint.
type request struct {
	query   string
	body    string
	token   string
	headers map[string]string
}

func (f *fixture) do(t testing.TB, rq request) *httptest.ResponseRecorder {
	t.Helper()
	target := "http://127.0.0.1:8080/mcp"
	if rq.query != "" {
		target += "?" + rq.query
	}
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(rq.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if rq.token != "" {
		r.Header.Set("Authorization", "Bearer "+rq.token)
	}
	for k, v := range rq.headers {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	f.ep.ServeHTTP(w, r)
	return w
}

// rpc is a decoded JSON-RPC response.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t testing.TB, w *httptest.ResponseRecorder) rpc {
	t.Helper()
	var r rpc
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r), "body: %s", w.Body.String())
	require.Equal(t, "2.0", r.JSONRPC)
	return r
}

// modern returns a 2026-07-28 request body and its headers.
func modern(id int, method string, params map[string]any) (string, map[string]string) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if uri, ok := params["uri"].(string); ok {
		h["Mcp-Name"] = uri
	}
	return string(b), h
}

func legacy(id int, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

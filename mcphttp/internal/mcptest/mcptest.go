// Package mcptest is the test fixture of mcphttp and its parts: an
// inventory over an in-memory keyset store, a real token issuer behind a
// JWK Set served over HTTP, an authn.Authenticator, an endpoint with the
// parts a test gives it, and helpers to send requests and read answers
// and event streams. It is linked into tests only.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/notify"
)

// Resource is the fixture's canonical resource URI.
const Resource = "https://mcp.example.com/mcp"

// Store is an in-memory keyset source: each subject's documents sorted by
// key.
type Store struct {
	mu      sync.Mutex
	docs    map[string][]Doc
	entries map[string][]inventory.Entry
	// Seen, when set, gets the context of every List and Read call.
	Seen func(context.Context)
}

// Doc is one document of the Store.
type Doc struct{ Key, ID, URI, Title string }

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{docs: map[string][]Doc{}, entries: map[string][]inventory.Entry{}}
}

// Add adds n documents of subject: ids subject-0000, subject-0001, ….
func (s *Store) Add(subject string, n int) { s.AddNamed(subject, subject, n) }

// AddNamed adds n documents to key (an identity key) with ids label-NNNN.
func (s *Store) AddNamed(key, label string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := len(s.docs[key])
	for i := k; i < k+n; i++ {
		id := fmt.Sprintf("%s-%04d", label, i)
		d := Doc{Key: fmt.Sprintf("k%06d", i), ID: id, URI: "docs://documents/" + id, Title: "Document " + id}
		s.docs[key] = append(s.docs[key], d)
		s.entries[key] = append(s.entries[key], inventory.Entry{Key: d.Key, URI: d.URI, Name: d.Title, MIMEType: "text/plain"})
	}
}

// List is the Store's ListFunc, keyed by the principal's subject.
func (s *Store) List(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	return s.ListKey(ctx, req.Principal.Subject, req)
}

// ListKey lists the documents of key.
func (s *Store) ListKey(ctx context.Context, key string, req inventory.ListRequest) (inventory.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Seen != nil {
		s.Seen(ctx)
	}
	all := s.entries[key]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	return inventory.Page{Entries: all[i:end:end], HasMore: end < len(all)}, nil
}

// Read is the Store's ReadFunc, keyed by the principal's subject.
func (s *Store) Read(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	return s.ReadKey(ctx, req.Principal.Subject, req)
}

// ReadKey reads a document of key.
func (s *Store) ReadKey(ctx context.Context, key string, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Seen != nil {
		s.Seen(ctx)
	}
	for _, d := range s.docs[key] {
		if d.ID == req.Params["id"] {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "Contents of " + d.Title, Title: d.Title}}, nil
		}
	}
	return nil, inventory.ErrNotFound
}

// Options configures a Fixture.
type Options struct {
	NoListSource bool
	PageSize     int
	// Origins are the browser origins the endpoint's guard allows.
	Origins []string
	// MaxBody is the endpoint's body limit (Limits.MaxBytes); 0: default.
	MaxBody int64
	// MaxResultBytes is the endpoint's; 0: default.
	MaxResultBytes int
	// Inventory, when set, adjusts the inventory options.
	Inventory func(*inventory.Options)
	// Endpoint, when set, adjusts the endpoint options.
	Endpoint func(*mcphttp.Options)
	// Templates are added after the fixture's own.
	Templates []inventory.Template
	// Throttle is the Authenticator's.
	Throttle authn.Throttle
	// DPoP configures the Authenticator's DPoP.
	DPoP dpop.Options
}

// Fixture is an endpoint over the Store, with a real issuer.
type Fixture struct {
	Issuer *testissuer.Issuer
	Auth   *authn.Authenticator
	Inv    *inventory.Inventory
	EP     *mcphttp.Endpoint
	Store  *Store
	Opts   mcphttp.Options // what EP was made with
}

// Inventory returns the fixture's statics and templates: two public
// statics, the caller's documents (a protected template with a List
// callback unless noList), and a public template with completion.
func Inventory(store *Store, noList bool, extra ...inventory.Template) ([]inventory.Resource, []inventory.Template) {
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
		Read: store.Read,
	}
	if !noList {
		docs.List = store.List
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
	return statics, append([]inventory.Template{docs, data}, extra...)
}

// New returns a Fixture whose endpoint has the parts given. alice has 12
// documents, bob 3.
func New(t testing.TB, o Options, parts ...mcphttp.Part) *Fixture {
	t.Helper()
	is, err := testissuer.New(testissuer.Options{Audience: Resource})
	require.NoError(t, err)
	t.Cleanup(is.Close)
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: Resource, JWKSURL: is.JWKSURL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{
		Resource: Resource, Scopes: []string{"docs:read"}, Throttle: o.Throttle, DPoP: o.DPoP,
	})
	require.NoError(t, err)
	store := NewStore()
	store.Add("alice", 12)
	store.Add("bob", 3)
	statics, templates := Inventory(store, o.NoListSource, o.Templates...)
	iopts := inventory.Options{PageSize: o.PageSize}
	if o.Inventory != nil {
		o.Inventory(&iopts)
	}
	inv, err := inventory.New(statics, templates, iopts)
	require.NoError(t, err)
	eopts := mcphttp.Options{
		ServerInfo:     mcphttp.Implementation{Name: "fixture", Version: "1.0.0"},
		Instructions:   "Private documents.",
		Authenticator:  auth,
		Limits:         jsonrpc.Limits{MaxBytes: o.MaxBody},
		MaxResultBytes: o.MaxResultBytes,
	}
	if o.Origins != nil {
		g, err := origin.New(o.Origins)
		require.NoError(t, err)
		eopts.Origins = g
	}
	if o.Endpoint != nil {
		o.Endpoint(&eopts)
	}
	ep, err := mcphttp.New(inv, eopts, parts...)
	require.NoError(t, err)
	return &Fixture{Issuer: is, Auth: auth, Inv: inv, EP: ep, Store: store, Opts: eopts}
}

// Token mints an access token for subject with the given scopes
// (docs:read when none), client client-1.
func (f *Fixture) Token(t testing.TB, subject string, scopes ...string) string {
	t.Helper()
	if scopes == nil {
		scopes = []string{"docs:read"}
	}
	return f.Issuer.Token(t, testissuer.Claims{Subject: subject, ClientID: "client-1", Scopes: scopes})
}

// Request is one POST.
type Request struct {
	Query      string
	Body       string
	Token      string            // a bearer token, or ""
	Headers    map[string]string // set (an empty value deletes)
	RemoteAddr string            // the caller's host:port, or httptest's
}

// Do serves rq with h in process.
func Do(t testing.TB, h http.Handler, rq Request) *httptest.ResponseRecorder {
	t.Helper()
	target := "http://127.0.0.1:8080/mcp"
	if rq.Query != "" {
		target += "?" + rq.Query
	}
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(rq.Body))
	if rq.RemoteAddr != "" {
		r.RemoteAddr = rq.RemoteAddr
	}
	setPostHeaders(r.Header, rq.Token)
	for k, v := range rq.Headers {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// setPostHeaders sets what every POST of a JSON-RPC call carries: its
// content type, the two types a client accepts, and token as a bearer
// token unless it is empty.
func setPostHeaders(h http.Header, token string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
}

// Do serves rq with the fixture's endpoint.
func (f *Fixture) Do(t testing.TB, rq Request) *httptest.ResponseRecorder {
	t.Helper()
	return Do(t, f.EP, rq)
}

// RPC is a decoded JSON-RPC response.
type RPC struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// Decode decodes a JSON-RPC response.
func Decode(t testing.TB, w *httptest.ResponseRecorder) RPC {
	t.Helper()
	return DecodeBytes(t, w.Body.Bytes())
}

// DecodeBytes decodes a JSON-RPC response body.
func DecodeBytes(t testing.TB, b []byte) RPC {
	t.Helper()
	var r RPC
	require.NoError(t, json.Unmarshal(b, &r), "body: %s", b)
	require.Equal(t, "2.0", r.JSONRPC)
	return r
}

// Modern returns a 2026-07-28 request body and its headers.
func Modern(id int, method string, params map[string]any) (string, map[string]string) {
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
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		h["Mcp-Name"] = name
	}
	return string(b), h
}

// Legacy returns a legacy-era request body.
func Legacy(id int, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// NewLegacyRequest returns a legacy-era (2025-11-25) POST of method,
// without params, to url, for a real HTTP client; with token as a bearer
// token unless it is empty.
func NewLegacyRequest(t testing.TB, url, method, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(Legacy(1, method, nil)))
	require.NoError(t, err)
	setPostHeaders(req.Header, token)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	return req
}

// Server is an endpoint behind a real HTTP server (for streams).
type Server struct {
	*Fixture
	Hub *notify.Hub
	Srv *httptest.Server
}

// Serve runs h behind an httptest.Server, closed (with hub) when the test
// ends.
func (f *Fixture) Serve(t testing.TB, h http.Handler, hub *notify.Hub) *Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		if hub != nil {
			hub.Close()
		}
		srv.Close()
	})
	return &Server{Fixture: f, Hub: hub, Srv: srv}
}

// Post sends a JSON-RPC body over HTTP.
func (s *Server) Post(t testing.TB, token, session, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.Srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	setPostHeaders(req.Header, token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.Srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

// Get opens a GET stream.
func (s *Server) Get(t testing.TB, token, session string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.Srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.Srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

// Stream is an open SSE response.
type Stream struct {
	Resp   *http.Response
	events chan Event
	done   chan struct{}
	// Of the SSE fields that are no message: the last id the stream gave
	// (a priming event's too: the client's Last-Event-ID) and the last
	// retry field.
	mu            sync.Mutex
	lastID, retry string
}

// Event is one SSE event: its id (empty without one) and data.
type Event struct{ ID, Data string }

// OpenStream reads an SSE response's events as they come.
func OpenStream(t testing.TB, resp *http.Response) *Stream {
	t.Helper()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &Stream{Resp: resp, events: make(chan Event, 100), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(resp.Body)
		var ev Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
				s.mu.Lock()
				s.lastID = ev.ID
				s.mu.Unlock()
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, "retry: "):
				s.mu.Lock()
				s.retry = strings.TrimPrefix(line, "retry: ")
				s.mu.Unlock()
			case line == "":
				if ev.Data != "" { // empty data (a priming event) dispatches nothing
					s.events <- ev
				}
				ev = Event{}
			}
		}
	}()
	return s
}

// Next returns the data of the next message event.
func (s *Stream) Next(t testing.TB) string { t.Helper(); return s.NextEvent(t).Data }

// NextEvent returns the next message event.
func (s *Stream) NextEvent(t testing.TB) Event {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return Event{}
	}
}

// TryNext returns the next message event if one has arrived, without
// waiting.
func (s *Stream) TryNext() (Event, bool) {
	select {
	case e := <-s.events:
		return e, true
	default:
		return Event{}, false
	}
}

// None asserts that nothing arrives for a short while.
func (s *Stream) None(t testing.TB) {
	t.Helper()
	select {
	case e := <-s.events:
		t.Fatalf("unexpected event %s", e.Data)
	case <-time.After(50 * time.Millisecond):
	}
}

// LastEventID returns the last SSE id the stream gave, of a message or
// not: what a client sends as Last-Event-ID when it reconnects.
func (s *Stream) LastEventID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastID
}

// Retry returns the last retry field the stream sent ("" for none).
func (s *Stream) Retry() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retry
}

// Close closes the stream and waits for its reader.
func (s *Stream) Close() { s.Resp.Body.Close(); <-s.done }

// Done is closed when the server ended the stream.
func (s *Stream) Done() <-chan struct{} { return s.done }

// WaitSubscribers waits until the hub has n subscriptions of subject.
func WaitSubscribers(t testing.TB, hub *notify.Hub, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for hub.Subscribers(subject) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d subscribers, want %d", subject, hub.Subscribers(subject), n)
		}
		time.Sleep(time.Millisecond)
	}
}

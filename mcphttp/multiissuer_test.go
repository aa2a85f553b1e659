package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

// multiFixture serves one inventory to two real issuers (their own keys,
// the same key ids), the same subject "alice" in both, over HTTP, with
// DPoP allowed. Documents are owned by identity key (Principal.Key).
type multiFixture struct {
	a, b     *testissuer.Issuer
	srv      *httptest.Server
	url      string // the MCP endpoint, also the resource
	inv      *inventory.Inventory
	hub      *notify.Hub
	dpopKey  *testissuer.ProofKey
	dpopJKT  string
	keyAlice map[*testissuer.Issuer]string
}

func newMultiFixture(t *testing.T) *multiFixture {
	t.Helper()
	f := &multiFixture{keyAlice: map[*testissuer.Issuer]string{}}
	var h http.Handler
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/mcp"
	f.a = testissuer.Start(t, testissuer.Options{Audience: f.url, UniqueKeys: true})
	f.b = testissuer.Start(t, testissuer.Options{Audience: f.url, UniqueKeys: true})
	mv, err := authn.NewMultiIssuerVerifier(context.Background(), authn.MultiIssuerOptions{Resource: f.url, JWT: []authn.JWTOptions{
		{Issuer: f.a.ID(), JWKSURL: f.a.JWKSURL()}, {Issuer: f.b.ID(), JWKSURL: f.b.JWKSURL()},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mv.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(mv, authn.CacheOptions{}), authn.Options{
		Resource: f.url, DPoP: authn.DPoPOptions{Mode: authn.DPoPAllowed},
	})
	require.NoError(t, err)

	store := newDocStore()
	for _, is := range []*testissuer.Issuer{f.a, f.b} {
		f.keyAlice[is] = principal.SubjectKey(is.ID(), "alice")
	}
	store.addNamed(f.keyAlice[f.a], "a-alice", 7) // alice of A: 7 documents
	store.addNamed(f.keyAlice[f.b], "b-alice", 3) // alice of B: 3
	f.hub = notify.New(notify.Options{})
	t.Cleanup(f.hub.Close)
	docs := inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		List: keyed(store.list), Read: keyedRead(store.read),
	}
	beta := inventory.Resource{URI: "test://beta", Name: "beta", MIMEType: "text/plain", Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta")}
	f.inv, err = inventory.New([]inventory.Resource{beta}, []inventory.Template{docs}, inventory.Options{
		PageSize: 2, Notifier: f.hub, Gates: []inventory.Gate{{Name: "beta"}},
	})
	require.NoError(t, err)
	ep, err := mcphttp.New(f.inv, mcphttp.Options{
		ServerInfo: mcphttp.Implementation{Name: "multi", Version: "1"}, Authenticator: auth,
		Notifications: f.hub, KeepAlive: time.Hour,
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", ep)
	h = mux
	f.dpopKey, err = testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	f.dpopJKT, err = f.dpopKey.Thumbprint()
	require.NoError(t, err)
	return f
}

// keyed makes the fixture's subject-keyed store serve identity keys: the
// application keys its data on Principal.Key.
func keyed(list inventory.ListFunc) inventory.ListFunc {
	return func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		req.Principal.Subject, req.Principal.Issuer = req.Principal.Key(), ""
		return list(ctx, req)
	}
}

func keyedRead(read inventory.ReadFunc) inventory.ReadFunc {
	return func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil {
			return nil, inventory.ErrNotFound
		}
		p := *req.Principal
		p.Subject, p.Issuer = p.Key(), ""
		req.Principal = &p
		return read(ctx, req)
	}
}

// call posts a legacy JSON-RPC body as alice of is, with a DPoP-bound
// token and a proof when dpop is set.
func (f *multiFixture) call(t *testing.T, is *testissuer.Issuer, dpop bool, session, body string) *http.Response {
	t.Helper()
	var key *testissuer.ProofKey
	if dpop {
		key = f.dpopKey
	}
	return f.callWith(t, is, key, session, body)
}

// callWith is call with a token bound to key (nil: a bearer token).
func (f *multiFixture) callWith(t *testing.T, is *testissuer.Issuer, key *testissuer.ProofKey, session, body string) *http.Response {
	t.Helper()
	c := testissuer.Claims{Subject: "alice"}
	dpop := key != nil
	if dpop {
		jkt, err := key.Thumbprint()
		require.NoError(t, err)
		c.DPoPThumbprint = jkt
	}
	tok := is.Token(t, c)
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if dpop {
		proof, err := key.Sign(testissuer.Proof{Method: http.MethodPost, URL: f.url, Token: tok})
		require.NoError(t, err)
		req.Header.Set("Authorization", "DPoP "+tok)
		req.Header.Set("DPoP", proof)
	} else {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

func (f *multiFixture) list(t *testing.T, is *testissuer.Issuer, dpop bool, cursor string) (uris []string, next string, errCode int64) {
	t.Helper()
	var key *testissuer.ProofKey
	if dpop {
		key = f.dpopKey
	}
	return f.listWith(t, is, key, cursor)
}

func (f *multiFixture) listWith(t *testing.T, is *testissuer.Issuer, key *testissuer.ProofKey, cursor string) (uris []string, next string, errCode int64) {
	t.Helper()
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	resp := f.callWith(t, is, key, "", legacy(1, "resources/list", params))
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "WWW-Authenticate: %v", resp.Header.Values("WWW-Authenticate"))
	var r rpc
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	if r.Error != nil {
		return nil, "", r.Error.Code
	}
	var page struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &page))
	for _, res := range page.Resources {
		uris = append(uris, res.URI)
	}
	return uris, page.NextCursor, 0
}

func (f *multiFixture) walk(t *testing.T, is *testissuer.Issuer, dpop bool) []string {
	t.Helper()
	var all []string
	cursor := ""
	for range 20 {
		uris, next, code := f.list(t, is, dpop, cursor)
		require.Zero(t, code)
		all = append(all, uris...)
		if next == "" {
			return all
		}
		cursor = next
	}
	t.Fatal("no end")
	return nil
}

// Two issuers, the same subject: separate lists (with and without DPoP),
// cursors of one refused for the other, grants and notifications for one
// never reaching the other, and sessions owned by one unusable by the other.
func TestSameSubjectOfTwoIssuers(t *testing.T) {
	f := newMultiFixture(t)
	ka, kb := f.keyAlice[f.a], f.keyAlice[f.b]
	prefixA, prefixB := "docs://documents/a-alice", "docs://documents/b-alice"

	// Separate inventories.
	for _, dpop := range []bool{false, true} {
		listA, listB := f.walk(t, f.a, dpop), f.walk(t, f.b, dpop)
		require.Len(t, listA, 7, "dpop %v", dpop)
		require.Len(t, listB, 3)
		for _, u := range listA {
			assert.True(t, strings.HasPrefix(u, prefixA), u)
		}
		for _, u := range listB {
			assert.True(t, strings.HasPrefix(u, prefixB), u)
		}
	}
	// Cursors: A's continues for A (also with DPoP: the proof key is not
	// part of the identity), never for B.
	_, cursorA, _ := f.list(t, f.a, false, "")
	require.NotEmpty(t, cursorA)
	_, _, code := f.list(t, f.a, true, cursorA)
	assert.Zero(t, code, "the same identity continues with a DPoP-bound token")
	// A new key (a refreshed token bound to another key) within one
	// traversal: the same identity goes on; the key is not the identity.
	other, err := testissuer.NewProofKey(testissuer.Ed25519)
	require.NoError(t, err)
	_, cursorK1, _ := f.list(t, f.a, true, "")
	_, _, code = f.listWith(t, f.a, other, cursorK1)
	assert.Zero(t, code, "a token of the same identity bound to another key continues")
	_, _, code = f.listWith(t, f.b, other, cursorK1)
	assert.Equal(t, int64(-32602), code, "another identity with any key does not")
	_, _, code = f.list(t, f.b, false, cursorA)
	assert.Equal(t, int64(-32602), code, "alice of B cannot continue alice of A's traversal")
	_, _, code = f.list(t, f.b, true, cursorA)
	assert.Equal(t, int64(-32602), code)

	// Grants: the gate is opened for alice of A only.
	ctx := context.Background()
	streamA := f.listen(t, f.a)
	defer streamA.close()
	streamB := f.listen(t, f.b)
	defer streamB.close()
	waitSubscribers(t, f.hub, ka, 1)
	waitSubscribers(t, f.hub, kb, 1)
	assert.Zero(t, f.hub.Subscribers("alice"), "no stream is keyed by the bare subject")
	changed, err := f.inv.Authorize(ctx, ka, "beta")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Contains(t, streamA.next(t), "notifications/resources/list_changed")
	streamB.none(t)
	assert.Contains(t, f.walk(t, f.a, false), "test://beta")
	assert.NotContains(t, f.walk(t, f.b, false), "test://beta")
	// inventory.Subjects policies compare identity keys too.
	pa := principal.Principal{Subject: "alice", Issuer: f.a.ID()}
	pb := principal.Principal{Subject: "alice", Issuer: f.b.ID()}
	pol := inventory.Subjects(ka)
	assert.True(t, pol(ctx, &pa))
	assert.False(t, pol(ctx, &pb))
	assert.False(t, inventory.Subjects("alice")(ctx, &pa), "a bare subject names no caller of a multi-issuer server")

	// Notifications published to B's alice reach B's stream only.
	f.hub.ListChanged(ctx, kb)
	assert.Contains(t, streamB.next(t), "notifications/resources/list_changed")
	streamA.none(t)

	// Sessions: A's alice's session is not B's alice's.
	resp := f.call(t, f.a, true, "", legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp = f.call(t, f.a, false, sid, legacy(2, "ping", nil))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the same identity, a Bearer token this time")
	resp = f.call(t, f.b, true, sid, legacy(3, "ping", nil))
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another issuer's alice")
}

// listen opens a modern subscriptions/listen stream as alice of is.
func (f *multiFixture) listen(t *testing.T, is *testissuer.Issuer) *stream {
	t.Helper()
	body, hdr := modern(9, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", "Bearer "+is.Token(t, testissuer.Claims{Subject: "alice"}))
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	s := openStream(t, resp)
	require.Contains(t, s.next(t), "subscriptions/acknowledged")
	return s
}

// addNamed adds n documents owned by key, named after label.
func (s *docStore) addNamed(key, label string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		id := fmt.Sprintf("%s-%04d", label, i)
		d := doc{key: fmt.Sprintf("k%06d", i), id: id, uri: "docs://documents/" + id, title: "Document " + id}
		s.docs[key] = append(s.docs[key], d)
		s.entries[key] = append(s.entries[key], inventory.Entry{Key: d.key, URI: d.uri, Name: d.title, MIMEType: "text/plain"})
	}
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/principal"
)

type filteredListing struct {
	Documents []struct{ URI, Title string } `json:"documents"`
	Truncated bool                          `json:"truncated"`
}

// readFilteredListing reads a filtered listing over HTTP and requires
// success.
func (s *testServer) readFilteredListing(t *testing.T, token, uri string) filteredListing {
	t.Helper()
	out := s.read(t, token, uri)
	require.Nil(t, out.Error, uri)
	var rr readResult
	require.NoError(t, json.Unmarshal(out.Result, &rr))
	require.Len(t, rr.Contents, 1)
	assert.Equal(t, uri, rr.Contents[0].URI)
	assert.Equal(t, "application/json", rr.Contents[0].MIMEType)
	var fl filteredListing
	require.NoError(t, json.Unmarshal([]byte(rr.Contents[0].Text), &fl), rr.Contents[0].Text)
	return fl
}

func (fl filteredListing) titles() []string {
	var out []string
	for _, d := range fl.Documents {
		out = append(out, d.Title)
	}
	return out
}

func (fl filteredListing) uris() []string {
	var out []string
	for _, d := range fl.Documents {
		out = append(out, d.URI)
	}
	return out
}

// TestFilteredListing: docs://documents{?q} reads as the caller's
// documents matching q, or all of them without q; it is offered in
// resources/templates/list, and URIs outside the template are not found.
func TestFilteredListing(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")

	fl := s.readFilteredListing(t, alice, "docs://documents?q=quarterly")
	assert.ElementsMatch(t, []string{"Quarterly report Q1", "Quarterly report Q2", "Quarterly report Q3", "Quarterly report Q4"}, fl.titles())
	assert.False(t, fl.Truncated)
	for _, u := range fl.uris() {
		assert.Nil(t, s.read(t, alice, u).Error, "every URI of the listing reads: %s", u)
	}
	assert.Empty(t, s.readFilteredListing(t, bob, "docs://documents?q=quarterly").Documents, "alice's reports are alice's")
	assert.Equal(t, []string{"Recipe: lentil soup"}, s.readFilteredListing(t, alice, "docs://documents?q=lentil%20soup").titles(),
		"a percent-encoded space separates words")

	// Without q, or with an empty one: all of the caller's documents, in
	// listing order.
	all := s.readFilteredListing(t, alice, "docs://documents")
	assert.Len(t, all.Documents, 12)
	assert.Equal(t, s.firstDocs(t, "alice", 1)[0], strings.TrimPrefix(all.Documents[0].URI, documentPrefix))
	assert.Equal(t, all, s.readFilteredListing(t, alice, "docs://documents?q="))
	assert.Len(t, s.readFilteredListing(t, bob, "docs://documents").Documents, 3)

	// Sharing shows bob's budget to alice; unsharing takes it away.
	budget := s.firstDocs(t, "bob", 1)[0]
	res, body := s.api(t, bob, http.MethodPost, "/api/documents/"+budget+"/shares", `{"with":"alice"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, []string{"Bob's budget"}, s.readFilteredListing(t, alice, "docs://documents?q=budget").titles())
	assert.Len(t, s.readFilteredListing(t, alice, "docs://documents").Documents, 13)
	res, body = s.api(t, bob, http.MethodDelete, "/api/documents/"+budget+"/shares/alice", "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	assert.Empty(t, s.readFilteredListing(t, alice, "docs://documents?q=budget").Documents)

	// The template is offered; URIs it does not match are not found.
	_, out := s.post(t, alice, "resources/templates/list", nil)
	require.Nil(t, out.Error)
	assert.Contains(t, string(out.Result), `"uriTemplate":"docs://documents{?q}"`)
	for _, uri := range []string{"docs://documents?q=a&q=b", "docs://documents?tag=x", "docs://documents?q", "docs://documents/?q=x"} {
		out := s.read(t, alice, uri)
		require.NotNil(t, out.Error, uri)
		assert.Equal(t, int64(-32002), out.Error.Code, uri)
	}
	out = s.read(t, alice, "docs://documents?q="+strings.Repeat("a", inventory.MaxQueryLen+1))
	require.NotNil(t, out.Error, "a query over the search limit")

	// Reading needs a caller with the read scope, like the documents.
	res, _ = s.post(t, "", "resources/read", map[string]any{"uri": "docs://documents?q=quarterly"})
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// TestFilteredListingBounds: at most MaxFiltered documents (dave has 400),
// and within the byte limit: a limit too small for all of them keeps the
// first that fit and says truncated.
func TestFilteredListingBounds(t *testing.T) {
	s := start(t, nil)
	require.NoError(t, store.SeedMany(context.Background(), s.app.db, "dave", 400))
	dave := s.token(t, "dave")
	fl := s.readFilteredListing(t, dave, "docs://documents")
	assert.Len(t, fl.Documents, MaxFiltered)
	assert.True(t, fl.Truncated)
	fl = s.readFilteredListing(t, dave, "docs://documents?q=dave")
	assert.Len(t, fl.Documents, MaxFiltered)
	assert.True(t, fl.Truncated)
	for _, d := range fl.Documents {
		assert.True(t, strings.HasPrefix(d.Title, "dave's document "), d.Title)
	}

	// Small byte limits, and zero (the default): an inventory of its own
	// over the same store.
	caller := &principal.Principal{Subject: "dave", Scopes: []string{ScopeRead}}
	for _, limit := range []int{4096, 8192, 0} {
		tmpl := FilteredDocumentsTemplate(s.app.db, limit)
		inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
		require.NoError(t, err)
		for _, uri := range []string{"docs://documents", "docs://documents?q=document"} {
			contents, err := inv.Read(context.Background(), caller, uri)
			require.NoError(t, err)
			require.Len(t, contents, 1)
			var fl filteredListing
			require.NoError(t, json.Unmarshal([]byte(contents[0].Text), &fl))
			escaped := len(jsonrpc.AppendString(nil, contents[0].Text))
			budget := limit
			if budget == 0 {
				budget = mcphttp.DefaultMaxResultBytes // what zero means
			}
			assert.LessOrEqual(t, escaped+filteredReserve+len(uri), budget, "%s at %d", uri, limit)
			assert.True(t, fl.Truncated)
			if limit > 0 {
				assert.Less(t, len(fl.Documents), MaxFiltered, "%s at %d: cut by bytes", uri, limit)
				assert.NotEmpty(t, fl.Documents)
			}
		}
	}
}

// TestFilteredListingFitsTheEndpoint: through an endpoint with a small
// byte limit, the longest request id and a long query, the read answers
// (no internal error for a result over the limit) within the limit.
func TestFilteredListingFitsTheEndpoint(t *testing.T) {
	s := start(t, nil)
	// Titles that grow most on the wire: quotes, escaped in the listing's
	// JSON and again in the read result's string; clipped to 512.
	title := strings.Repeat(`"quoted" \`, 60)
	for i := range 120 {
		_, err := s.app.db.Create(context.Background(), store.NewDocument{Owner: "erin", Title: fmt.Sprintf("%03d %s", i, title), MIMEType: "text/plain"})
		require.NoError(t, err)
	}
	caller := principal.Principal{Subject: "erin", Scopes: []string{ScopeRead}}
	id := strings.Repeat("i", 254) // a 256-byte JSON string: the longest id
	for _, limit := range []int{16384, 20000} {
		inv, err := inventory.New(nil, []inventory.Template{FilteredDocumentsTemplate(s.app.db, limit)}, inventory.Options{})
		require.NoError(t, err)
		ep, err := mcphttp.New(inv, mcphttp.Options{MaxResultBytes: limit})
		require.NoError(t, err)
		for _, uri := range []string{"docs://documents", "docs://documents?q=" + strings.Repeat("quoted%20", 110) + "quoted"} {
			body := `{"jsonrpc":"2.0","id":"` + id + `","method":"resources/read","params":{"uri":"` + uri + `"}}`
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			ctx, err := principal.NewContext(req.Context(), caller)
			require.NoError(t, err)
			w := httptest.NewRecorder()
			ep.ServeHTTP(w, req.WithContext(ctx))
			require.Equal(t, http.StatusOK, w.Code)
			var out rpcResponse
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
			require.Nil(t, out.Error, "%s at %d", uri, limit)
			assert.LessOrEqual(t, w.Body.Len(), limit, "%s at %d", uri, limit)
			var rr readResult
			require.NoError(t, json.Unmarshal(out.Result, &rr))
			var fl filteredListing
			require.NoError(t, json.Unmarshal([]byte(rr.Contents[0].Text), &fl))
			assert.NotEmpty(t, fl.Documents)
			assert.Less(t, len(fl.Documents), MaxFiltered, "cut by bytes")
			assert.True(t, fl.Truncated)
		}
	}
}

// TestFilteredListingIsolationProperty: after random shares and unshares
// among four users, each user's filtered listings (with and without a
// query) hold exactly the documents a model of the access table says they
// may see: never another user's.
func TestFilteredListingIsolationProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0xf11e))
	s := start(t, nil)
	users := []string{"alice", "bob", "carol", "dave"} // dave owns nothing
	tokens := map[string]string{}
	for _, u := range users {
		tokens[u] = s.token(t, u)
	}
	type doc struct{ id, owner string }
	var docs []doc
	visible := map[string]map[string]bool{} // user → document URIs
	for _, u := range users {
		visible[u] = map[string]bool{}
	}
	for owner, n := range map[string]int{"alice": 12, "bob": 3, "carol": 2} {
		for _, id := range s.firstDocs(t, owner, n) {
			docs = append(docs, doc{id, owner})
			visible[owner][documentPrefix+id] = true
		}
	}
	for range 40 {
		d := docs[r.IntN(len(docs))]
		g := users[r.IntN(len(users))]
		if g == d.owner {
			continue
		}
		if r.IntN(3) == 0 {
			res, body := s.api(t, tokens[d.owner], http.MethodDelete, "/api/documents/"+d.id+"/shares/"+g, "")
			require.Equal(t, http.StatusNoContent, res.StatusCode, body)
			delete(visible[g], documentPrefix+d.id)
		} else {
			res, body := s.api(t, tokens[d.owner], http.MethodPost, "/api/documents/"+d.id+"/shares", `{"with":"`+g+`"}`)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			visible[g][documentPrefix+d.id] = true
		}
	}
	for _, u := range users {
		var want []string
		for uri := range visible[u] {
			want = append(want, uri)
		}
		// Every seeded body says "A private document of OWNER."
		for _, uri := range []string{"docs://documents", "docs://documents?q=private", "docs://documents?q=private%20document"} {
			assert.ElementsMatch(t, want, s.readFilteredListing(t, tokens[u], uri).uris(), "%s reads %s", u, uri)
		}
	}
}

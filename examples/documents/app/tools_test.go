package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callTool calls a tool over HTTP and returns its first text item and
// whether it is a tool error.
func (s *testServer) callTool(t *testing.T, token, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, out := s.post(t, token, "tools/call", map[string]any{"name": name, "arguments": args})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Nil(t, out.Error)
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(out.Result, &r))
	require.Len(t, r.Content, 1)
	return r.Content[0].Text, r.IsError
}

type searchResults struct {
	Results []struct{ ID, Title, URL string } `json:"results"`
}

func (s *testServer) search(t *testing.T, token, query string) []string {
	t.Helper()
	text, isErr := s.callTool(t, token, "search", map[string]any{"query": query})
	require.False(t, isErr, text)
	var r searchResults
	require.NoError(t, json.Unmarshal([]byte(text), &r))
	var titles []string
	for _, h := range r.Results {
		titles = append(titles, h.Title)
		fetched, isErr := s.callTool(t, token, "fetch", map[string]any{"id": h.ID})
		require.False(t, isErr, "every hit can be fetched")
		var doc struct{ ID, Title, Text string }
		require.NoError(t, json.Unmarshal([]byte(fetched), &doc))
		assert.Equal(t, h.Title, doc.Title, "fetch reports the document's title")
		assert.NotEmpty(t, doc.Text)
	}
	return titles
}

// TestToolsSearchOwnAndShared: search finds the caller's own documents and
// those shared with it — by title and by body — and loses a document the
// moment it is unshared; bob's documents are never found by alice, and
// answer fetch like missing ones.
func TestToolsSearchOwnAndShared(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")

	assert.ElementsMatch(t, []string{"Quarterly report Q1", "Quarterly report Q2", "Quarterly report Q3", "Quarterly report Q4"},
		s.search(t, alice, "quarterly"))
	assert.Equal(t, []string{"Recipe: lentil soup"}, s.search(t, alice, "lentil"))
	assert.Empty(t, s.search(t, alice, "budget"), "bob's budget is bob's")
	assert.Equal(t, []string{"Bob's budget"}, s.search(t, bob, "budget"))
	assert.Empty(t, s.search(t, bob, "private document of alice"), "the body search is bob's documents only")

	// Bob shares his budget: alice finds it, by title and by body.
	budget := s.firstDocs(t, "bob", 1)[0]
	res, body := s.api(t, s.token(t, "bob"), http.MethodPost, "/api/documents/"+budget+"/shares", `{"with":"alice"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, []string{"Bob's budget"}, s.search(t, alice, "budget"))
	assert.Equal(t, []string{"Bob's budget"}, s.search(t, alice, "private document of bob"))

	res, body = s.api(t, s.token(t, "bob"), http.MethodDelete, "/api/documents/"+budget+"/shares/alice", "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	assert.Empty(t, s.search(t, alice, "budget"), "unshared: gone at once")
	text, isErr := s.callTool(t, alice, "fetch", map[string]any{"id": documentPrefix + budget})
	assert.True(t, isErr)
	missing, _ := s.callTool(t, alice, "fetch", map[string]any{"id": documentPrefix + "no-such-document"})
	assert.Equal(t, missing, text, "like a missing one")

	text, _ = s.callTool(t, alice, "fetch", map[string]any{"id": documentPrefix + s.firstDocs(t, "alice", 1)[0]})
	assert.Contains(t, text, `"text":"Quarterly report Q1\n\nA private document of alice.\n"`, "fetch gives the whole body")

	// read_document reads by id, with the same checks.
	mine := s.firstDocs(t, "alice", 1)[0]
	text, isErr = s.callTool(t, alice, ReadDocumentTool, map[string]any{"id": mine})
	assert.False(t, isErr)
	assert.True(t, strings.HasPrefix(text, "Quarterly report Q1"), text)
	_, isErr = s.callTool(t, alice, ReadDocumentTool, map[string]any{"id": budget})
	assert.True(t, isErr)
}

// TestToolsFetchAbout: fetch of the static about resource, whose contents
// carry no title, reports the resource's own title, not its URI.
func TestToolsFetchAbout(t *testing.T) {
	s := start(t, nil)
	text, isErr := s.callTool(t, s.token(t, "alice"), "fetch", map[string]any{"id": AboutURI})
	require.False(t, isErr, text)
	var doc struct{ ID, Title, Text string }
	require.NoError(t, json.Unmarshal([]byte(text), &doc))
	assert.Equal(t, AboutURI, doc.ID)
	assert.Equal(t, "About this server", doc.Title)
	assert.True(t, strings.HasPrefix(doc.Text, "# mcpkit documents"), doc.Text)
}

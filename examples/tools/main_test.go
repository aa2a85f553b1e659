package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/memstore"
)

// The service against a real JWK Set over HTTP: each caller sees the tools
// their scopes admit, adds notes only with notes:write, and counts, lists
// and reads only their own.
func TestOwnTools(t *testing.T) {
	jwks := http.NewServeMux() // the authorization server's JWK Set, over HTTP
	idp := httptest.NewServer(jwks)
	defer idp.Close()
	const resource = "http://127.0.0.1:8091/mcp" // the tokens' audience
	is, err := devissuer.New(idp.URL, resource, devissuer.Options{ClientID: "tools-test"})
	require.NoError(t, err)
	jwks.Handle(is.JWKSPath(), is.JWKSHandler())
	h, err := newService(context.Background(), memstore.New("notes://notes/{id}"), resource, is.Issuer(), is.JWKSURL())
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	token := func(sub string, scopes ...string) string {
		tok, err := is.Sign(sub, scopes, time.Hour)
		require.NoError(t, err)
		return tok
	}
	writer, reader, bob := token("alice", scopeRead, scopeWrite), token("alice", scopeRead), token("bob", scopeRead)
	call := func(tok, method string, params any) (int, map[string]any) {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		result, _ := out["result"].(map[string]any)
		return resp.StatusCode, result
	}
	toolNames := func(tok string) []string {
		_, res := call(tok, "tools/list", map[string]any{})
		var names []string
		for _, tl := range res["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		sort.Strings(names)
		return names
	}
	tool := func(tok, name string, args map[string]any) (int, string, bool) {
		code, res := call(tok, "tools/call", map[string]any{"name": name, "arguments": args})
		if res == nil {
			return code, "", false
		}
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		return code, text, res["isError"] == true
	}

	assert.Equal(t, []string{"add_note", "count_notes", "list_resources", "read_resource"}, toolNames(writer))
	assert.Equal(t, []string{"count_notes", "list_resources", "read_resource"}, toolNames(reader), "add_note needs notes:write")
	code, _, _ := tool(reader, "add_note", map[string]any{"title": "t", "text": "x"})
	assert.Equal(t, http.StatusForbidden, code, "a call without the scope gets the insufficient_scope challenge")

	var uris []string
	for _, title := range []string{"Groceries", "Ideas"} {
		code, uri, isErr := tool(writer, "add_note", map[string]any{"title": title, "text": title + " text"})
		require.Equal(t, http.StatusOK, code)
		require.False(t, isErr, uri)
		uris = append(uris, uri)
	}
	_, text, isErr := tool(writer, "add_note", map[string]any{"title": "bad\x00", "text": "x"})
	assert.True(t, isErr, text)

	_, count, _ := tool(reader, "count_notes", nil)
	assert.Equal(t, "2", count)
	_, count, _ = tool(bob, "count_notes", nil)
	assert.Equal(t, "0", count)
	// A title with a bidi control is stored (the tool refuses only
	// control characters); the list escapes it rather than failing on
	// every call (issue 35).
	_, text, isErr = tool(writer, "add_note", map[string]any{"title": "invoice_\u202Efdp.exe", "text": "x"})
	require.False(t, isErr, text)
	for range 2 {
		_, listed := call(reader, "resources/list", map[string]any{})
		require.Len(t, listed["resources"], 3, "the list still answers")
		var names []string
		for _, r := range listed["resources"].([]any) {
			names = append(names, r.(map[string]any)["name"].(string))
		}
		assert.ElementsMatch(t, []string{"Groceries", "Ideas", "invoice_\uFFFDfdp.exe"}, names)
	}
	_, read, isErr := tool(reader, "read_resource", map[string]any{"uri": uris[1]})
	assert.False(t, isErr)
	assert.Contains(t, read, "Ideas text")
	_, read, isErr = tool(bob, "read_resource", map[string]any{"uri": uris[1]})
	assert.True(t, isErr, "bob cannot read alice's note")
	assert.Equal(t, "Resource not found.", read)
}

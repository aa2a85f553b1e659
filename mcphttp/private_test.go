package mcphttp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type listResult struct {
	Resources []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	NextCursor *string `json:"nextCursor"`
}

// walk lists every page for token and returns the URIs in order.
func walk(t *testing.T, f *mcptest.Fixture, token string) []string {
	t.Helper()
	var uris []string
	var cursor *string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the traversal must end")
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(pages, "resources/list", params), Token: token, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
		require.Equal(t, 200, w.Code, w.Body.String())
		var res listResult
		require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if res.NextCursor == nil {
			return uris
		}
		require.NotEmpty(t, *res.NextCursor, "never an empty-string end marker")
		cursor = res.NextCursor
	}
}

func TestPrivateListing(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{PageSize: 5})
	alice := walk(t, f, f.Token(t, "alice"))
	bob := walk(t, f, f.Token(t, "bob"))
	require.Len(t, alice, 2+12, "statics and alice's 12 documents")
	require.Len(t, bob, 2+3)
	assert.Equal(t, []string{"test://static-text", "test://static-binary"}, alice[:2], "statics first")
	seen := map[string]bool{}
	for _, u := range alice {
		assert.False(t, seen[u], "duplicate %s", u)
		seen[u] = true
		assert.NotContains(t, u, "bob", "alice must never see bob's documents")
	}
	for _, u := range bob[2:] {
		assert.Contains(t, u, "bob")
	}
}

func TestCursorIsBoundToTheCaller(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{PageSize: 5})
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice})
	require.Equal(t, 200, w.Code)
	var res listResult
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	require.NotNil(t, res.NextCursor)

	// A18: alice's cursor replayed with bob's token.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "resources/list", map[string]any{"cursor": *res.NextCursor}), Token: bob})
	r := mcptest.Decode(t, w)
	require.NotNil(t, r.Error, w.Body.String())
	assert.Equal(t, int64(-32602), r.Error.Code)
	assert.JSONEq(t, `{"reason":"invalid"}`, string(r.Error.Data))

	// A19: the same subject with other scopes.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(3, "resources/list", map[string]any{"cursor": *res.NextCursor}), Token: f.Token(t, "alice", "docs:read", "extra")})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code)

	// A17: a tampered cursor.
	c := []byte(*res.NextCursor)
	c[len(c)/2] ^= 1
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(4, "resources/list", map[string]any{"cursor": string(c)}), Token: alice})
	r = mcptest.Decode(t, w)
	assert.Equal(t, int64(-32602), r.Error.Code)
	assert.JSONEq(t, `{"reason":"invalid"}`, string(r.Error.Data))
	assert.NotContains(t, w.Body.String(), string(c), "the cursor is not echoed")

	// The empty string is a cursor too (not "start over"): it is invalid.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(5, "resources/list", map[string]any{"cursor": ""}), Token: alice})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code)

	// The cursor still works for its owner.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(6, "resources/list", map[string]any{"cursor": *res.NextCursor}), Token: alice})
	require.Nil(t, mcptest.Decode(t, w).Error)
}

func TestReadsCheckAccessAgain(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	alice, bob := f.Token(t, "alice"), f.Token(t, "bob")
	read := func(token, uri string) (int, mcptest.RPC) {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": uri}), Token: token})
		if w.Code != 200 {
			return w.Code, mcptest.RPC{}
		}
		return w.Code, mcptest.Decode(t, w)
	}
	code, r := read(alice, "docs://documents/alice-0003")
	require.Equal(t, 200, code)
	assert.Contains(t, string(r.Result), "Contents of Document alice-0003")

	// Bob's document with alice's Token: not found, exactly like a missing one.
	_, r = read(alice, "docs://documents/bob-0001")
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32002), r.Error.Code)
	_, missing := read(alice, "docs://documents/nobody-0001")
	assert.Equal(t, r.Error.Code, missing.Error.Code)
	assert.Equal(t, r.Error.Message, missing.Error.Message)

	code, _ = read("", "docs://documents/alice-0003")
	assert.Equal(t, 401, code, "a protected template needs a caller")
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0003"}), Token: f.Token(t, "alice", "other")})
	assert.Equal(t, 403, w.Code)
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `scope="docs:read"`)

	code, r = read(bob, "test://static-binary")
	require.Equal(t, 200, code)
	var res struct {
		Contents []struct {
			URI, MIMEType, Blob string
			Text                *string
		} `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &res))
	require.Len(t, res.Contents, 1)
	assert.Equal(t, "iVBORw0KGgo=", res.Contents[0].Blob)
	assert.Nil(t, res.Contents[0].Text)
}

func TestTemplatesAndCompletion(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/templates/list", nil)})
	require.Equal(t, 200, w.Code, w.Body.String())
	var res struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
		} `json:"resourceTemplates"`
	}
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	var names []string
	for _, tpl := range res.ResourceTemplates {
		names = append(names, tpl.Name+" "+tpl.URITemplate)
	}
	assert.Equal(t, []string{"documents docs://documents/{id}", "template-data test://template/{id}/data"}, names)

	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "1"}})})
	require.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"completion":{"values":["123","124"],"total":2,"hasMore":false}}`, string(mcptest.Decode(t, w).Result))

	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": "1"}})})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code, "no prompts here")
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}})})
	assert.Equal(t, int64(-32602), mcptest.Decode(t, w).Error.Code, "argument missing")
}

// TestNoInternalDetailsLeak: a failing callback gives a generic -32603.
func TestListWithoutSourcesIsAnonymous(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{NoListSource: true})
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil)})
	require.Equal(t, 200, w.Code, "without list sources, listing keeps its old rules")
	var res listResult
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	assert.Len(t, res.Resources, 2)
	assert.False(t, strings.Contains(w.Body.String(), "docs://"))
}

// TestByteLimitIsExact: a response is never longer than the inventory's
// byte limit, and the limit is counted to the byte: the smallest limit
// at which a page holds k items leaves the same slack for every k (the
// room kept for the longest possible cursor, less the cursor sent), and
// one byte less holds k-1. In both protocol eras.
func TestByteLimitIsExact(t *testing.T) {
	// Entries of about 480 bytes, 100 a page: pages of 16 to 48 KB, above
	// the smallest limit New accepts.
	label := strings.Repeat("x", 200)
	list := func(t *testing.T, limit int, modernEra bool) (items, size int) {
		f := mcptest.New(t, mcptest.Options{PageSize: 100, MaxResultBytes: limit})
		f.Store.AddNamed("carol", label, 101)
		rq := mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: f.Token(t, "carol"), Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}
		if modernEra {
			rq.Body, rq.Headers = mcptest.Modern(1, "resources/list", nil)
		}
		w := f.Do(t, rq)
		var res listResult
		if r := mcptest.Decode(t, w); r.Error != nil {
			return 0, 0 // no room for an empty page with the longest cursor
		} else {
			require.NoError(t, json.Unmarshal(r.Result, &res), w.Body.String())
		}
		require.NotNil(t, res.NextCursor)
		require.LessOrEqual(t, w.Body.Len(), limit, "never over the limit")
		return len(res.Resources), w.Body.Len()
	}
	for _, modernEra := range []bool{false, true} {
		_, full := list(t, 1<<20, modernEra)
		slack := -1
		for k := 40; k <= 42; k++ {
			lo, hi := 17000, 4*full // the smallest limit holding k items is in (lo, hi]: 17000 holds fewer, and New accepts it
			for hi-lo > 1 {
				if mid := (lo + hi) / 2; func() bool { n, _ := list(t, mid, modernEra); return n >= k }() {
					hi = mid
				} else {
					lo = mid
				}
			}
			n, size := list(t, hi, modernEra)
			require.Equal(t, k, n, "modern %v", modernEra)
			if slack < 0 {
				slack = hi - size
			}
			assert.Equal(t, slack, hi-size, "k %d, modern %v: the same slack at every boundary", k, modernEra)
			n, _ = list(t, hi-1, modernEra)
			assert.Equal(t, k-1, n, "one byte less: item %d moves to the next page", k)
		}
	}
}

package mcphttp_test

import (
	"encoding/json"
	"strings"
	"testing"

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
func walk(t *testing.T, f *fixture, token string) []string {
	t.Helper()
	var uris []string
	var cursor *string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the traversal must end")
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		w := f.do(t, request{body: legacy(pages, "resources/list", params), token: token, headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
		require.Equal(t, 200, w.Code, w.Body.String())
		var res listResult
		require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
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
	f := newFixture(t, fixtureOptions{pageSize: 5})
	alice := walk(t, f, f.token(t, "alice"))
	bob := walk(t, f, f.token(t, "bob"))
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
	f := newFixture(t, fixtureOptions{pageSize: 5})
	alice, bob := f.token(t, "alice"), f.token(t, "bob")
	w := f.do(t, request{body: legacy(1, "resources/list", nil), token: alice})
	require.Equal(t, 200, w.Code)
	var res listResult
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
	require.NotNil(t, res.NextCursor)

	// A18: alice's cursor replayed with bob's token.
	w = f.do(t, request{body: legacy(2, "resources/list", map[string]any{"cursor": *res.NextCursor}), token: bob})
	r := decode(t, w)
	require.NotNil(t, r.Error, w.Body.String())
	assert.Equal(t, int64(-32602), r.Error.Code)
	assert.JSONEq(t, `{"reason":"invalid"}`, string(r.Error.Data))

	// A19: the same subject with other scopes.
	w = f.do(t, request{body: legacy(3, "resources/list", map[string]any{"cursor": *res.NextCursor}), token: f.token(t, "alice", "docs:read", "extra")})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code)

	// A17: a tampered cursor.
	c := []byte(*res.NextCursor)
	c[len(c)/2] ^= 1
	w = f.do(t, request{body: legacy(4, "resources/list", map[string]any{"cursor": string(c)}), token: alice})
	r = decode(t, w)
	assert.Equal(t, int64(-32602), r.Error.Code)
	assert.JSONEq(t, `{"reason":"invalid"}`, string(r.Error.Data))
	assert.NotContains(t, w.Body.String(), string(c), "the cursor is not echoed")

	// The empty string is a cursor too (not "start over"): it is invalid.
	w = f.do(t, request{body: legacy(5, "resources/list", map[string]any{"cursor": ""}), token: alice})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code)

	// The cursor still works for its owner.
	w = f.do(t, request{body: legacy(6, "resources/list", map[string]any{"cursor": *res.NextCursor}), token: alice})
	require.Nil(t, decode(t, w).Error)
}

func TestReadsCheckAccessAgain(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice, bob := f.token(t, "alice"), f.token(t, "bob")
	read := func(token, uri string) (int, rpc) {
		w := f.do(t, request{body: legacy(1, "resources/read", map[string]any{"uri": uri}), token: token})
		if w.Code != 200 {
			return w.Code, rpc{}
		}
		return w.Code, decode(t, w)
	}
	code, r := read(alice, "docs://documents/alice-0003")
	require.Equal(t, 200, code)
	assert.Contains(t, string(r.Result), "Contents of Document alice-0003")

	// Bob's document with alice's token: not found, exactly like a missing one.
	_, r = read(alice, "docs://documents/bob-0001")
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32002), r.Error.Code)
	_, missing := read(alice, "docs://documents/nobody-0001")
	assert.Equal(t, r.Error.Code, missing.Error.Code)
	assert.Equal(t, r.Error.Message, missing.Error.Message)

	code, _ = read("", "docs://documents/alice-0003")
	assert.Equal(t, 401, code, "a protected template needs a caller")
	w := f.do(t, request{body: legacy(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0003"}), token: f.token(t, "alice", "other")})
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
	f := newFixture(t, fixtureOptions{})
	w := f.do(t, request{body: legacy(1, "resources/templates/list", nil)})
	require.Equal(t, 200, w.Code, w.Body.String())
	var res struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
		} `json:"resourceTemplates"`
	}
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
	var names []string
	for _, tpl := range res.ResourceTemplates {
		names = append(names, tpl.Name+" "+tpl.URITemplate)
	}
	assert.Equal(t, []string{"documents docs://documents/{id}", "template-data test://template/{id}/data"}, names)

	w = f.do(t, request{body: legacy(1, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "1"}})})
	require.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"completion":{"values":["123","124"],"total":2,"hasMore":false}}`, string(decode(t, w).Result))

	w = f.do(t, request{body: legacy(1, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": "1"}})})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code, "no prompts here")
	w = f.do(t, request{body: legacy(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}})})
	assert.Equal(t, int64(-32602), decode(t, w).Error.Code, "argument missing")
}

// TestNoInternalDetailsLeak: a failing callback gives a generic -32603.
func TestListWithoutSourcesIsAnonymous(t *testing.T) {
	f := newFixture(t, fixtureOptions{noListSource: true})
	w := f.do(t, request{body: legacy(1, "resources/list", nil)})
	require.Equal(t, 200, w.Code, "without list sources, listing keeps its old rules")
	var res listResult
	require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
	assert.Len(t, res.Resources, 2)
	assert.False(t, strings.Contains(w.Body.String(), "docs://"))
}

// TestByteLimitIsExact: a response is never longer than the inventory's
// byte limit, and the limit is counted to the byte: the smallest limit
// at which a page holds k items leaves the same slack for every k (the
// room kept for the longest possible cursor, less the cursor sent), and
// one byte less holds k-1. In both protocol eras.
func TestByteLimitIsExact(t *testing.T) {
	list := func(t *testing.T, limit int, modernEra bool) (items, size int) {
		f := newFixture(t, fixtureOptions{pageSize: 10, maxPageBytes: limit})
		rq := request{body: legacy(1, "resources/list", nil), token: f.token(t, "alice"), headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}
		if modernEra {
			rq.body, rq.headers = modern(1, "resources/list", nil)
		}
		w := f.do(t, rq)
		var res listResult
		if r := decode(t, w); r.Error != nil {
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
		for k := 8; k <= 10; k++ {
			lo, hi := 1, 4*full // the smallest limit holding k items is in (lo, hi]
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

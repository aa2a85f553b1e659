package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
)

// Alice walks her listing to the end and reads everything in it; none of
// bob's documents appears, and his URIs, read with her token, fail exactly
// like a URI that does not exist. Run on both SQLite flavours.
func TestAliceSeesHerDocumentsOnly(t *testing.T) {
	for name, db := range map[string]string{"sqlite file": "", "sqlite memory": "sqlite::memory:"} {
		t.Run(name, func(t *testing.T) {
			s := start(t, func(c *Config) { c.DB = db; c.PageSize = 5 }) // several pages
			alice, bob := s.token(t, "alice"), s.token(t, "bob")

			aliceURIs, pages := s.walk(t, alice)
			assert.Equal(t, 3, pages, "13 resources at 5 per page")
			assert.Equal(t, AboutURI, aliceURIs[0], "static resources come first")
			aliceDocs := documentsOnly(aliceURIs)
			assert.Len(t, aliceDocs, 12)
			for _, uri := range aliceURIs {
				out := s.read(t, alice, uri)
				require.Nil(t, out.Error, uri)
				var rr readResult
				require.NoError(t, json.Unmarshal(out.Result, &rr))
				require.Len(t, rr.Contents, 1)
				assert.Equal(t, uri, rr.Contents[0].URI)
				if uri != AboutURI {
					assert.Contains(t, rr.Contents[0].Text, "private document of alice")
				}
			}

			bobURIs, _ := s.walk(t, bob)
			bobDocs := documentsOnly(bobURIs)
			assert.Len(t, bobDocs, 3)
			for _, u := range bobDocs {
				assert.NotContains(t, aliceDocs, u, "bob's document in alice's listing")
			}

			missing := s.read(t, alice, documentPrefix+"doesNotExist0000000000")
			require.NotNil(t, missing.Error)
			for _, uri := range bobDocs {
				out := s.read(t, alice, uri)
				require.NotNil(t, out.Error, "alice read bob's %s", uri)
				assert.Equal(t, missing.Error.Code, out.Error.Code, "same code as a missing document")
				assert.Equal(t, missing.Error.Message, out.Error.Message, "same message as a missing document")
				assert.JSONEq(t, `{"uri":"`+uri+`"}`, string(out.Error.Data))
				assert.Nil(t, s.read(t, bob, uri).Error, "bob reads his own")
			}
			assert.EqualValues(t, -32002, missing.Error.Code)
		})
	}
}

// Without a token: 401 with a resource_metadata URL whose document names
// the configured resource.
func TestNoTokenChallengeLeadsToMetadata(t *testing.T) {
	s := start(t, nil)
	res, _ := s.post(t, "", "resources/list", nil)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(res.Header.Get("WWW-Authenticate"))
	require.Len(t, m, 2, res.Header.Get("WWW-Authenticate"))
	assert.Equal(t, s.app.URL()+"/.well-known/oauth-protected-resource/mcp", m[1])
	for _, u := range []string{m[1], s.app.URL() + "/.well-known/oauth-protected-resource"} {
		res, body := get(t, u)
		require.Equal(t, http.StatusOK, res.StatusCode, u)
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			Scopes               []string `json:"scopes_supported"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &md))
		assert.Equal(t, s.app.Resource(), md.Resource)
		assert.Equal(t, s.app.URL()+"/mcp", md.Resource)
		assert.Equal(t, []string{s.app.URL() + "/dev"}, md.AuthorizationServers)
		assert.Equal(t, []string{ScopeRead, ScopeShare}, md.Scopes)
	}
	// The public page needs no token.
	assert.Nil(t, s.read(t, "", AboutURI).Error)
}

func cursorReason(t *testing.T, out rpcResponse) string {
	t.Helper()
	require.NotNil(t, out.Error)
	assert.EqualValues(t, -32602, out.Error.Code)
	var data struct {
		Reason string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal(out.Error.Data, &data))
	return data.Reason
}

// A tampered cursor, somebody else's cursor and garbage are all -32602
// "invalid"; the listing never restarts from page one.
func TestBadCursors(t *testing.T) {
	s := start(t, smallPages)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	next := s.list(t, alice, "").NextCursor
	require.NotEmpty(t, next)
	for name, tc := range map[string]struct{ token, cursor string }{
		"tampered":           {alice, tamper(next)},                   // A17
		"another caller's":   {bob, next},                             // A19: bound to alice
		"garbage":            {alice, "not-a-cursor"},                 // A17
		"truncated":          {alice, next[:len(next)-4]},             // A17
		"another process's":  {alice, "AQ" + strings.Repeat("A", 90)}, // unknown key
		"appended character": {alice, next + "A"},                     // A17
	} {
		t.Run(name, func(t *testing.T) {
			res, out := s.post(t, tc.token, "resources/list", map[string]any{"cursor": tc.cursor})
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "invalid", cursorReason(t, out))
		})
	}
	// The genuine cursor still works.
	assert.NotEmpty(t, s.list(t, alice, next).Resources)
}

// The walk-through printed at start works as printed: its tokens verify on
// the very first request, its URIs and its tampered cursor behave as the
// comments say, with the default page size (alice's resources on one page)
// and with small pages (the paging steps then page).
func TestWalkthroughCommands(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pageSize int // 0: the default
		paged    bool
	}{
		{"default page size: one page", 0, false},
		{"-page-size 5: several pages", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, func(c *Config) { c.PageSize = tc.pageSize })
			out := s.stdout.waitFor(t, "# 7.")
			val := func(re string) string {
				m := regexp.MustCompile(re).FindStringSubmatch(out)
				require.Len(t, m, 2, re)
				return m[1]
			}
			alice, bob := val(`(?m)^ALICE=(\S+)$`), val(`(?m)^BOB=(\S+)$`)
			assert.Equal(t, s.mcpURL(), val(`(?m)^MCP=(\S+)$`))
			aliceURI := val(`# 3\.[^\n]*\n[^\n]*\n[^\n]*"uri":"([^"]+)"`)
			bobURI := val(`# 5\.[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*"uri":"([^"]+)"`)
			tampered := val(`# 6\.(?s:.*?)"cursor":"([^"]+)"`)
			perPage := val(`# 1\. alice's documents, (\d+) per page`)

			// The very first request to this server.
			lr := s.list(t, alice, "")
			if tc.paged {
				assert.Equal(t, "5", perPage)
				assert.Len(t, lr.Resources, 5)
				assert.NotEmpty(t, lr.NextCursor, "step 1 says: look for nextCursor")
				assert.Contains(t, out, "a tampered cursor (one character of a real one changed)")
			} else {
				assert.Equal(t, strconv.Itoa(DefaultPageSize), perPage)
				assert.Len(t, lr.Resources, 13, "the about resource and alice's 12 documents")
				assert.Empty(t, lr.NextCursor, "step 1 says: all on one page")
				assert.Contains(t, out, "-page-size 5 to see paging")
			}
			assert.Nil(t, s.read(t, alice, aliceURI).Error)
			assert.EqualValues(t, -32002, s.read(t, alice, bobURI).Error.Code)
			assert.Nil(t, s.read(t, bob, bobURI).Error)
			_, resp := s.post(t, alice, "resources/list", map[string]any{"cursor": tampered})
			assert.Equal(t, "invalid", cursorReason(t, resp))
			assert.Contains(t, s.logs.String(), "DEVELOPMENT MODE")
			assert.Contains(t, s.logs.String(), "level=WARN")
		})
	}
}

// DevToken, the function behind "documents token USER": its token works
// (TestAliceSeesHerDocumentsOnly uses it); here, its failures.
func TestDevTokenErrors(t *testing.T) {
	_, err := DevToken(Config{DataDir: t.TempDir()}, "alice", time.Hour)
	assert.ErrorIs(t, err, ErrNoServer, "no server recorded before the first start")
	assert.ErrorContains(t, err, "-addr", "the message says what to do")
	_, err = DevToken(Config{Addr: DefaultAddr, DataDir: t.TempDir()}, "alice", time.Hour)
	assert.ErrorIs(t, err, devissuer.ErrNoKey, "no key before the first start")

	_, err = DevToken(Config{Issuer: "https://a.example", JWKSURL: "https://a.example/k", Resource: "https://m.example/mcp"}, "alice", time.Hour)
	assert.ErrorIs(t, err, ErrNotDevelopment)

	_, err = DevToken(Config{Addr: "127.0.0.1:0", DataDir: t.TempDir()}, "alice", time.Hour)
	var ce *ConfigError
	assert.ErrorAs(t, err, &ce)

	_, err = DevToken(Config{PageSize: 1000}, "alice", time.Hour)
	assert.ErrorAs(t, err, &ce)

	// A token for another server (other port, so other issuer and
	// audience) is refused by this one.
	s := start(t, nil)
	other, err := DevToken(Config{Addr: "127.0.0.1:1", DataDir: s.cfg.DataDir}, "alice", time.Hour)
	require.NoError(t, err)
	res, _ := s.post(t, other, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// Without -addr, DevToken mints for the server that recorded itself in the
// data directory at start (here on a free port, not the default address),
// and its token is accepted; a -resource that is not that server's is
// refused, and so is a data directory whose server never recorded itself
// (an older one, with its key only).
func TestDevTokenForTheRunningServer(t *testing.T) {
	s := start(t, nil)
	require.NotEqual(t, DefaultAddr, s.app.Addr())
	tok, err := DevToken(Config{DataDir: s.cfg.DataDir}, "alice", time.Hour)
	require.NoError(t, err)
	res, _ := s.post(t, tok, "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode, "the audience is this server's")

	tok, err = DevToken(Config{DataDir: s.cfg.DataDir, Resource: s.app.Resource()}, "alice", time.Hour)
	require.NoError(t, err, "the server's own resource, given")
	res, _ = s.post(t, tok, "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)

	_, err = DevToken(Config{DataDir: s.cfg.DataDir, Resource: "http://127.0.0.1:1/mcp"}, "alice", time.Hour)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "resource", ce.Flag)
	assert.Contains(t, ce.Problem, s.app.Resource(), "names the audience the server uses")

	require.NoError(t, os.Remove(filepath.Join(s.cfg.DataDir, serverFile)))
	_, err = DevToken(Config{DataDir: s.cfg.DataDir}, "alice", time.Hour)
	assert.ErrorIs(t, err, ErrNoServer, "a key alone says nothing of the server's address")
	tok, err = DevToken(Config{Addr: s.app.Addr(), DataDir: s.cfg.DataDir}, "alice", time.Hour)
	require.NoError(t, err, "an -addr given still works")
	res, _ = s.post(t, tok, "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)

	for _, damaged := range []string{
		`{"issuer":""}`,
		`not json`,
		`{"issuer":"http://127.0.0.1:1/dev","resource":"http://mcp.example.com/mcp"}`, // not what a development server records
	} {
		require.NoError(t, os.WriteFile(filepath.Join(s.cfg.DataDir, serverFile), []byte(damaged), 0o600))
		_, err = DevToken(Config{DataDir: s.cfg.DataDir}, "alice", time.Hour)
		assert.ErrorContains(t, err, "damaged", damaged)
	}
}

// A cursor is bound to the caller (subject, client, scopes, audience), not
// to one token: a fresh token of alice's continues her listing, one with
// other scopes does not (what the README says).
func TestCursorBoundToCallerNotToken(t *testing.T) {
	s := start(t, smallPages)
	old := s.token(t, "alice")
	first := s.list(t, old, "")
	require.NotEmpty(t, first.NextCursor)
	fresh := s.token(t, "alice")
	require.NotEqual(t, old, fresh, "another token (its own jti)")
	next := s.list(t, fresh, first.NextCursor)
	assert.NotEmpty(t, next.Resources, "a new token of the same caller continues")

	readOnly, err := s.app.dev.Sign("alice", []string{ScopeRead}, time.Hour)
	require.NoError(t, err)
	_, out := s.post(t, readOnly, "resources/list", map[string]any{"cursor": first.NextCursor})
	assert.Equal(t, "invalid", cursorReason(t, out), "other scopes: another caller")
}

// A server that cannot record itself (here the record's name is taken by a
// directory) still starts, and says that the token command needs -addr.
func TestServerRecordNotWritable(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, serverFile, "taken"), 0o700))
	s := start(t, func(c *Config) { c.DataDir = dir })
	assert.Contains(t, s.logs.String(), `will need -addr`)
	_, err := DevToken(Config{DataDir: dir}, "alice", time.Hour)
	assert.Error(t, err)
	tok, err := DevToken(Config{Addr: s.app.Addr(), DataDir: dir}, "alice", time.Hour)
	require.NoError(t, err)
	res, _ := s.post(t, tok, "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

func TestHealth(t *testing.T) {
	s := start(t, nil)
	res, body := get(t, s.app.URL()+"/healthz")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "ok\n", body)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))

	require.NoError(t, s.app.db.Close()) // the database goes away
	res, body = get(t, s.app.URL()+"/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotContains(t, body, "sql", "no internal error text in the response")
}

func TestRoutes(t *testing.T) {
	s := start(t, nil)
	// Notifications are on: GET and DELETE serve legacy sessions, and
	// need one (see notify_test.go); other methods are not allowed.
	for method, status := range map[string]int{
		http.MethodGet: http.StatusBadRequest, http.MethodDelete: http.StatusBadRequest,
		http.MethodPut: http.StatusMethodNotAllowed, http.MethodPatch: http.StatusMethodNotAllowed,
	} {
		req, err := http.NewRequest(method, s.mcpURL(), nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+s.token(t, "alice"))
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, status, res.StatusCode, method)
		if status == http.StatusMethodNotAllowed {
			assert.Equal(t, "GET, POST, DELETE", res.Header.Get("Allow"))
		}
	}
	res, body := get(t, s.app.URL()+"/dev/jwks.json")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"keys"`)
	res, body = get(t, s.app.URL()+"/.well-known/oauth-authorization-server/dev")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	var md map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &md))
	assert.Equal(t, s.app.URL()+"/dev", md["issuer"])
	assert.Equal(t, s.app.URL()+"/dev/jwks.json", md["jwks_uri"])
	res, _ = get(t, s.app.URL()+"/nowhere")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

// Completion suggests the caller's own ids only.
func TestCompletionOwnIDsOnly(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	complete := func(token, value string) []string {
		_, out := s.post(t, token, "completion/complete", map[string]any{
			"ref":      map[string]any{"type": "ref/resource", "uri": DocumentTemplate},
			"argument": map[string]any{"name": "id", "value": value},
		})
		require.Nil(t, out.Error)
		var cr struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		require.NoError(t, json.Unmarshal(out.Result, &cr))
		return cr.Completion.Values
	}
	aliceURIs, _ := s.walk(t, alice)
	var aliceIDs []string
	for _, u := range documentsOnly(aliceURIs) {
		aliceIDs = append(aliceIDs, strings.TrimPrefix(u, documentPrefix))
	}
	assert.ElementsMatch(t, aliceIDs, complete(alice, ""))
	assert.Equal(t, []string{aliceIDs[0]}, complete(alice, aliceIDs[0]))

	bobURIs, _ := s.walk(t, bob)
	bobID := strings.TrimPrefix(documentsOnly(bobURIs)[0], documentPrefix)
	assert.Empty(t, complete(alice, bobID), "bob's id is never suggested to alice")
	assert.Equal(t, []string{bobID}, complete(bob, bobID))
}

// With 10,000 documents, the full id of the caller's newest (the last of
// her listing) is completed, and a one-character prefix says there are
// more than a result carries: completion is a prefix query, not a scan of
// the first documents.
func TestCompletionWithManyDocuments(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	require.NoError(t, store.SeedMany(ctx, s.app.db, "alice", 10_000))
	var newest string
	for after := ""; ; {
		rows, err := s.app.db.List(ctx, "alice", after, store.MaxListLimit)
		require.NoError(t, err)
		if len(rows) == 0 {
			break
		}
		newest, after = rows[len(rows)-1].ID, rows[len(rows)-1].OrderKey
	}
	type completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	}
	complete := func(value string) completion {
		_, out := s.post(t, s.token(t, "alice"), "completion/complete", map[string]any{
			"ref":      map[string]any{"type": "ref/resource", "uri": DocumentTemplate},
			"argument": map[string]any{"name": "id", "value": value},
		})
		require.Nil(t, out.Error)
		var cr struct{ Completion completion }
		require.NoError(t, json.Unmarshal(out.Result, &cr))
		return cr.Completion
	}
	assert.Equal(t, completion{Values: []string{newest}, Total: 1}, complete(newest))
	many := complete(newest[:1])
	assert.Len(t, many.Values, inventory.MaxCompletionValues)
	assert.True(t, many.HasMore)
	for _, id := range many.Values {
		assert.True(t, strings.HasPrefix(id, newest[:1]), id)
	}
}

// Ids the store cannot hold are rejected before the store is asked.
func TestReadValidatesIDs(t *testing.T) {
	s := start(t, nil)
	alice := s.token(t, "alice")
	for _, uri := range []string{documentPrefix + "a%20b", documentPrefix + strings.Repeat("a", 65), documentPrefix + "a.b"} {
		out := s.read(t, alice, uri)
		require.NotNil(t, out.Error, uri)
		assert.EqualValues(t, -32602, out.Error.Code, uri)
	}
}

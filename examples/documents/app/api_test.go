package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// Bad input gets a fixed JSON error that names the problem, never the
// input nor an internal error; nothing changes and nobody is notified.
func TestAPIRejectsBadInput(t *testing.T) {
	s := start(t, nil)
	alice := s.token(t, "alice")
	id := s.firstDocs(t, "alice", 1)[0]
	shares := "/api/documents/" + id + "/shares"
	doc := "/api/documents/" + id
	badJSON := `{"error":"invalid_request","message":"the body must be one JSON object with the documented members"}`
	badGrantee := `{"error":"invalid_request","message":"\"with\" must name a user (1-256 bytes of printable UTF-8)"}`
	owner := `{"error":"invalid_request","message":"the owner always has access: nothing to share or unshare"}`

	for _, tc := range []struct {
		name, method, path, contentType, body string
		status                                int
		want                                  string
	}{
		{"no content type", http.MethodPost, shares, "-", `{"with":"bob"}`, 415, `{"error":"unsupported_media_type","message":"Content-Type must be application/json"}`},
		{"form content type", http.MethodPost, shares, "application/x-www-form-urlencoded", `with=bob`, 415, ""},
		{"JSON with charset", http.MethodPost, shares, "application/json; charset=utf-8", `{"with":"bob"}`, 200, ""},
		{"not JSON", http.MethodPost, shares, "", `{"with":`, 400, badJSON},
		{"array", http.MethodPost, shares, "", `[{"with":"bob"}]`, 400, badJSON},
		{"unknown member", http.MethodPost, shares, "", `{"with":"bob","role":"admin"}`, 400, badJSON},
		{"trailing data", http.MethodPost, shares, "", `{"with":"bob"} {"with":"carol"}`, 400, badJSON},
		{"with not a string", http.MethodPost, shares, "", `{"with":["bob"]}`, 400, badJSON},
		{"with missing", http.MethodPost, shares, "", `{}`, 400, badGrantee},
		{"with null", http.MethodPost, shares, "", `{"with":null}`, 400, badGrantee},
		{"null body", http.MethodPost, shares, "", `null`, 400, badGrantee},
		{"with empty", http.MethodPost, shares, "", `{"with":""}`, 400, badGrantee},
		{"with control character", http.MethodPost, shares, "", `{"with":"mal\nlory"}`, 400, badGrantee},
		{"with too long", http.MethodPost, shares, "", `{"with":"` + strings.Repeat("m", 257) + `"}`, 400, badGrantee},
		{"with the owner", http.MethodPost, shares, "", `{"with":"alice"}`, 400, owner},
		{"share request too large", http.MethodPost, shares, "", `{"with":"` + strings.Repeat("m", 5000) + `"}`, 413, `{"error":"too_large","message":"request body too large"}`},
		{"unshare the owner", http.MethodDelete, shares + "/alice", "-", "", 400, owner},
		{"body missing", http.MethodPut, doc, "", `{}`, 400, `{"error":"invalid_request","message":"\"body\" is required: the new text of the document"}`},
		{"body null", http.MethodPut, doc, "", `{"body":null}`, 400, ""},
		{"body with NUL", http.MethodPut, doc, "", `{"body":"a\u0000b"}`, 400, `{"error":"invalid_request","message":"\"body\" must be text without NUL characters"}`},
		{"body too large", http.MethodPut, doc, "", `{"body":"` + strings.Repeat("x", store.MaxBodyBytes+1) + `"}`, 413, `{"error":"too_large","message":"document body too large (at most 1 MiB)"}`},
		{"update request too large", http.MethodPut, doc, "", `{"body":"` + strings.Repeat(`\n`, maxUpdateRequestBytes/2) + `"}`, 413, `{"error":"too_large","message":"request body too large"}`},
		{"unknown route", http.MethodGet, "/api/nowhere", "-", "", 404, `{"error":"not_found","message":"no such API route"}`},
		{"wrong method", http.MethodGet, doc, "-", "", 405, `{"error":"method_not_allowed","message":"method not allowed on this route"}`},
		{"no user to unshare", http.MethodDelete, shares + "/", "-", "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.app.URL()+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+alice)
			switch tc.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tc.contentType)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var body json.RawMessage
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			res.Body.Close()
			assert.Equal(t, tc.status, res.StatusCode, string(body))
			if tc.want != "" {
				assert.JSONEq(t, tc.want, string(body))
			}
			assert.NotContains(t, string(body), "mal", "input is never echoed")
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assert.Equal(t, "private, max-age=0", res.Header.Get("Cache-Control"))
		})
	}
	assert.Contains(t, readText(t, s.read(t, alice, documentPrefix+id)), "private document of alice", "no update went through")
	readers, err := s.app.db.Readers(context.Background(), "alice", id)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob"}, readers, "only the one valid share went through")
}

// The API needs a valid token with documents:share: 401 without one (the
// same challenge as the MCP endpoint), 403 insufficient_scope with
// documents:read alone, which is all the MCP endpoint needs.
func TestAPIScopes(t *testing.T) {
	s := start(t, nil)
	id := s.firstDocs(t, "alice", 1)[0]
	readOnly, err := s.app.dev.Sign("alice", []string{ScopeRead}, time.Hour)
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		token  string
		status int
		chall  string
	}{
		"no token":      {"", http.StatusUnauthorized, `resource_metadata="` + s.app.URL() + `/.well-known/oauth-protected-resource/mcp"`},
		"invalid token": {readOnly[:len(readOnly)-4] + "AAAA", http.StatusUnauthorized, `error="invalid_token"`},
		"read scope":    {readOnly, http.StatusForbidden, `error="insufficient_scope", scope="documents:share"`},
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []struct{ method, path, body string }{
				{http.MethodPost, "/api/documents/" + id + "/shares", `{"with":"bob"}`},
				{http.MethodDelete, "/api/documents/" + id + "/shares/bob", ""},
				{http.MethodPut, "/api/documents/" + id, `{"body":"x"}`},
				{http.MethodGet, "/api/nowhere", ""},
			} {
				res, _ := s.api(t, tc.token, r.method, r.path, r.body)
				assert.Equal(t, tc.status, res.StatusCode, r.method+" "+r.path)
				assert.Contains(t, res.Header.Get("WWW-Authenticate"), tc.chall)
			}
		})
	}
	readers, err := s.app.db.Readers(context.Background(), "alice", id)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice"}, readers, "nothing was shared")

	// documents:read alone is enough for MCP: listing, reading, a session
	// and its stream.
	assert.Len(t, documentsOnly(s.walkURIs(t, readOnly)), 12)
	assert.Nil(t, s.read(t, readOnly, documentPrefix+id).Error)
	session := s.initialize(t, readOnly)
	s.openGET(t, readOnly, "alice", session, 1)
}

// A store failure is a 500 with a generic message; the cause goes to the
// log only.
func TestAPIInternalError(t *testing.T) {
	s := start(t, nil)
	alice := s.token(t, "alice")
	id := s.firstDocs(t, "alice", 1)[0]
	require.NoError(t, s.app.db.Close()) // the database goes away
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/documents/" + id + "/shares", `{"with":"bob"}`},
		{http.MethodPost, "/api/documents/" + id + "/shares", `{"with":"alice"}`},
		{http.MethodDelete, "/api/documents/" + id + "/shares/bob", ""},
		{http.MethodPut, "/api/documents/" + id, `{"body":"x"}`},
	} {
		res, body := s.api(t, alice, r.method, r.path, r.body)
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode, r.method)
		assert.JSONEq(t, `{"error":"internal","message":"internal error"}`, body)
	}
	assert.Contains(t, s.logs.String(), "share: store failed")
	assert.Contains(t, s.logs.String(), "update: store failed")
}

// User names travel percent-encoded in the unshare path: "/" and "|" (an
// Auth0-style subject) arrive intact.
func TestAPIUnshareEncodedUser(t *testing.T) {
	s := start(t, nil)
	alice := s.token(t, "alice")
	id := s.firstDocs(t, "alice", 1)[0]
	ctx := context.Background()
	for _, tc := range []struct{ user, path string }{
		{"auth0|5f7c/x", "auth0%7C5f7c%2Fx"},
		{"o'brien smith", "o%27brien%20smith"},
		{"100%", "100%25"},
	} {
		b, err := json.Marshal(map[string]string{"with": tc.user})
		require.NoError(t, err)
		res, body := s.api(t, alice, http.MethodPost, "/api/documents/"+id+"/shares", string(b))
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		readers, err := s.app.db.Readers(ctx, "alice", id)
		require.NoError(t, err)
		require.Contains(t, readers, tc.user)

		s.unshare(t, alice, id, tc.path)
		readers, err = s.app.db.Readers(ctx, "alice", id)
		require.NoError(t, err)
		assert.Equal(t, []string{"alice"}, readers, tc.user)
	}
}

// The REST API makes the MCP endpoint's Origin decision: a page on another
// origin cannot drive it with a user's token (403 before the token is even
// looked at), an allowed origin gets CORS, a non-browser client (no
// Origin) is unaffected.
func TestAPIOriginGuard(t *testing.T) {
	const app = "http://localhost:5173"
	s := start(t, func(c *Config) { c.AllowedOrigins = []string{app} })
	alice := s.token(t, "alice")
	id := s.firstDocs(t, "alice", 1)[0]
	share := func(origin string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, s.app.URL()+"/api/documents/"+id+"/shares", strings.NewReader(`{"with":"bob"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	res := share("https://evil.example")
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
	readers, err := s.app.db.Readers(context.Background(), "alice", id)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice"}, readers, "the refused share did not happen")

	res = share(app)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, app, res.Header.Get("Access-Control-Allow-Origin"))
	res = share("")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))

	// A preflight from the allowed origin is answered before authentication.
	req, _ := http.NewRequest(http.MethodOptions, s.app.URL()+"/api/documents/"+id, nil)
	req.Header.Set("Origin", app)
	req.Header.Set("Access-Control-Request-Method", http.MethodPut)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNoContent, res.StatusCode)
	assert.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "Authorization")
	assert.Contains(t, res.Header.Get("Access-Control-Allow-Methods"), http.MethodPut)
}

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/authntest"
)

// The quickstart against a real JWK Set over HTTP (authntest's, as a
// service's own tests would use): each caller lists and reads only their
// own notes, anonymous callers are challenged with the metadata URL the
// service serves.
func TestQuickstart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	is := authntest.Start(t, authntest.Options{Resource: base + "/mcp", ClientID: "quickstart-test"})
	jwt := is.JWTOptions()

	db, err := sql.Open("sqlite", "file:quickstart-test?mode=memory&cache=shared")
	require.NoError(t, err)
	defer db.Close()
	h, err := newService(context.Background(), db, base+"/mcp", jwt.Issuer, jwt.JWKSURL)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	token := func(sub string) string { return is.Token(sub, "notes:read") }
	call := func(tok, body string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp, out
	}

	resp, _ := call("", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := resp.Header.Get("WWW-Authenticate")
	mdURL := challenge[strings.Index(challenge, `resource_metadata="`)+len(`resource_metadata="`):]
	mdURL = mdURL[:strings.IndexByte(mdURL, '"')]
	md, err := srv.Client().Get(mdURL)
	require.NoError(t, err)
	md.Body.Close()
	assert.Equal(t, http.StatusOK, md.StatusCode, "the challenge names metadata the service serves")

	listed := func(sub string) []string {
		var uris []string
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`
		for {
			resp, out := call(token(sub), body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			result := out["result"].(map[string]any)
			for _, r := range result["resources"].([]any) {
				uris = append(uris, r.(map[string]any)["uri"].(string))
			}
			next, ok := result["nextCursor"].(string)
			if !ok {
				return uris
			}
			body = `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"` + next + `"}}`
		}
	}
	assert.Equal(t, []string{"notes://notes/n1", "notes://notes/n2", "notes://notes/n3"}, listed("alice"))
	assert.Equal(t, []string{"notes://notes/n4"}, listed("bob"))

	_, out := call(token("alice"), `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://notes/n2"}}`)
	assert.Equal(t, "Ideas", out["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)["text"])
	_, out = call(token("bob"), `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://notes/n2"}}`)
	assert.EqualValues(t, -32002, out["error"].(map[string]any)["code"], "bob cannot read alice's note")
}

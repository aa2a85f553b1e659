package authn

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
)

// S5: RFC 9728 §3 path construction.
func TestWellKnownPath(t *testing.T) {
	cases := []struct{ resource, path, url string }{
		{"https://api.example.com", "/.well-known/oauth-protected-resource", "https://api.example.com/.well-known/oauth-protected-resource"},
		{"https://api.example.com/", "/.well-known/oauth-protected-resource", "https://api.example.com/.well-known/oauth-protected-resource"},
		{"https://api.example.com/mcp", "/.well-known/oauth-protected-resource/mcp", "https://api.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://api.example.com/mcp/", "/.well-known/oauth-protected-resource/mcp/", "https://api.example.com/.well-known/oauth-protected-resource/mcp/"},
		{"https://api.example.com:8443/a/b", "/.well-known/oauth-protected-resource/a/b", "https://api.example.com:8443/.well-known/oauth-protected-resource/a/b"},
		{"https://API.Example.com/Mcp", "/.well-known/oauth-protected-resource/Mcp", "https://API.Example.com/.well-known/oauth-protected-resource/Mcp"},
		{"https://api.example.com/a%20b", "/.well-known/oauth-protected-resource/a%20b", "https://api.example.com/.well-known/oauth-protected-resource/a%20b"},
		{"https://[2001:db8::1]:443/mcp", "/.well-known/oauth-protected-resource/mcp", "https://[2001:db8::1]:443/.well-known/oauth-protected-resource/mcp"},
		{"http://127.0.0.1:8080/mcp", "/.well-known/oauth-protected-resource/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{"http://localhost:3000", "/.well-known/oauth-protected-resource", "http://localhost:3000/.well-known/oauth-protected-resource"},
	}
	for _, tc := range cases {
		p, err := WellKnownPath(tc.resource)
		require.NoError(t, err, tc.resource)
		assert.Equal(t, tc.path, p, tc.resource)
		u, err := MetadataURL(tc.resource)
		require.NoError(t, err)
		assert.Equal(t, tc.url, u, tc.resource)
	}
	for _, bad := range []string{"", "api.example.com/mcp", "/mcp", "http://api.example.com/mcp", "https://api.example.com/mcp?x=1",
		"https://api.example.com/mcp?", "https://api.example.com/mcp#f", "https://u@api.example.com/", "ftp://api.example.com/",
		"https:///mcp", "https://api.example.com/m cp", "https://api.example.com/\"", "mailto:x@example.com"} {
		_, err := WellKnownPath(bad)
		assert.Error(t, err, bad)
		_, err = MetadataURL(bad)
		assert.Error(t, err, bad)
	}
}

func TestMetadataHandler(t *testing.T) {
	for _, resource := range []string{"https://api.example.com/mcp/", "https://api.example.com:8443/x/mcp", "https://api.example.com", "http://127.0.0.1:9999/mcp"} {
		h, err := NewMetadataHandler(Metadata{Resource: resource, AuthorizationServers: []string{"https://as.example.com"}})
		require.NoError(t, err)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusOK, w.Code)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
		// A30: resource is byte-equal to the configured URI (trailing slash, port, path).
		assert.Equal(t, resource, doc["resource"])
		assert.Equal(t, map[string]any{"resource": resource, "authorization_servers": []any{"https://as.example.com"},
			"bearer_methods_supported": []any{"header"}}, doc, "zero-valued fields omitted")
	}

	h, err := NewMetadataHandler(Metadata{
		Resource:              "https://mcp.example.com/mcp",
		AuthorizationServers:  []string{"https://as.example.com", "https://as2.example.com/tenant"},
		ScopesSupported:       []string{"files:read", "files:write"},
		ResourceName:          "Docs <&> MCP",
		ResourceDocumentation: "https://docs.example.com/mcp",
	})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, "public, max-age=3600", w.Header().Get("Cache-Control"))
	assert.JSONEq(t, `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com","https://as2.example.com/tenant"],
		"scopes_supported":["files:read","files:write"],"bearer_methods_supported":["header"],"resource_name":"Docs <&> MCP",
		"resource_documentation":"https://docs.example.com/mcp"}`, w.Body.String())
	body := w.Body.String()

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())
	assert.Equal(t, strings.TrimSpace(w.Header().Get("Content-Length")), itoa(len(body)))

	assert.Equal(t, "*", w.Header().Get("Access-Control-Allow-Origin"), "public document, readable cross-origin")

	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(m, "/", nil))
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, m)
		assert.Equal(t, "GET, HEAD, OPTIONS", w.Header().Get("Allow"))
	}

	// A browser's CORS preflight (MCP SDKs send MCP-Protocol-Version).
	r := httptest.NewRequest(http.MethodOptions, "/", nil)
	r.Header.Set("Origin", "https://inspector.example.com")
	r.Header.Set("Access-Control-Request-Method", "GET")
	r.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusNoContent, w.Code)
	assert.Equal(t, "*", w.Header().Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, HEAD", w.Header().Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "MCP-Protocol-Version", w.Header().Get("Access-Control-Allow-Headers"))
	assert.Empty(t, w.Body.String())
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestMetadataValidation(t *testing.T) {
	as := []string{"https://as.example.com"}
	for name, m := range map[string]Metadata{
		"no resource":          {AuthorizationServers: as},
		"no AS":                {Resource: testResource},
		"empty AS list":        {Resource: testResource, AuthorizationServers: []string{}},
		"relative AS":          {Resource: testResource, AuthorizationServers: []string{"/as"}},
		"http AS":              {Resource: testResource, AuthorizationServers: []string{"http://as.example.com"}},
		"AS with fragment":     {Resource: testResource, AuthorizationServers: []string{"https://as.example.com#x"}},
		"resource fragment":    {Resource: testResource + "#f", AuthorizationServers: as},
		"resource query":       {Resource: testResource + "?q", AuthorizationServers: as},
		"http resource":        {Resource: "http://mcp.example.com", AuthorizationServers: as},
		"bad scope":            {Resource: testResource, AuthorizationServers: as, ScopesSupported: []string{"a b"}},
		"bad documentation":    {Resource: testResource, AuthorizationServers: as, ResourceDocumentation: "docs"},
		"control in name":      {Resource: testResource, AuthorizationServers: as, ResourceName: "a\nb"},
		"userinfo in resource": {Resource: "https://me:pw@mcp.example.com", AuthorizationServers: as},
	} {
		_, err := NewMetadataHandler(m)
		assert.Error(t, err, name)
	}
}

// S5/A30 end to end: the challenge's resource_metadata URL, fetched,
// returns a document whose resource is the configured URI.
func TestMetadataFromChallenge(t *testing.T) {
	for _, path := range []string{"/mcp", "/", "", "/a/mcp/"} {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		resource := srv.URL + path
		md, err := NewMetadataHandler(Metadata{Resource: resource, AuthorizationServers: []string{"https://as.example.com"}})
		require.NoError(t, err)
		wk, err := WellKnownPath(resource)
		require.NoError(t, err)
		mux.Handle("GET "+wk, md)
		a, err := NewAuthenticator(stubVerifier(), Options{Resource: resource})
		require.NoError(t, err)
		mux.Handle("/mcp", a.Handler(okHandler))

		resp, err := srv.Client().Get(srv.URL + "/mcp")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		p, err := parseChallenge(resp.Header.Get("WWW-Authenticate"))
		require.NoError(t, err)
		resp, err = srv.Client().Get(p["resource_metadata"])
		require.NoError(t, err)
		var doc struct{ Resource string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
		resp.Body.Close()
		assert.Equal(t, resource, doc.Resource, "A30")
		srv.Close()
	}
}

// Authenticator.Metadata serves, at the path its challenges point to, the
// document of the Authenticator's own resource with its scopes: the
// resource URI given once; a different resource is refused.
func TestAuthenticatorMetadata(t *testing.T) {
	for _, path := range []string{"/mcp", "/"} {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		resource := srv.URL + path
		a, err := NewAuthenticator(stubVerifier(), Options{Resource: resource, Scopes: []string{"notes:write", "notes:read"}})
		require.NoError(t, err)
		wk, md, err := a.Metadata(Metadata{AuthorizationServers: []string{"https://as.example.com"}})
		require.NoError(t, err)
		mux.Handle("GET "+wk, md)
		mux.Handle("/mcp", a.Handler(okHandler))

		resp, err := srv.Client().Get(srv.URL + "/mcp")
		require.NoError(t, err)
		resp.Body.Close()
		p, err := parseChallenge(resp.Header.Get("WWW-Authenticate"))
		require.NoError(t, err)
		resp, err = srv.Client().Get(p["resource_metadata"])
		require.NoError(t, err)
		var doc struct {
			Resource        string   `json:"resource"`
			ScopesSupported []string `json:"scopes_supported"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
		resp.Body.Close()
		assert.Equal(t, resource, doc.Resource)
		assert.ElementsMatch(t, []string{"notes:read", "notes:write"}, doc.ScopesSupported)
		srv.Close()

		_, _, err = a.Metadata(Metadata{Resource: "https://other.example/mcp", AuthorizationServers: []string{"https://as.example.com"}})
		assert.Error(t, err, "another resource's document")
		_, _, err = a.Metadata(Metadata{})
		assert.Error(t, err, "no authorization server")
	}
}

// FuzzMetadataURL: for any accepted resource, the metadata URL is the
// resource's scheme and authority, the well-known prefix, then the
// resource's path byte for byte (a lone "/" dropped), it parses as an
// https (or loopback http) URL without query or fragment, and removing the
// prefix gives the resource back.
func FuzzMetadataURL(f *testing.F) {
	for _, s := range []string{"https://api.example.com", "https://api.example.com/", "https://api.example.com/mcp",
		"https://a.example:8443/x/y/", "http://127.0.0.1:1/mcp", "https://a.example/mcp?x", "https://a.example/#f",
		"https://[::1]/x", "HTTPS://A.EXAMPLE/%41", "https://a.example//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, resource string) {
		mu, err := MetadataURL(resource)
		p, err2 := WellKnownPath(resource)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("MetadataURL and WellKnownPath disagree on %q", resource)
		}
		if err != nil {
			return
		}
		if !strings.HasSuffix(mu, p) || !strings.HasPrefix(p, WellKnownPrefix) {
			t.Fatalf("%q: url %q, path %q", resource, mu, p)
		}
		u, err := url.Parse(mu)
		if err != nil || u.Fragment != "" || u.RawQuery != "" || strings.ContainsAny(mu, "#?") {
			t.Fatalf("%q: bad metadata URL %q", resource, mu)
		}
		if _, err := jose.ParseSecureURL("metadata", mu, true); err != nil {
			t.Fatalf("%q: metadata URL %q rejected: %v", resource, mu, err)
		}
		back := strings.Replace(mu, WellKnownPrefix, "", 1)
		if back != resource && back+"/" != resource {
			t.Fatalf("%q: not reversible (%q)", resource, back)
		}
	})
}

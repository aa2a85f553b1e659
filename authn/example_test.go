package authn_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

const resource = "https://mcp.example.com/mcp"

var quiet = slog.New(slog.DiscardHandler)

// A protected MCP endpoint: JWTs from one issuer, verified against its
// JWK Set, cached, with RFC 6750 challenges pointing at RFC 9728 metadata.
func ExampleNewAuthenticator() {
	is, err := authntest.New(authntest.Options{Resource: resource}) // your issuer in production
	if err != nil {
		panic(err)
	}
	defer is.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	jv, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{
		Issuer:   is.URL(),
		Resource: resource,
		JWKSURL:  is.JWKSURL(), // https in production; http only for loopback
		Logger:   quiet,
	})
	if err != nil {
		panic(err)
	}
	defer jv.Close()
	a, err := authn.NewAuthenticator(authn.NewCache(jv, authn.CacheOptions{}), authn.Options{
		Resource: resource,
		Scopes:   []string{"docs:read"},
		Logger:   quiet,
	})
	if err != nil {
		panic(err)
	}
	mcp := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		fmt.Fprintf(w, "hello %s %v", p.Subject, p.Scopes)
	}))

	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	w := httptest.NewRecorder()
	mcp.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))

	tok, err := is.TokenWith("alice", authntest.TokenOptions{Scopes: []string{"docs:read"}})
	if err != nil {
		panic(err)
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	w = httptest.NewRecorder()
	mcp.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.String(), w.Header().Get("Cache-Control"))

	r.Header.Set("Authorization", "Bearer "+tok[:len(tok)-2]+"xx")
	w = httptest.NewRecorder()
	mcp.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="docs:read"
	// 200 hello alice [docs:read] private, max-age=0
	// 401 Bearer error="invalid_token", error_description="The access token is invalid or expired", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="docs:read"
}

func ExampleAuthenticator_RequireScopes() {
	v := authn.VerifierFunc(func(ctx context.Context, token string) (principal.Principal, time.Time, error) {
		if token != "demo" {
			return principal.Principal{}, time.Time{}, authn.ErrInvalidToken
		}
		return principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}, Audience: resource}, time.Time{}, nil
	})
	a, err := authn.NewAuthenticator(v, authn.Options{Resource: resource, Logger: quiet})
	if err != nil {
		panic(err)
	}
	h := a.Handler(a.RequireScopes("docs:write")(http.NotFoundHandler()))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer demo")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	// Output:
	// 403 Bearer error="insufficient_scope", scope="docs:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="The access token lacks a required scope"
}

func ExampleNewMetadataHandler() {
	h, err := authn.NewMetadataHandler(authn.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"docs:read"},
	})
	if err != nil {
		panic(err)
	}
	path, _ := authn.WellKnownPath(resource)
	mux := http.NewServeMux()
	mux.Handle(path, h)

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(w.Body)
	fmt.Println(path)
	fmt.Println(string(body))
	// Output:
	// /.well-known/oauth-protected-resource/mcp
	// {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["docs:read"],"bearer_methods_supported":["header"]}
}

func ExampleMetadataURL() {
	for _, r := range []string{"https://api.example.com", "https://api.example.com/", "https://api.example.com:8443/tenant/mcp"} {
		u, _ := authn.MetadataURL(r)
		fmt.Println(u)
	}
	// Output:
	// https://api.example.com/.well-known/oauth-protected-resource
	// https://api.example.com/.well-known/oauth-protected-resource
	// https://api.example.com:8443/.well-known/oauth-protected-resource/tenant/mcp
}

func ExampleBearerToken() {
	for _, h := range []string{"Bearer abc.def", "bearer abc", "Basic dXNlcg==", "Bearer a b"} {
		r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		r.Header.Set("Authorization", h)
		tok, err := authn.BearerToken(r)
		fmt.Printf("%q %v\n", tok, err)
	}
	r := httptest.NewRequest(http.MethodGet, "/mcp?access_token=abc", nil)
	_, err := authn.BearerToken(r)
	fmt.Println(err)
	// Output:
	// "abc.def" <nil>
	// "abc" <nil>
	// "" principal: no authenticated caller
	// "" authn: invalid request
	// authn: invalid request
}

// Opaque tokens checked with RFC 7662 introspection, behind a cache.
func ExampleNewIntrospectionVerifier() {
	is, err := testissuer.New(testissuer.Options{Audience: resource})
	if err != nil {
		panic(err)
	}
	defer is.Close()
	id, secret := is.IntrospectionCredentials()
	iv, err := authn.NewIntrospectionVerifier(authn.IntrospectionOptions{
		Endpoint: is.IntrospectionURL(), ClientID: id, ClientSecret: secret,
		Resource: resource, Issuer: is.ID(), Logger: quiet,
	})
	if err != nil {
		panic(err)
	}
	v := authn.NewCache(iv, authn.CacheOptions{MaxTTL: time.Minute})
	tok, _ := is.Opaque(testissuer.Claims{Subject: "bob", ClientID: "app", Scopes: []string{"b", "a"}}, true)
	for range 3 {
		p, _, err := v.Verify(context.Background(), tok)
		fmt.Println(p.Subject, p.ClientID, p.Scopes, err)
	}
	fmt.Println("introspection calls:", is.Introspections())
	_, _, err = v.Verify(context.Background(), "revoked-or-unknown")
	fmt.Println(err)
	// Output:
	// bob app [a b] <nil>
	// bob app [a b] <nil>
	// bob app [a b] <nil>
	// introspection calls: 1
	// authn: invalid token
}

package mcphttp_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// The core case: a protected documents template whose List shows each
// signed-in caller their own documents, JWT access tokens checked against
// a JWK Set fetched over HTTP, the RFC 9728 metadata, and the pieces
// mounted on a ServeMux — the bearer verifier, one strict decode, the
// endpoint. (A real service points JWKSURL at its authorization server;
// here a stand-in serves one key and signs a token for alice.)
func Example_protected() {
	const resource = "http://127.0.0.1:8080/mcp"
	issuer, sign := standInIssuer(resource)
	defer issuer.Close()

	// The application's table, as a List callback: the caller's rows
	// strictly after the last key, at most Limit of them.
	table := map[string][]inventory.Entry{
		"alice": {{Key: "d1", URI: "docs://documents/d1", Name: "Plan"}, {Key: "d2", URI: "docs://documents/d2", Name: "Budget"}},
		"bob":   {{Key: "d3", URI: "docs://documents/d3", Name: "Bob's secret"}},
	}
	documents := inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		RequiredScopes: []string{"documents:read"},
		List: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			var page inventory.Page
			for _, e := range table[req.Principal.Subject] { // ownership in the query
				if e.Key > req.After && len(page.Entries) < req.Limit {
					page.Entries = append(page.Entries, e)
				}
			}
			return page, nil
		},
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, inventory.ErrNotFound // a real handler checks ownership, then reads
		},
	}
	inv, err := inventory.New(nil, []inventory.Template{documents}, inventory.Options{})
	if err != nil {
		panic(err)
	}

	verifier, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: issuer.URL, Resource: resource, JWKSURL: issuer.URL + "/jwks.json",
	})
	if err != nil {
		panic(err)
	}
	defer verifier.Close()
	auth, err := authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}),
		authn.Options{Resource: resource, Scopes: []string{"documents:read"}})
	if err != nil {
		panic(err)
	}
	metadata, err := authn.NewMetadataHandler(authn.Metadata{Resource: resource, AuthorizationServers: []string{issuer.URL}})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth})
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", metadata)
	mux.Handle("/mcp", auth.Optional(jsonrpc.Decoder(jsonrpc.Limits{})(ep)))

	list := func(token string) {
		r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
			return
		}
		var resp struct {
			Result struct{ Resources []struct{ URI, Name string } }
		}
		_ = json.Unmarshal(w.Body.Bytes(), &resp)
		fmt.Println(w.Code, w.Header().Get("Cache-Control"), resp.Result.Resources)
	}
	list("")
	list(sign("alice", "documents:read"))
	// Output:
	// 401 Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="documents:read"
	// 200 private, max-age=0 [{docs://documents/d1 Plan} {docs://documents/d2 Budget}]
}

// standInIssuer serves a JWK Set with one ES256 key over HTTP and returns
// a function that signs RFC 9068 access tokens for resource with it.
func standInIssuer(resource string) (*httptest.Server, func(subject, scope string) string) {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	key, _ := jwk.FromRaw(raw)
	_ = key.Set(jwk.KeyIDKey, "k1")
	_ = key.Set(jwk.AlgorithmKey, jwa.ES256)
	pub, _ := key.PublicKey()
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	sign := func(subject, scope string) string {
		now := time.Now()
		tok, _ := jwt.NewBuilder().Issuer(srv.URL).Audience([]string{resource}).Subject(subject).
			IssuedAt(now).Expiration(now.Add(time.Hour)).Claim("client_id", "example-app").Claim("scope", scope).Build()
		hdr := jws.NewHeaders()
		_ = hdr.Set(jws.TypeKey, "at+jwt")
		b, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key, jws.WithProtectedHeaders(hdr)))
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	return srv, sign
}

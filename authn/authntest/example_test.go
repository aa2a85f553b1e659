package authntest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/principal"
)

// Testing a handler protected by an Authenticator: the issuer, a token,
// a request. In a test, authntest.Start(t, ...) replaces New, the error
// check and Close.
func Example() {
	const resource = "https://mcp.example.com/mcp"
	is, err := authntest.New(authntest.Options{Resource: resource})
	if err != nil {
		panic(err)
	}
	defer is.Close()

	// The service's own wiring, as in production.
	v, err := authn.NewJWTVerifier(context.Background(), is.JWTOptions())
	if err != nil {
		panic(err)
	}
	defer v.Close()
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: resource})
	if err != nil {
		panic(err)
	}
	protected := auth.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		fmt.Fprintf(w, "hello %s %v", p.Subject, p.Scopes)
	}))

	r := httptest.NewRequest(http.MethodPost, resource, nil)
	r.Header.Set("Authorization", "Bearer "+is.Token("alice", "docs:read"))
	w := httptest.NewRecorder()
	protected.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.String())

	// An expired token is refused.
	expired, _ := is.TokenWith("alice", authntest.TokenOptions{ExpiresAt: time.Now().Add(-time.Hour)})
	r.Header.Set("Authorization", "Bearer "+expired)
	w = httptest.NewRecorder()
	protected.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// 200 hello alice [docs:read]
	// 401
}

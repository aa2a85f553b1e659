package dpop_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/principal"
)

// DPoP required: a token bound to the client's key is accepted with a
// fresh proof made by that key, and refused when sent as a bearer token
// or when the proof is replayed.
func Example() {
	const resource = "https://mcp.example.com/mcp"
	is, err := authntest.New(authntest.Options{Resource: resource})
	if err != nil {
		panic(err)
	}
	defer is.Close()
	v, err := authn.NewJWTVerifier(context.Background(), is.JWTOptions())
	if err != nil {
		panic(err)
	}
	auth, err := authn.NewAuthenticator(v, authn.Options{Resource: resource, DPoP: dpop.Options{Mode: dpop.Required}})
	if err != nil {
		panic(err)
	}
	h := auth.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		fmt.Fprint(w, p.Subject)
	}))
	key, err := authntest.NewDPoPKey()
	if err != nil {
		panic(err)
	}
	token, err := is.TokenWith("alice", authntest.TokenOptions{DPoP: key})
	if err != nil {
		panic(err)
	}
	send := func(r *http.Request) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return fmt.Sprint(w.Code, " ", w.Body.String())
	}

	r := httptest.NewRequest(http.MethodPost, resource, nil)
	if err := key.Authorize(r, token); err != nil {
		panic(err)
	}
	fmt.Println("with a proof:", send(r))
	fmt.Println("the same proof again:", send(r.Clone(context.Background()))[:3])
	bearer := httptest.NewRequest(http.MethodPost, resource, nil)
	bearer.Header.Set("Authorization", "Bearer "+token)
	fmt.Println("as a bearer token:", send(bearer)[:3])
	// Output:
	// with a proof: 200 alice
	// the same proof again: 401
	// as a bearer token: 401
}

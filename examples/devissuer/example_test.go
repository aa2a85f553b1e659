package devissuer_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
)

// Mint a token for alice and verify it with authn's JWT verifier, which
// fetches the JWK Set through the issuer's in-process client.
func Example() {
	dir, err := os.MkdirTemp("", "devissuer-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	iss, err := devissuer.Open(dir, "http://127.0.0.1:8080/dev", "http://127.0.0.1:8080/mcp", devissuer.Options{})
	if err != nil {
		log.Fatal(err)
	}
	tok, err := iss.Sign("alice", []string{"documents:read"}, time.Hour)
	if err != nil {
		log.Fatal(err)
	}

	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: iss.Issuer(), Resource: iss.Audience(), JWKSURL: iss.JWKSURL(),
		HTTPClient: iss.Client(), Algorithms: []string{"ES256"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	p, _, err := v.Verify(context.Background(), tok)
	fmt.Println(p.Subject, p.ClientID, p.Scopes, p.Audience, err)
	fmt.Println(iss.JWKSPath(), iss.MetadataPath())
	// Output:
	// alice mcpkit-dev [documents:read] http://127.0.0.1:8080/mcp <nil>
	// /dev/jwks.json /.well-known/oauth-authorization-server/dev
}

// Make the issuer an authorization server and mount it: MCP clients then
// discover it from the resource metadata, register, and sign in through
// its login page.
func ExampleIssuer_NewServer() {
	iss, err := devissuer.New("http://127.0.0.1:8080/dev", "http://127.0.0.1:8080/mcp", devissuer.Options{})
	if err != nil {
		log.Fatal(err)
	}
	as, err := iss.NewServer(devissuer.ServerOptions{
		Scopes: []devissuer.Scope{
			{Name: "documents:read", Description: "list and read your documents"},
			{Name: "documents:share", Description: "share your documents"},
		},
		ResourceName: "my documents",
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	paths := as.Paths()
	sort.Strings(paths)
	for _, p := range paths {
		mux.Handle(p, as)
		fmt.Println(p)
	}
	// Output:
	// /.well-known/oauth-authorization-server/dev
	// /.well-known/openid-configuration/dev
	// /dev/.well-known/openid-configuration
	// /dev/authorize
	// /dev/consent
	// /dev/jwks.json
	// /dev/register
	// /dev/token
}

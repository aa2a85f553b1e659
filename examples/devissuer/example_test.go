package devissuer_test

import (
	"context"
	"fmt"
	"log"
	"os"
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

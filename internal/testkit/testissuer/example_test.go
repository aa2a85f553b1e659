package testissuer_test

import (
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// A development issuer outside tests: New and Close, no *testing.T.
func ExampleNew() {
	is, err := testissuer.New(testissuer.Options{Audience: "https://mcp.example.com/mcp"})
	if err != nil {
		panic(err)
	}
	defer is.Close()
	tok, err := is.Sign(testissuer.Claims{Subject: "alice", Scopes: []string{"docs:read"}}, testissuer.WithKey(testissuer.KidES256))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Count(tok, "."), strings.HasPrefix(is.JWKSURL(), "http://127.0.0.1:"))
	// Output: 2 true
}

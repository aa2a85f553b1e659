package upstream_test

import (
	"context"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/authn/upstream"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// A List callback reaches the photos API as its caller with a token
// exchanged at the authorization server; CaptureSubjectToken in front of
// the MCP endpoint hands the Exchanger the caller's token.
func ExampleNewExchanger() {
	x, err := upstream.NewExchanger(upstream.ExchangeOptions{
		TokenURL: "https://auth.example.com/token", ClientID: "mcp-server", ClientSecret: "…",
		Audience: "https://photos.example.com/api", Scopes: []string{"photos:read"},
	})
	if err != nil {
		log.Fatal(err)
	}
	list := func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://photos.example.com/api/photos", nil)
		resp, err := x.Client(ctx, *req.Principal).Do(r)
		if err != nil {
			return inventory.Page{}, err
		}
		defer resp.Body.Close()
		// … decode the caller's photos into entries
		return inventory.Page{}, nil
	}
	_ = list
	mcpEndpoint := http.NotFoundHandler() // the mcphttp.Endpoint
	http.Handle("/mcp", upstream.CaptureSubjectToken(mcpEndpoint))
}

// Per-user grants: the kit serves the connect page and the callback; a
// callback's Client fails with an *ElicitationError for a caller who has
// not connected, which the MCP endpoint turns into a URL elicitation.
func ExampleNewGrants() {
	keys, err := sealedcursor.ParseKeyRing("…") // the fleet's cursor key ring
	if err != nil {
		return
	}
	store, _ := upstream.NewMemoryStore(0, nil)
	g, err := upstream.NewGrants(upstream.GrantOptions{
		Name:         "photos",
		AuthorizeURL: "https://photos.example.com/oauth/authorize", TokenURL: "https://photos.example.com/oauth/token",
		ClientID: "mcp-server", Scopes: []string{"photos:read"},
		ConnectURL: "https://mcp.example.com/connect/photos", CallbackURL: "https://mcp.example.com/callback/photos",
		Keys: keys, Store: store,
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/connect/photos", g.ConnectHandler())
	http.Handle("/callback/photos", g.CallbackHandler())
	// In a callback: resp, err := g.Client(ctx, caller).Do(req)
}

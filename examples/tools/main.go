// Command tools shows tools of one's own beside the kit's built-in ones:
// a net/http.ServeMux service whose MCP endpoint offers each signed-in
// caller their own notes as resources and as the built-in tools
// (list_resources, read_resource), plus two tools the service writes
// itself, count_notes (read-only) and add_note (needs notes:write). Each
// caller sees and calls only the tools their token's scopes admit. Copy
// it and replace the store (examples/memstore) with your database.
//
//	go run ./examples/tools -issuer https://auth.example.com -jwks-url https://auth.example.com/jwks.json
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"log"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/memstore"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// The scopes: reading one's notes, and adding to them.
const (
	scopeRead  = "notes:read"
	scopeWrite = "notes:write"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address")
	resource := flag.String("resource", "http://127.0.0.1:8091/mcp", "canonical URI of the MCP endpoint (the tokens' audience)")
	issuer := flag.String("issuer", "", "issuer identifier of the authorization server (required)")
	jwksURL := flag.String("jwks-url", "", "JWK Set URL of the authorization server (required)")
	flag.Parse()
	h, err := newService(context.Background(), memstore.New("notes://notes/{id}"), *resource, *issuer, *jwksURL)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mcphttp.NewServer(*addr, h).ListenAndServe())
}

// ownTools are the service's own tools: values, a definition and a
// handler, that see the caller the kit verified.
func ownTools(notes *memstore.Store) []tools.Tool {
	return []tools.Tool{{
		Name: "count_notes", Description: "Counts the caller's notes.", ReadOnly: true,
		RequiredScopes: []string{scopeRead},
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			return tools.TextResult(strconv.Itoa(len(notes.URIs(req.Principal.Subject)))), nil
		},
	}, {
		Name: "add_note", Description: "Adds a note for the caller and returns its URI.",
		Args:           []tools.Arg{{Name: "title", Required: true, MaxLen: 200}, {Name: "text", Required: true, MaxLen: 10000}},
		RequiredScopes: []string{scopeRead, scopeWrite},
		Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
			if strings.IndexFunc(req.Args["title"], unicode.IsControl) >= 0 { // a listed name has none
				return tools.ErrorResult("The title must not hold control characters."), nil
			}
			uri, err := notes.Add(req.Principal.Subject, rand.Text(), req.Args["title"], req.Args["text"])
			if err != nil {
				return tools.Result{}, err // logged; the client gets a fixed tool error
			}
			return tools.TextResult(uri), nil
		},
	}}
}

// newService mounts the endpoint with the built-in tools and the service's own.
func newService(ctx context.Context, notes *memstore.Store, resource, issuer, jwksURL string) (http.Handler, error) {
	tmpl := inventory.Template{Name: "notes", URITemplate: "notes://notes/{id}", MIMEType: "text/plain",
		RequiredScopes: []string{scopeRead}, List: notes.List, Read: notes.Read}
	inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
	if err != nil {
		return nil, err
	}
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
	if err != nil {
		return nil, err
	}
	part, err := tools.New(append(builtin, ownTools(notes)...)...)
	if err != nil {
		return nil, err
	}
	verifier, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{Issuer: issuer, Resource: resource, JWKSURL: jwksURL})
	if err != nil {
		return nil, err
	}
	scopes := []string{scopeRead, scopeWrite}
	auth, err := authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}), authn.Options{Resource: resource, Scopes: scopes})
	if err != nil {
		return nil, err
	}
	metadata, err := authn.NewMetadataHandler(authn.Metadata{Resource: resource, AuthorizationServers: []string{issuer}, ScopesSupported: scopes})
	if err != nil {
		return nil, err
	}
	metadataPath, _ := authn.WellKnownPath(resource) // checked by NewMetadataHandler
	mcp, err := mcphttp.New(inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "tools-example", Version: "1.0.0"}, Authenticator: auth}, part)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metadataPath, metadata)                                 // RFC 9728 protected-resource metadata
	mux.Handle("/mcp", auth.Optional(jsonrpc.Decoder(jsonrpc.Limits{})(mcp))) // verifier, one strict decode, the endpoint
	return mux, nil
}

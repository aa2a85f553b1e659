// Command skills serves each signed-in caller their own Agent Skills (the
// MCP Skills extension, SEP-2640) from a folder on disk, one folder per
// user named by the caller's subject:
//
//	DIR/alice/pdf-processing/SKILL.md
//	DIR/alice/pdf-processing/references/FORMS.md
//	DIR/bob/incident-review/SKILL.md
//
// The kit derives every entry from the files (the frontmatter from
// SKILL.md's YAML, digests and sizes); skills/list pages them per caller,
// skills/get and resources/read serve only the caller's own folder, and a
// caller without the skills:read scope gets the 403 step-up challenge.
// Copy it and point -dir at your users' folders.
//
//	go run ./examples/skills -dir examples/skills/sample -issuer https://auth.example.com -jwks-url https://auth.example.com/jwks.json
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/skills/disk"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// scopeSkills is the scope that reads one's skills.
const scopeSkills = "skills:read"

func main() {
	addr := flag.String("addr", "127.0.0.1:8092", "listen address")
	dir := flag.String("dir", "examples/skills/sample", "folder of per-user skill folders (DIR/<subject>/<skill>/SKILL.md)")
	resource := flag.String("resource", "http://127.0.0.1:8092/mcp", "canonical URI of the MCP endpoint (the tokens' audience)")
	issuer := flag.String("issuer", "", "issuer identifier of the authorization server (required)")
	jwksURL := flag.String("jwks-url", "", "JWK Set URL of the authorization server (required)")
	flag.Parse()
	folder, err := disk.Open(*dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: *issuer, Resource: *resource, JWKSURL: *jwksURL})
	if err != nil {
		log.Fatal(err)
	}
	h, err := newService(folder, verifier, *resource, *issuer)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mcphttp.NewServer(*addr, h).ListenAndServe())
}

// newService mounts the endpoint with the Skills part over folder.
func newService(folder *disk.Skills, verifier authn.Verifier, resource, issuer string) (http.Handler, error) {
	inv, err := inventory.New(nil, []inventory.Template{folder.Template(scopeSkills)}, inventory.Options{})
	if err != nil {
		return nil, err
	}
	catalog, err := skills.New(inv, folder.Source(), skills.Options{DirectoryRead: true})
	if err != nil {
		return nil, err
	}
	scopes := []string{scopeSkills}
	auth, err := authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}), authn.Options{Resource: resource, Scopes: scopes})
	if err != nil {
		return nil, err
	}
	metadata, err := authn.NewMetadataHandler(authn.Metadata{Resource: resource, AuthorizationServers: []string{issuer}, ScopesSupported: scopes})
	if err != nil {
		return nil, err
	}
	metadataPath, _ := authn.WellKnownPath(resource) // checked by NewMetadataHandler
	mcp, err := mcphttp.New(inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "skills-example", Version: "1.0.0"}, Authenticator: auth}, catalog)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metadataPath, metadata)
	mux.Handle("/mcp", auth.Optional(jsonrpc.Decoder(jsonrpc.Limits{})(mcp)))
	return mux, nil
}

// Command quickstart is the core case of mcpkit in one file: a chi service
// whose MCP endpoint lists each signed-in caller's own notes from a SQL
// table, page by page, with JWT access tokens checked against the
// authorization server's JWK Set. Copy it and replace the table.
//
//	go run ./examples/quickstart -issuer https://auth.example.com -jwks-url https://auth.example.com/jwks.json
package main

import (
	"context"
	"database/sql"
	"flag"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"
	_ "modernc.org/sqlite"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	resource := flag.String("resource", "http://127.0.0.1:8090/mcp", "canonical URI of the MCP endpoint (the tokens' audience)")
	issuer := flag.String("issuer", "", "issuer identifier of the authorization server (required)")
	jwksURL := flag.String("jwks-url", "", "JWK Set URL of the authorization server (required)")
	flag.Parse()
	db, err := sql.Open("sqlite", "file:notes?mode=memory&cache=shared")
	if err != nil {
		log.Fatal(err)
	}
	h, err := newService(context.Background(), db, *resource, *issuer, *jwksURL)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mcphttp.NewServer(*addr, h).ListenAndServe())
}

// newService creates and seeds the notes table and mounts the pieces.
func newService(ctx context.Context, db *sql.DB, resource, issuer, jwksURL string) (http.Handler, error) {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS notes (owner TEXT, id TEXT, title TEXT, PRIMARY KEY (owner, id)) WITHOUT ROWID;
		INSERT OR IGNORE INTO notes VALUES ('alice','n1','Groceries'), ('alice','n2','Ideas'), ('alice','n3','Trip'), ('bob','n4','Bob''s plans');`); err != nil {
		return nil, err
	}
	notes := inventory.Template{
		Name: "notes", URITemplate: "notes://notes/{id}", MIMEType: "text/plain",
		RequiredScopes: []string{"notes:read"}, // protected (the zero Access), owned by the subject
		List: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			rows, err := db.QueryContext(ctx, `SELECT id, title FROM notes WHERE owner = ? AND id > ? ORDER BY id LIMIT ?`,
				req.Principal.Key(), req.After, req.Limit+1) // keyset: ownership and order in the query
			if err != nil {
				return inventory.Page{}, err
			}
			defer rows.Close()
			var page inventory.Page
			for rows.Next() {
				var id, title string
				if err := rows.Scan(&id, &title); err != nil {
					return inventory.Page{}, err
				}
				if len(page.Entries) == req.Limit {
					page.HasMore = true
					break
				}
				page.Entries = append(page.Entries, inventory.Entry{Key: id, URI: "notes://notes/" + id, Name: inventory.ClipName(title)})
			}
			return page, rows.Err()
		},
		Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			var title string // the ownership check again: a listed URI grants nothing
			err := db.QueryRowContext(ctx, `SELECT title FROM notes WHERE owner = ? AND id = ?`, req.Principal.Key(), req.Params["id"]).Scan(&title)
			if err == sql.ErrNoRows {
				return nil, inventory.ErrNotFound
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: title}}, err
		},
	}
	inv, err := inventory.New(nil, []inventory.Template{notes}, inventory.Options{})
	if err != nil {
		return nil, err
	}
	verifier, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{Issuer: issuer, Resource: resource, JWKSURL: jwksURL})
	if err != nil {
		return nil, err
	}
	auth, err := authn.NewAuthenticator(authn.NewCache(verifier, authn.CacheOptions{}), authn.Options{Resource: resource, Scopes: []string{"notes:read"}})
	if err != nil {
		return nil, err
	}
	metadataPath, metadata, err := auth.Metadata(authn.Metadata{AuthorizationServers: []string{issuer}})
	if err != nil {
		return nil, err
	}
	mcp, err := mcphttp.New(inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "quickstart", Version: "1.0.0"}, Authenticator: auth})
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Method(http.MethodGet, metadataPath, metadata) // RFC 9728 protected-resource metadata
	r.Group(func(r chi.Router) {
		r.Use(auth.Optional)                     // the bearer verifier: Principal in the context
		r.Use(jsonrpc.Decoder(jsonrpc.Limits{})) // one strict decode: the message in the context
		r.Handle("/mcp", mcp)                    // method routing; resources/list from the inventory
	})
	return r, nil
}

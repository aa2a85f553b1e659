// Package mount shows the same mcpkit pieces mounted on three routers, and
// tests that they behave identically. The router code, the part to copy,
// is in package routers (routers.Chi, routers.Gorilla, routers.ServeMux);
// the shared construction (an in-memory per-user notes inventory, a JWT
// verifier and authenticator, the MCP endpoint, the RFC 9728 metadata
// handler, and the development token issuer) is in package kit; the
// programs are
//
//	go run ./examples/mount/chi       # github.com/go-chi/chi/v5
//	go run ./examples/mount/gorilla   # github.com/gorilla/mux
//	go run ./examples/mount/servemux  # net/http.ServeMux
//
// Each serves, behind mcphttp.NewServer (recommended timeouts):
//
//	POST /mcp                                     the MCP endpoint (GET/DELETE: 405)
//	GET  /.well-known/oauth-protected-resource/mcp RFC 9728 metadata of the resource
//	GET  /.well-known/oauth-protected-resource     the same, at the root well-known path
//	GET  /healthz                                 liveness
//
// # Trying them by hand
//
// Without flags a program listens on 127.0.0.1:8081, takes
// http://127.0.0.1:8081/mcp as its resource, and, since no identity provider
// is configured, starts a development token issuer inside the process
// (examples/devissuer, with a key kept in memory; it logs a DEVELOPMENT
// MODE warning and also serves the issuer's GET /dev/jwks.json and
// /.well-known/oauth-authorization-server/dev). It prints export lines with
// tokens for alice and bob and curl commands to paste:
//
//	$ go run ./examples/mount/chi
//	listening on http://127.0.0.1:8081
//	  export ALICE=eyJhbGciOi…
//	  export BOB=eyJhbGciOi…
//	$ curl -s http://127.0.0.1:8081/mcp -H 'Content-Type: application/json' \
//		-H 'MCP-Protocol-Version: 2025-11-25' -H "Authorization: Bearer $ALICE" \
//		-d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'
//
// alice has 12 notes and bob 4; pages hold 5, so alice's list has a
// nextCursor to pass back as params.cursor. A request without a token
// gets 401 with WWW-Authenticate: Bearer resource_metadata="…", and bob
// reading one of alice's notes gets "Resource not found".
//
// With an identity provider, name it and the resource its tokens are issued
// for (their "aud"); tokens must be RFC 9068 at+jwt access tokens with the
// scope notes:read, and the subjects "alice" and "bob" own the seeded notes:
//
//	go run ./examples/mount/gorilla -addr 127.0.0.1:8081 \
//		-issuer https://auth.example.com \
//		-jwks-url https://auth.example.com/.well-known/jwks.json \
//		-resource https://mcp.example.com/mcp
package mount

// Package app assembles the documents example server from mcpkit's pieces:
// configuration (flags and MCPKIT_* environment variables, validated with
// messages that name the flag), the document store (SQLite by default,
// PostgreSQL by DSN), token verification (a real issuer's JWK Set or
// introspection endpoint, or the built-in development issuer), the
// inventory, the MCP endpoint, a chi router and an http.Server with the
// recommended timeouts.
//
//	a, err := app.New(ctx, app.Config{}) // development mode on 127.0.0.1:8080
//	if err != nil { … }
//	defer a.Close()
//	err = a.Run(ctx) // until ctx is done, then a graceful shutdown
//
// # Routes
//
//	POST /mcp                                        the MCP endpoint (GET and DELETE: 405 from the endpoint)
//	GET  /.well-known/oauth-protected-resource/mcp   RFC 9728 metadata (path derived from -resource),
//	GET  /.well-known/oauth-protected-resource       and the same document at the root
//	GET  /healthz                                    200 "ok" when the database answers within 2 s
//	GET  /dev/jwks.json                              development mode: the built-in issuer's keys
//	GET  /.well-known/oauth-authorization-server/dev development mode: its RFC 8414 metadata
//
// # Resources
//
// A public static resource, docs://about (text/markdown), and a protected,
// discoverable template, docs://documents/{id} (scope documents:read), whose
// List callback serves the caller's own documents page by page with a
// keyset query ([DocumentsTemplate]), whose Read re-checks visibility, and
// whose completion suggests the caller's own ids.
//
// # Development mode
//
// With no issuer configured, New opens (or creates, on first start) the
// signing key of a development issuer in the data directory, logs a loud
// warning, and Run prints ready-to-paste curl commands with fresh tokens for
// alice and bob. [DevToken] mints more from another process. The issuer URL
// and the resource are derived from the listen address
// (http://127.0.0.1:8080/dev and http://127.0.0.1:8080/mcp), which must be
// a loopback address in this mode.
//
// The JWT verifier fetches the JWK Set once at construction, before the
// server serves anything. In development mode it is given the issuer's
// in-process client (devissuer.Issuer.Client), which answers the JWK Set URL
// from the same handler the router mounts at /dev/jwks.json: tokens verify
// on the very first request, and no start-up ordering is involved.
//
// # Logs
//
// slog records on standard error: one Info line per request (method,
// matched route, status, duration, and the subject when a token verified),
// never headers, tokens, query strings or bodies. The introspection client
// secret is never logged; PostgreSQL DSNs are logged without credentials.
package app

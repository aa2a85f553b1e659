// Command legacy shows an existing MCP server, written with the official
// go-sdk (github.com/modelcontextprotocol/go-sdk/mcp) and offering a
// word_count tool, wrapped by intercept.New (package mcphttp/intercept) so
// that mcpkit serves a private per-user inventory beside the tool: every
// signed-in user lists and reads their own texts, page by page, and nobody
// else's.
//
//	go sdk server (tools) ───────────┐
//	mcpkit inventory (resources/*) ──┴─► intercept.New ──► /mcp
//
// Intercept answers resources/list, resources/read,
// resources/templates/list and resource completion itself, with mcpkit's
// authentication and error rules, and forwards everything else (initialize,
// tools, sessions, GET streams) untouched to the go-sdk handler; it adds
// the resources capability to the go-sdk's initialize (or server/discover)
// result. Intercept authenticates forwarded requests with the endpoint's
// Authenticator too (the tool needs a token; a forged one never reaches
// the go-sdk), and binds each go-sdk session to the user who began it
// (another user naming it gets 404). The tool sees the caller in
// principal.FromContext: with -stateful, the go-sdk runs it with the
// context of the session's initialize, whose user is the session's.
//
// # Trying it by hand
//
// Without flags it listens on 127.0.0.1:8082 with a development token
// issuer built in (examples/devissuer with a key kept in memory, logged as
// DEVELOPMENT MODE, its JWK Set at /dev/jwks.json) and prints tokens for
// alice and bob with curl commands:
//
//	go run ./examples/legacy
//
// The go-sdk handler is stateless by default, because the go-sdk speaks the
// 2026-07-28 protocol (server/discover, no sessions) only from a stateless
// handler. With -stateful it keeps sessions (Mcp-Session-Id) as many
// existing servers do, and offers the 2025 versions only: a 2026-07-28
// client then falls back to initialize, and everything works the same.
// mcpkit's resource methods never need a session. With an identity
// provider:
//
//	go run ./examples/legacy -issuer https://auth.example.com \
//		-jwks-url https://auth.example.com/.well-known/jwks.json \
//		-resource https://mcp.example.com/mcp
//
// Tokens must be RFC 9068 at+jwt access tokens for the resource with the
// scope texts:read; the subjects alice and bob own the seeded texts.
package main

// Package routers mounts the same mcpkit pieces on three routers: chi
// ([Chi]), gorilla/mux ([Gorilla]) and the standard library's
// http.ServeMux ([ServeMux]). Each function is the code to copy into a
// service that uses that router; the programs in examples/mount/chi,
// examples/mount/gorilla and examples/mount/servemux serve them, and
// examples/mount tests that all three behave byte for byte the same.
//
// What every router mounts:
//
//	/mcp                                      the MCP endpoint (every method)
//	/.well-known/oauth-protected-resource/mcp RFC 9728 metadata of the resource
//	/.well-known/oauth-protected-resource     the same document, for clients that try the root
//	/healthz                                  liveness
//
// The MCP endpoint and the metadata handler are mounted for every HTTP
// method on purpose: they answer the methods they do not serve (GET /mcp,
// POST on the metadata) with 405 and an Allow header themselves, the same
// way on every router. A method-specific route ("POST /mcp", r.Post,
// .Methods("POST")) would let the router answer those with its own 405,
// which differs from router to router.
//
// [Chi], [Gorilla] and [ServeMux] mount the one-line endpoint, which
// authenticates and decodes each request itself. [ChiComposed],
// [GorillaComposed] and [ServeMuxComposed] mount the same service from
// its pieces — the bearer verifier's Optional middleware (anonymous
// requests pass: initialize and discovery stay open while resources/list
// needs a token), jsonrpc.Decoder, and routing resources/list to the list
// handler — for a service that puts middleware of its own in between or
// routes MCP methods itself. All six answer byte for byte the same.
package routers

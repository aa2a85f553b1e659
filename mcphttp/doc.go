// Package mcphttp is the MCP Streamable HTTP endpoint: the http.Handler a
// service mounts at its MCP path. It speaks both protocol eras on one
// endpoint, authenticates with an [authn.Authenticator] (or uses the
// principal the service's own middleware found), answers from an
// [inventory.Inventory], and maps every error in one place.
//
// The endpoint is the one-line assembly of pieces that also work alone and
// mount on any router (chi, gorilla/mux, http.ServeMux):
//
//	metadata, _ := authn.NewMetadataHandler(authn.Metadata{Resource: resource, AuthorizationServers: []string{issuer}})
//	mux.Handle("GET "+metadataPath, metadata)                // RFC 9728 protected-resource metadata
//	mux.Handle("/mcp", auth.Optional(                        // the bearer verifier: Principal in the context
//		jsonrpc.Decoder(jsonrpc.Limits{})(                   // one strict decode: the message in the context
//			ep)))                                            // method routing; resources/list from the inventory
//
// where ep comes from [New]:
//
//	inv, _ := inventory.New(resources, templates, inventory.Options{})
//	ep, err := mcphttp.New(inv, mcphttp.Options{
//		ServerInfo:    mcphttp.Implementation{Name: "documents", Version: "1.0.0"},
//		Authenticator: auth, // required when anything is protected
//	})
//	mux.Handle("/mcp", ep) // every method: POST, and GET/DELETE with notifications
//	srv := mcphttp.NewServer("127.0.0.1:8080", mux) // recommended timeouts
//
// Without the middleware in front, the endpoint authenticates and decodes
// itself, the same way. A [ListHandler] serves resources/list alone, for a
// service that routes MCP methods itself; an [OriginGuard] is the Origin
// and DNS-rebinding decision, for the service's other handlers too;
// [Intercept] puts the inventory in front of an MCP server from another
// SDK.
//
// # Transport
//
// POST carries one JSON-RPC message (or, for 2025-03-26, a batch), decoded
// once and strictly (see [jsonrpc.Decoder]). Content-Type must be
// application/json (415 otherwise); an Accept header that admits neither
// application/json nor a wildcard gets 406. Notifications and client
// responses get 202 with no body. The body is limited
// (Options.MaxBodyBytes, default 4 MiB): a larger one gets 413 after at
// most the limit was read. Answers are one JSON response — except
// subscriptions/listen, whose answer is an event stream (see Change
// notifications). Without Options.Notifications, GET and DELETE get 405
// with Allow: POST; with it, they serve the legacy session's stream and
// its end.
//
// An Origin header that is present must be listed in Options.AllowedOrigins
// or be the request's own origin; otherwise 403. A request that arrives on
// a loopback address must name a loopback host in its Host header (the
// DNS-rebinding defence). The allowed origins default to none.
//
// # Legacy protocols (2024-11-05 … 2025-11-25)
//
// initialize echoes the client's protocol version when the endpoint speaks
// it, else answers with the newest legacy version; capabilities are
// resources (listChanged and subscribe true exactly when notifications are
// on) and completions when a template completes. ping answers {}. Without
// notifications the endpoint is stateless: it mints no session (no
// Mcp-Session-Id). With them it mints one at initialize (see Change
// notifications); either way every request is authenticated on its own. A
// request without MCP-Protocol-Version is taken as 2025-03-26, an
// unsupported version gets 400. Batches (a JSON array) are served for
// 2025-03-26 only. A resource that is not found (or not visible to the
// caller) is -32002 with data.uri.
//
// # Modern protocol (2026-07-28)
//
// A request is modern when its params._meta names
// io.modelcontextprotocol/protocolVersion; io.modelcontextprotocol/clientCapabilities
// is then required too (400, -32602). The MCP-Protocol-Version and
// Mcp-Method headers must repeat the body, and for resources/read Mcp-Name
// must equal params.uri (=?base64?…?= values decoded first); otherwise 400
// with -32020. An unsupported version gets 400 with -32022 and
// data.supported. Unknown methods get 404 with -32601. server/discover is
// answered; every result carries resultType "complete" and, for lists and
// reads, ttlMs 0 and cacheScope "private"; _meta carries serverInfo. A
// resource that is not found is -32602 with data.uri. Mcp-Session-Id and
// Last-Event-ID are ignored.
//
// # Authentication and caching
//
// A token that is present but invalid gets 401 on every method. Without a
// token a request is anonymous: enough for initialize, ping,
// server/discover and public resources. Once the inventory has a list
// source, resources/list requires a caller (401 challenge naming the
// resource metadata); protected templates require one for reads; a missing
// scope gets 403 insufficient_scope naming the scopes. Every response to a
// POST carries Cache-Control: private, max-age=0 and Vary: Authorization.
//
// # Change notifications
//
// With Options.Notifications (a [notify.Hub]) the endpoint delivers
// notifications/resources/list_changed and notifications/resources/updated
// to the open streams of the principal they concern, and to no one else;
// the application calls hub.ListChanged(ctx, key) when a caller's records
// change, and the inventory does when a grant changes. The key is the
// principal's identity key, principal.Principal.Key: the bare subject with
// one trusted issuer, principal.SubjectKey(issuer, subject) with several, so
// that a change for alice of one issuer never reaches alice of another.
//
// Legacy clients get an optional session mode: initialize mints an
// Mcp-Session-Id (32 random bytes, base64url) bound to the principal that
// created it (issuer, subject, client id and audience; not the DPoP key,
// so a refreshed token of the same identity keeps it). A request naming the
// session with anybody else's token — or none — gets 404, as does an
// unknown or expired session; requests without the header are still
// served statelessly. GET with the session id opens the session's SSE
// stream (keep-alive comments, X-Accel-Buffering: no, one stream per
// session: a new GET replaces the old one), resources/subscribe and
// resources/unsubscribe choose the URIs whose updates it carries (only
// URIs the caller may read as far as the inventory knows: visibility,
// access and scopes; record ownership is the application's, which is why
// ResourceUpdated events are addressed to the subjects who may read the
// record), and DELETE ends the session. Sessions never
// authenticate anything: every request still carries its token.
//
// Modern clients POST subscriptions/listen: the answer is an SSE stream
// whose first message acknowledges the subscription (its id is the
// request's id) with the part of the filter the server honours — list
// changes, and updates of resources the caller may read — followed by only
// those notifications. Closing the stream ends the subscription; closing
// the hub completes it with a final result.
//
// A stream ends when the token that opened it expires; the client opens a
// new one with a fresh token. Each stream has a bounded queue: a client that
// does not keep up is disconnected, it never makes the server buffer more. Streams lift the
// server's WriteTimeout for themselves and bound each write instead.
// On HTTP/1.1 a stream detaches from its handler once its first messages
// are out (the connection is hijacked): the handler returns while the
// stream goes on, so http.Server.Shutdown and Close neither wait for nor
// end it, middleware around the endpoint sees no more of it, and the
// checks it makes later (gate policies, grant stores) get a context with
// the caller (principal.FromContext) and none of the finished request's other
// values, which that middleware may have released. Close the hub, then call
// [Endpoint.WaitStreams] (see Options.Notifications). HTTP/2, HTTP/1.0,
// a middleware's ResponseWriter that cannot hijack, and a response whose
// body a middleware encodes (Content-Encoding) keep the stream in its
// handler.
// Intercept does not support notifications (the legacy handler owns
// sessions and streams there).
//
// # Tools
//
// With Options.Tools (see [ToolOptions]) the inventory is also offered as
// MCP tools, for clients that call tools but never page through
// resources/list: list_resources (the pages and cursors of resources/list,
// as structuredContent and text), read_resource (resources/read), typed
// per-template tools (ToolOptions.Templates), and, when some template has
// a Search callback, search and fetch in the contract of ChatGPT
// connectors and deep research (one text item holding
// {"results":[{"id","title","url"}]}, and {"id","title","text","url",
// "metadata"}). Each tool is the inventory call the resource methods make,
// with the same caller: the same authentication, scopes, gates, grants,
// owner rule, byte limit and cursors, so a tool never shows or reads more
// than resources/list and resources/read would. tools/list shows a caller
// only the tools it may use; the tools capability (listChanged with
// notifications) is advertised only then. An unknown tool and a malformed
// call are -32602; bad arguments (decoded exactly, case-sensitively),
// invalid cursors, missing resources and callback failures are tool
// errors (isError) with fixed texts naming the argument. In 2026-07-28,
// tools/call needs Mcp-Name equal to params.name.
//
// # Errors
//
//	situation                                   JSON-RPC                 HTTP
//	body is not JSON                            -32700                   400
//	not a valid request, batch not allowed      -32600                   400
//	unknown method                              -32601                   200 legacy, 404 modern
//	bad params, invalid or expired cursor       -32602 (data.reason)     200
//	modern _meta or header errors               -32602/-32020/-32022     400
//	resource not found or not visible           -32002 legacy,           200
//	                                            -32602 modern (data.uri)
//	callback or backend failure, deadline       -32603                   200
//	no or invalid token where required          —                        401 + WWW-Authenticate
//	missing scope                               —                        403 + insufficient_scope
//	token cannot be checked now                 —                        503 + Retry-After
//	Origin or Host refused                      —                        403
//	body too large                              —                        413
//	over the caller's rate limit                -31429 (data.retryAfter) 429 + Retry-After
//
// Messages are fixed; backend errors, token contents and key ids never
// reach a client.
//
// # Observing and limiting
//
// Options.Observer sees every served call (an [Observer]: Start before, End
// with the outcome; the inventory's callbacks run under the context Start
// returns). The kit depends on no telemetry library: the OpenTelemetry
// adapter is the module github.com/mcpkit/mcpkit/mcphttp/otelmcp, [Audit]
// writes one slog record per call that touched the inventory, and
// [Observers] combines them. Without an Observer the seam costs one nil
// check per message.
//
// Options.RateLimiter (a [RateLimiter]) gives each caller — issuer and
// subject, else client id, else the remote address — a token bucket per
// method class (list, read, search and tools, the rest); past the burst a
// call gets 429 with Retry-After and the JSON-RPC error [CodeRateLimited].
// Memory is bounded, and one caller's flood empties only its own buckets.
// With Intercept, only the methods it owns are observed and limited.
//
// # Server timeouts
//
// Serve the endpoint with finite timeouts; [NewServer] sets the
// recommended ones:
//
//	ReadHeaderTimeout 5s, ReadTimeout 30s, WriteTimeout 60s,
//	IdleTimeout 120s, MaxHeaderBytes 32 KiB
//
// # Wrapping an existing MCP server
//
// [Intercept] puts an inventory in front of an MCP handler from another
// SDK: it answers the resource methods (and, with Options.Tools, the
// bridge's tools, merged into the legacy handler's tools/list) and
// forwards everything else.
package mcphttp

// Package mcphttp is the MCP Streamable HTTP endpoint: the small protocol
// core a service mounts at its MCP path. It speaks both protocol eras on
// one endpoint, authenticates with an [Authenticator] (authn's, or the
// principal the service's own middleware found), answers the handshake and
// the resource methods from an [inventory.Inventory] — the inventory
// decides in Go values, this package is the one wire encoder — and maps
// every error in one place.
//
// Everything else is a [Part] of its own package, given to [New]: it
// registers the methods it serves or wraps the serving of calls, and the
// core knows nothing of it beyond that (see "Writing a part").
//
//	// legacy sessions and event streams, and subscriptions/listen
//	streams, err := sessions.New(hub, sessions.Options{})
//	// the inventory as tools, and a tool of one's own beside them
//	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
//	toolPart, err := tools.New(append(builtin, myTool)...)
//	// (each err checked)
//	ep, err := mcphttp.New(inv, mcphttp.Options{
//		ServerInfo:    mcphttp.Implementation{Name: "documents", Version: "1.0.0"},
//		Authenticator: auth,  // *authn.Authenticator; nil: the service's own middleware
//		Origins:       guard, // *origin.Guard, shared with the service's other handlers
//	},
//		streams, toolPart,
//		limiter.Part(),                  // *ratelimit.Limiter: per-caller rate limits
//		mcphttp.Observe(tracing, trail), // otelmcp, mcphttp/audit
//	)
//	mux.Handle("/mcp", ep)
//	srv := mcphttp.NewServer("127.0.0.1:8080", mux) // recommended timeouts
//
// The pieces also work alone and mount on any router: a [jsonrpc.Decoder]
// in front is used (one strict decode), a principal in the context is the
// caller, and a [ListHandler] serves resources/list alone.
//
// # Transport
//
// POST carries one JSON-RPC message (or, for 2025-03-26, a batch), decoded
// once and strictly (see [jsonrpc.Decoder]) under Options.Limits, after
// the caller is authenticated from the headers: an anonymous caller's
// body under the small anonymous limit and pool, a signed-in caller's
// under its principal's share of the memory budget (413 for a body over
// the caller's limit, 503 with Retry-After when its share is held). Content-Type must be application/json (415 otherwise); an
// Accept header that admits neither application/json nor a wildcard gets
// 406. Notifications and client responses get 202 with no body. Other
// HTTP methods get 405 with Allow, unless a part serves them (GET and
// DELETE of legacy sessions). Origin and Host are checked by
// Options.Origins first (403).
//
// # Legacy protocols (2024-11-05 … 2025-11-25)
//
// initialize echoes the client's protocol version when the endpoint speaks
// it, else answers with the newest legacy version; capabilities are
// resources (subscribe and listChanged true exactly in answers that come
// with event streams), completions when a template completes, and the
// parts'. ping answers {}. A request without MCP-Protocol-Version is taken
// as 2025-03-26; an unsupported version gets 400. Batches are served for
// 2025-03-26 only. A resource that is not found (or not visible to the
// caller) is -32002 with data.uri.
//
// # Modern protocol (2026-07-28)
//
// A request is modern when its params._meta names
// io.modelcontextprotocol/protocolVersion. The MCP-Protocol-Version header
// must repeat it (400, -32020, before the version is looked at), the
// version must be one the endpoint speaks (400, -32022 with
// data.supported), io.modelcontextprotocol/clientCapabilities must be
// there (400, -32602), Mcp-Method must repeat the method and, for methods
// that name something (resources/read: params.uri; tools/call:
// params.name), Mcp-Name the name (=?base64?…?= values decoded first).
// Unknown methods get 404 with -32601. server/discover is answered; every
// result carries resultType "complete" and, for per-caller results, ttlMs
// 0 and cacheScope "private"; _meta carries serverInfo. A resource that is
// not found is -32602 with data.uri.
//
// # Authentication and caching
//
// Credentials that are present but do not prove a caller get the
// Authenticator's 401 on every method. Without credentials a request is
// anonymous: enough for initialize, ping, server/discover and public
// resources. Once the inventory has a list source, resources/list needs a
// caller (401); protected templates need one for reads; a missing scope
// gets 403 insufficient_scope naming the scopes. Every response to a POST
// carries Cache-Control: private, max-age=0 and Vary: Authorization.
//
// # Byte budget
//
// Every response stays within Options.MaxResultBytes, envelope and
// nextCursor included: a list page is filled item by item, each encoded as
// it is accepted, and ends before the first that would not fit (the cursor
// continues there); a read or tool result over the limit is an internal
// error, logged. New refuses a limit that cannot hold the largest item the
// inventory allows.
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
//	a handler, middleware or observer panicked  -32603 (stack logged)    200
//	a part's GET or DELETE panicked             —                        500 (stack logged)
//	no or invalid credentials where required    —                        401 + WWW-Authenticate
//	missing scope                               —                        403 + insufficient_scope
//	credentials cannot be checked now           —                        503 + Retry-After
//	Origin or Host refused                      —                        403
//	body too large                              —                        413
//	a part's own error ([Error])                its code                 its status
//	a callback's [URLElicitation], the client
//	declared elicitation.url: 2025-11-25        -32042 (data.elicitations) 200
//	  2026-07-28 read, tools/call, prompts/get  result input_required    200
//	otherwise                                   -32603 naming the URL    200
//	                                            (2026-07-28: -32021)     400
//
// A legacy client's elicitation.url is remembered from the initialize of
// its session, by the instance that served it (in memory, bounded): on
// another instance of a fleet the same session gets the -32603 naming the
// URL.
//
// Messages are fixed; backend errors, token contents and key ids never
// reach a client.
//
// # Misuse
//
// Misuse is an error, never a panic: [New] refuses an Options field or a
// part holding a typed nil (a nil *authn.Authenticator as the
// Authenticator, a nil *tools.Part, Observe of a nil *audit.Audit) with an
// error naming it, and the part packages' constructors do the same for
// theirs. A zero Endpoint or ListHandler (not built by its constructor)
// answers 500 and logs "use mcphttp.New"; a panic anywhere a request
// reaches is recovered as the table above says, and the server goes on.
//
// # Writing a part
//
// A part of one's own is a [Part] (or a [PartFunc]) whose Setup gets a
// [Setup]: the endpoint's [inventory.Inventory] and logger, and these
// registrations, each also made by the kit's own parts (mcphttp/tools,
// mcphttp/sessions, mcphttp/ratelimit, mcphttp/skills):
//
//   - [Setup.Handle]: a JSON-RPC method, its [Handler] and its
//     [MethodOptions] (era, class for rate limits and observers, the
//     calls it claims);
//   - [Setup.Use]: a [Middleware] around the serving of every call;
//   - [Setup.Capability]: a member of the capabilities the handshake
//     announces;
//   - [Setup.Watch]: a [Watcher] of callers' views, whose change the event
//     streams of mcphttp/sessions announce;
//   - [Observe]: a part of observers ([Observer]), which a part may set up
//     in its own Setup.
//
// A handler and a middleware get the [Request] being served: made for
// the call and never reused, so they may keep it, hand it to a goroutine
// and read it after returning; its Note methods tell observers what the
// call concerned until the handler returns. They answer with a [Result]
// — [JSONResult] encodes a Go value as the result object, within the
// byte limit, with the era's members added; [Stream] serves an event
// stream — or an error the table above maps ([Error] for a part's own).
// Observers get a [Call] value of their own. Serving HTTP methods other than
// POST (the event streams of legacy sessions), checks before them, and the
// legacy handshake's answer are not part of this seam: only the kit's
// own parts reach them, through an internal package, so they can change
// without breaking a part of yours.
//
// # Server timeouts
//
// Serve the endpoint with finite timeouts; [NewServer] sets the
// recommended ones:
//
//	ReadHeaderTimeout 5s, ReadTimeout 30s, WriteTimeout 60s,
//	IdleTimeout 120s, MaxHeaderBytes 32 KiB
//
// and the body of a request must arrive within jsonrpc.Limits.ReadTimeout
// (10 s) of its first byte.
package mcphttp

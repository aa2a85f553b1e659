// Package intercept puts an mcphttp endpoint in front of an MCP handler
// of another SDK — the official go-sdk's mcp.NewStreamableHTTPHandler,
// mcp-go's server.NewStreamableHTTPServer — so that a service migrating
// such a server gets the kit's private resources, its tools and its
// rules without rewriting what it has:
//
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth},
//		toolsPart,   // from tools.New: the endpoint's tools, merged into legacy's list
//		lim.Part(),  // lim, a *ratelimit.Limiter: limits and observers see what the endpoint serves
//	)
//	h, err := intercept.New(ep, legacy, intercept.Options{})
//	mux.Handle("/mcp", h)
//
// The handler authenticates every request with the endpoint's
// Authenticator before legacy sees it (see Authentication of forwarded
// requests): legacy needs no auth.Handler of its own.
//
// # Routing
//
// Every request is decided on one strict decode of its body (see
// [jsonrpc.Decoder]; a Decoder in front is used when there is one), under
// the endpoint's body limits and after the endpoint's origin guard
// (origin and DNS-rebinding checks, CORS): a request either refuses is
// answered here and reaches nobody. The endpoint owns
//
//   - every resources/… method, unknown ones included: a resource method
//     never reaches legacy, which may still have resource handlers of its
//     own that know nothing of the inventory's owners, scopes and gates
//     (New initializes legacy in-process once, and logs a warning when it
//     announces resources; so does its first initialize answer when it
//     could not be probed then);
//   - what the endpoint serves itself (its method table and its parts' claims):
//     completion/complete unless its params.ref.type is exactly
//     "ref/prompt", a tools/call whose strictly decoded name is one of the
//     endpoint's tools (or that has no readable name: -32602 here), the
//     2026-07-28 subscriptions/listen of a sessions part.
//
// Owned messages are served by the endpoint exactly as it serves them
// alone: authentication, era and header rules, rate limits, observers and
// the error table. Everything else — legacy's tools and prompts,
// initialize, ping, server/discover, client notifications and responses,
// GET streams and DELETE — goes to legacy with a byte-identical body and
// untouched headers, Mcp-Session-Id included. A body the strict decoder
// refuses (duplicate or case-variant member names such as two "method"
// members or a lone "Method", invalid UTF-8, a bad id) is answered with a
// JSON-RPC error and never reaches legacy, whose own decoder might read
// it differently (last key wins, case-insensitive names) and serve a
// resource method of its own.
//
// A 2025-03-26 batch is forwarded whole when all its elements are valid
// and legacy's, and served by the endpoint when none is legacy's. One that
// mixes them is split: legacy gets the array of its own elements, each
// byte for byte (never an invalid one: the endpoint answers those), the
// endpoint the rest, a first-page tools/list goes to both and is merged,
// and the answer is one array of every response (legacy's other messages
// of an SSE answer, such as progress, come first as events of their own).
// The endpoint answers first: its refusal (a challenge, a rate limit) is
// the answer, and legacy runs nothing.
//
// # Answers rewritten
//
// legacy's initialize (and server/discover) result gets the endpoint's
// capabilities (those it announces itself): resources replaces
// legacy's, and each other one (completions, tools) is added where legacy
// has none. A first tools/list page (no cursor) goes to both: legacy's
// tools, then the endpoint's tools for the caller, in one private answer
// (a legacy handler without tools, which answers -32601, gets the
// endpoint's list alone; later pages are legacy's own). The request is
// authenticated once, with the endpoint's Authenticator, and both get the
// caller in the context (principal.NewContext), so that an authn
// middleware in front of legacy (auth.Handler, when a service keeps one)
// does not verify it again — which a DPoP proof, good for one use, would
// fail. Both kinds of answer are rewritten
// whether legacy answered with JSON or with a short SSE stream. Refused
// credentials are checked once too: the endpoint answers the refusal
// found here without checking them again, so each request with a forged
// token counts one refusal toward the Authenticator's Throttle.
//
// A legacy tool that the endpoint would serve instead (the endpoint claims
// a tools/call of its name) is an error of [New], which lists legacy's
// tools in-process (initialize, tools/list to the last page when the
// endpoint serves tools, DELETE of the probe's session). When legacy cannot be listed then (it needs a token,
// say), or its tools change later, a clash found in a tools/list answer is
// logged once and the endpoint's tool wins: it is listed, and called,
// instead.
//
// # Authentication of forwarded requests
//
// When the endpoint has an Authenticator ([mcphttp.Options]), every
// request is authenticated here, once, whatever its way: credentials it
// refuses (a forged token, a forged or replayed DPoP proof) get the
// endpoint's 401 or 403 and never reach legacy — even when the service
// did not wrap legacy in auth.Handler — and count one refusal toward the
// Authenticator's Throttle. A request without credentials gets the 401
// challenge and never reaches legacy, initialize included, unless
// [Options].ForwardAnonymous says legacy serves anonymous callers.
// [Options].MethodScopes and [Options].ToolScopes name the scopes a
// forwarded request needs (per method, per legacy tool): without them
// the caller gets the endpoint's 403 insufficient_scope challenge naming
// them, as for the kit's own methods. Observers and rate limits see only
// what the endpoint serves, its half of a merged tools/list included
// (when the endpoint refuses that half — a rate limit, a failing store —
// the answer holds legacy's tools alone).
//
// An endpoint without an Authenticator takes the caller the service's own
// middleware put in the context: put that middleware in front of the
// handler New returns, not of legacy, so that the handler knows the
// caller (for the merged tools/list, the scopes and the sessions below):
//
//	ep, err := mcphttp.New(inv, mcphttp.Options{}, toolsPart)
//	h, err := intercept.New(ep, legacy, intercept.Options{})
//	mux.Handle("/mcp", serviceAuth(h)) // serviceAuth calls principal.NewContext
//
// (the package's ExampleNew_serviceAuth runs this composition).
//
// # Sessions bound to their callers
//
// Legacy's sessions are bound to the principal that began them: the
// handler records the Mcp-Session-Id of each legacy answer that begins a
// session with its caller ([principal.Principal.SessionKey]: issuer,
// subject, client, audience), and answers 404 Session not found — the
// answer to an unknown session — to any request (POST, GET, DELETE)
// naming it with another principal, or without credentials when it was
// begun signed in, and to an id it never recorded or that ended. Such a
// request never reaches legacy (nor the endpoint): another caller cannot
// call tools in the session, open its GET stream or end it. A session
// begun anonymously ([Options].ForwardAnonymous) is nobody's: any caller
// may use it (the record holds at most sessions.DefaultMaxSessions of
// them, in a room of their own; the oldest ends first). An endpoint
// without an Authenticator whose service authenticates only in front of
// legacy leaves the handler no caller to bind: every session is then
// anonymous — put the service's middleware in front of the handler. With
// [Options].Sessions the binding of a signed-in caller's
// session is kept in its store (mcphttp/sessions: shared by a fleet
// through redisstore); otherwise, and for a session that store cannot
// hold, in the handler's own bounded record: each principal holds at most
// sessions.DefaultMaxSessionsPerPrincipal sessions (a new one ends its
// oldest, and legacy is sent its DELETE), the record at most
// sessions.DefaultMaxSessions (a session begun when it is full is ended at
// once and answered 503 with Retry-After); a binding ends when idle for
// sessions.DefaultIdleTimeout, after sessions.DefaultLifetime, when the
// latest credential seen on it expires, and with legacy's DELETE. A
// client whose session ended begins another (initialize), as after any
// 404.
//
// What a legacy tool sees of its caller: each forwarded request carries
// its caller in the context ([principal.FromContext]). mcp-go runs a
// tool with that request's context, so the tool sees the caller of that
// request. The go-sdk runs a stateful session's tools with the context of
// the session's initialize request: principal.FromContext is the
// principal who began the session — thanks to the binding always the
// same principal as the request's, but with the scopes and expiry of the
// initialize's token (a step-up token's wider scopes are not seen there:
// check them here with ToolScopes). The go-sdk's req.Extra.TokenInfo is
// nil unless the legacy handler is wrapped to fill it: the kit's core
// depends on no go-sdk type, and examples/legacy's withTokenInfo (a dozen
// lines to copy) fills it from the principal through the go-sdk's own
// auth.RequireBearerToken.
//
// # Notifications
//
// In the 2026-07-28 protocol the endpoint's event streams are its own
// method (subscriptions/listen of a sessions part), owned like any other.
// In the legacy protocols legacy owns the sessions and their GET streams;
// with [Options].Sessions the endpoint's notifications for a session's
// caller are merged into legacy's GET stream of that session (see
// [Sessions]); mcphttp/sessions' Part is one, given to both:
//
//	hub := notify.New(notify.Options{})
//	part, err := sessions.New(hub, sessions.Options{})
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, part)
//	h, err := intercept.New(ep, legacy, intercept.Options{Sessions: part})
//
// Requests it passes to the endpoint are marked
// (the kit marks them for its parts): their Mcp-Session-Id is legacy's.
// Without Sessions, legacy's sessions carry legacy's notifications only,
// and initialize answers announce no resource subscriptions.
package intercept

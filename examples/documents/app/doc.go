// Package app assembles the documents example server from mcpkit's pieces:
// configuration (flags and MCPKIT_* environment variables, validated with
// messages that name the flag), the document store (SQLite by default,
// PostgreSQL by DSN), token verification (a real issuer's JWK Set or
// introspection endpoint, or the built-in development issuer), the
// inventory, the MCP endpoint with change notifications, a small REST API
// for sharing and editing, a chi router and an http.Server with the
// recommended timeouts.
//
//	a, err := app.New(ctx, app.Config{}) // development mode on 127.0.0.1:8080
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer a.Close()
//	err = a.Run(ctx) // until ctx is done, then a graceful shutdown
//
// # Routes
//
//	POST /mcp                                        the MCP endpoint
//	GET, DELETE /mcp                                 a legacy session's notification stream, and its end
//	POST   /api/documents/{id}/shares                share one's document: {"with":"bob"}
//	DELETE /api/documents/{id}/shares/{user}         unshare it (the user percent-encoded)
//	PUT    /api/documents/{id}                       replace its body: {"body":"…"}
//	POST   /api/skills/{id}/shares                   share one's skill: {"with":"bob"}
//	DELETE /api/skills/{id}/shares/{user}            revoke it: the user's next skills/list,
//	                                                 skills/get and reads no longer show it
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
// whose completion suggests the caller's own ids. A second template with an
// RFC 6570 query expression, docs://documents{?q} ([FilteredDocumentsTemplate]),
// reads as a filtered listing: the caller's documents matching q, as JSON.
//
// # Skills
//
// Each user may own skills (the MCP Skills extension, SEP-2640), kept in
// the same database (store.OpenSkills) and shared like documents. Their
// files are resources of the protected template skill://{id}/{+path}
// ([SkillFilesTemplate], scope documents:read; path is the skill's name
// and the file's path), read with the store's access check; the
// mcphttp/skills part serves skills/list, skills/get and
// resources/directory/read per caller, and the tools list_skills and
// get_skill. The development seed gives alice release-notes and
// meeting-minutes, and bob incident-review and team-glossary, which he
// shares with alice.
//
// # Sharing and notifications
//
// The REST API (bearer tokens from the same Authenticator, scope
// documents:share; the MCP endpoint needs documents:read only) lets an
// owner share a document, unshare it and replace its body. A grantee sees
// the document in their list and can read it; only the owner changes it:
// anybody else gets 404, as for a missing document. Errors are JSON with a
// fixed message ({"error":"not_found","message":"document not found"}).
//
// After each change the server notifies exactly the principals concerned,
// through one notify.Hub given to the endpoint's sessions part: a share or unshare sends
// notifications/resources/list_changed to the grantee's open streams, an
// update sends notifications/resources/updated to the streams of every
// principal who may read the document (owner and grantees, from
// store.Store.Readers) that subscribed to it. Legacy clients open a session
// (initialize mints Mcp-Session-Id) and its GET stream; modern clients POST
// subscriptions/listen.
//
// With an SQLite database the hub is in-process. With PostgreSQL, events
// travel through LISTEN/NOTIFY (package pgnotify, channel -notify-channel),
// so the instances sharing the database notify each other's streams;
// notifications are best-effort (an instance whose listener is
// reconnecting misses what is sent meanwhile). At shutdown the hub is
// closed first, so open streams end (modern ones with their final result)
// and the server drains at once instead of waiting for them.
//
// # Several instances
//
// With -redis (MCPKIT_REDIS_URL) the instances of a fleet share, through
// package redisstore, the legacy sessions and their subscriptions, the
// DPoP replay memory, the rate-limit buckets, the hub's event log (a
// legacy GET stream that reconnects to any instance with Last-Event-ID is
// given what it missed; without -redis the hub's own log resumes it on
// the same instance only) and, when the database is SQLite, the
// notifications (Redis pub/sub; with PostgreSQL they stay on
// LISTEN/NOTIFY, which a Redis outage then does not touch; either carries
// the event ids). While Redis
// cannot answer, DPoP proofs are refused (503, Retry-After), rate limits
// let calls through (logged; -rate-fail-closed refuses them with 503) and
// initialize is answered without a session; it all comes back with Redis
// (see redis.go). examples/fleet runs such a fleet behind HAProxy.
//
// # Development mode
//
// With no issuer configured, New opens (or creates, on first start) the
// signing key of a development issuer in the data directory, logs a loud
// warning, and Run prints ready-to-paste curl commands with fresh tokens for
// alice and bob (scopes documents:read and documents:share), sharing and a
// live notification stream included. The issuer URL and the resource are
// derived from the listen address (http://127.0.0.1:8080/dev and
// http://127.0.0.1:8080/mcp, with the port really listened on), which must
// be a loopback address in this mode; the server records both in the data
// directory (development-server.json), and [DevToken] ("documents token
// USER") mints more tokens from another process for that server, or, given
// an address, for the server on it.
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
// matched route, status, duration, and the subject when a token verified,
// with every non-ASCII character escaped as in a Go string literal, so that
// "\u0430lice" with a Cyrillic а is visibly not alice), never headers,
// tokens, query strings or bodies. The introspection client
// secret is never logged; PostgreSQL DSNs are logged without credentials.
//
// # Operations
//
// Audit records (audit.Audit, package mcphttp/audit) go to a stream of their own, -audit-log:
// JSON lines on standard output by default (Config.Stdout), a file, or
// off. Per-caller rate limits (ratelimit.Limiter, -rate-list, -rate-read,
// -rate-search, -rate-other) answer 429 with Retry-After past the burst.
// Full-text searches (the search tool, the filtered listing) run one per
// principal at a time and at most GOMAXPROCS/2 at once in all, each
// within SearchTimeout (5 s, its wait included), so that a user with a
// huge corpus of their own cannot keep the database connections and CPUs
// that other callers' lists and reads need.
// With -otel (or OTEL_EXPORTER_OTLP_ENDPOINT) traces and metrics go to an
// OTLP/HTTP collector through the otelmcp adapter, and the store queries
// of the MCP callbacks are spans of their own under the MCP span; with
// -metrics-addr a separate listener serves Prometheus /metrics. The
// Config's zero value turns all of this off; the flags' defaults turn the
// audit and the rate limits on.
package app

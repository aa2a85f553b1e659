// Package sessions is the part of an [mcphttp.Endpoint] that delivers
// change notifications: legacy sessions and their event streams, and the
// 2026-07-28 subscriptions/listen. Events come from a [notify.Hub]: the
// application calls hub.ListChanged(ctx, key) when a caller's records
// change (and the inventory does when a grant changes), and each reaches
// the open streams of the principal it names — its identity key,
// principal.Principal.Key — and no one else's.
//
//	hub := notify.New(notify.Options{})
//	part, err := sessions.New(hub, sessions.Options{})
//	if err != nil {                        // only invalid Options
//		log.Fatal(err)
//	}
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, part)
//	srv := mcphttp.NewServer(addr, ep)
//	srv.RegisterOnShutdown(hub.Close)      // ends the streams, completes the modern ones
//	go srv.ListenAndServe()
//	<-ctx.Done()                           // time to stop
//	srv.Shutdown(context.Background())
//	part.Wait(context.Background())        // detached streams end after Shutdown
//
// The endpoint's capabilities then say subscribe and listChanged in an
// initialize answered with a session and in server/discover.
//
// # Legacy sessions
//
// initialize mints an Mcp-Session-Id (32 random bytes, base64url) bound to
// the signed-in principal that asked — issuer, subject, client id and
// audience ([principal.Principal.SessionKey]); not the DPoP key, so a
// refreshed credential of the same identity keeps the session. An
// anonymous initialize, and one when the store is full, is answered
// without a session and without the notification capabilities, never
// refused. A message (request or notification) naming a session with
// anybody else's credentials, or none, gets 404, as does an unknown or
// expired session; one without the header is served statelessly. GET with
// the session id opens the session's SSE stream: a priming event first
// (an event id from the hub's log and empty data, so that a stream cut
// before its first message resumes with Last-Event-ID, on any instance
// sharing the log), keep-alive comments, X-Accel-Buffering: no, one
// stream per session (a new GET replaces the old one), and a retry field
// before the server closes it on purpose. It carries notifications/resources/list_changed, the
// notifications of the endpoint's watchers ([mcphttp.Setup.Watch]: the
// tools part's notifications/tools/list_changed when the caller's tools
// changed), and notifications/resources/updated for the URIs the session
// subscribed to with resources/subscribe — only URIs the caller may read
// as far as the inventory knows (visibility, access and scopes; record
// ownership is the application's, which is why ResourceUpdated events
// are addressed to the subjects who may read the record). DELETE ends the
// session and its stream. Sessions never authenticate anything: every
// request still carries its credentials.
//
// # subscriptions/listen
//
// Modern clients POST subscriptions/listen: the answer is an SSE stream
// whose first message acknowledges the subscription (its id is the
// request's) with the part of the filter the server honours — resource
// list changes, updates of resources the caller may read, and the lists
// its watchers follow (toolsListChanged with the tools part) — followed
// by only those notifications, each tagged with the subscription id.
// Closing the stream ends the subscription; closing the hub completes it
// with a final result.
//
// # Behind mcphttp/intercept
//
// In front of another MCP server (mcphttp/intercept), that server owns the
// legacy sessions and their GET streams. Give the part to mcphttp.New and,
// as intercept.Options.Sessions, to intercept.New: it adopts each session
// the server begins for a signed-in caller ([Part.Adopt]; initialize then
// announces subscribe and listChanged), resources/subscribe through the
// endpoint subscribes it, the endpoint's notifications are merged into
// the server's GET stream of the session ([Part.Listen]), and the server's
// DELETE ends it ([Part.End]). A request through intercept naming a
// session the part did not adopt (an anonymous caller's, another caller's
// use of the id) is served as one without a session, never refused as
// unknown: the session is the other server's. subscriptions/listen
// (2026-07-28) is the endpoint's own, as without intercept.
//
// # Limits
//
// Streams need a principal (401 challenge otherwise). Each principal holds
// at most Limits.MaxStreamsPerPrincipal open streams (one more: 429 with
// Retry-After) and the process Limits.MaxStreams (503 with Retry-After).
// A stream ends when the credential that opened it expires (the client
// opens a new one with a fresh credential) and when its session ends.
// Each stream has a bounded queue: a client that does not keep up is
// disconnected; it never makes the server buffer more. Streams lift the
// server's WriteTimeout for themselves and bound each write instead.
// Sessions are bounded as [MemoryStore] describes.
//
// On HTTP/1.1 a stream detaches from its handler once its first messages
// are out (the connection is hijacked): the handler returns while the
// stream goes on, so http.Server.Shutdown and Close neither wait for nor
// end it, middleware around the endpoint sees no more of it, and the
// checks it makes later (gate policies, grant stores) get a context with
// the caller (principal.FromContext) and none of the finished request's
// other values, which that middleware may have released. Close the hub,
// then call [Part.Wait]. HTTP/2, HTTP/1.0, a middleware's ResponseWriter
// that cannot hijack, and a response whose body a middleware encodes
// (Content-Encoding) keep the stream in its handler.
//
// # Fleets
//
// Behind a load balancer, what every instance must agree on is in the
// [Store]: sessions (creation under the per-principal cap, lookup bound
// to the principal, lifetime, idle time and credential expiry, end) and
// their subscriptions. The default [MemoryStore] is per process; a store
// on a shared engine makes a session minted by one instance valid on the
// others, and a resources/subscribe made through one instance reach the
// stream on another (the stream asks [SubscriptionStore.Subscribed] for
// each update). The part asks the store once per request — one round
// trip for an engine that runs each method as one script — and an open
// GET stream tells the store that it is alive at a quarter of the
// session's idle time (at most a minute; the keep-alive wheel asks for
// it, up to a KeepAlive late), which also ends it when its session was
// ended through another instance.
//
// What stays in the process: a stream is a connection. The stream limits
// count this process's streams; a new GET or a DELETE ends at once only
// a stream open on the same instance (after a DELETE through another
// instance, a stream ends at its next refresh; a GET through another
// instance leaves the older stream open until it ends on its own).
// Events reach the instance that holds a stream through the hub's
// [notify.Broker], whichever instance published them.
//
// # Nothing lost across a reconnect
//
// Legacy era (2025-11-25 and before): each message of a GET stream that
// completes an event's delivery carries an SSE id, "<tag>.<log id>": the
// event's id in the hub's [notify.EventLog], given once by the instance
// that published it, after a tag of the stream's principal (9 bytes of
// SHA-256 of its identity key, base64url), which tells its own ids from
// another's. A GET with Last-Event-ID subscribes, then replays what the
// principal's key received after that id (asked of the log for the
// caller's own key only, so a forged id can name nothing of anyone
// else's), through the same delivery as live events — the session's
// subscriptions ([SubscriptionLister], once for the replay) and the
// caller's access as they are now — and skips the live events it
// replayed. An id that is malformed, another principal's, unknown, older
// than the log keeps, or that the log cannot be asked about (a store out
// of reach, logged) gets a clean restart instead: list_changed, the
// watchers' notifications, and updated for each URI the session
// subscribed to and the caller may still read, so the client lists and
// reads again; the restart's messages carry no id, the next event's gives
// one. With a log shared by a fleet (redisstore's) and the session in a
// shared store, a stream resumes on any instance; with the default
// [notify.MemoryLog], on the instance that published what it missed, and
// it restarts elsewhere. A replayed list_changed also carries the
// watchers' notifications, whose views the stream cannot compare across
// the gap. Through mcphttp/intercept, the legacy handler owns the GET
// stream and its ids; the endpoint's notifications go into it without.
//
// A stream whose events may have been lost (a [notify.Missed]: its
// instance's broker listener was cut off and the log cannot tell what was
// published meanwhile — Redis back empty, the log out of reach) is ended
// with a retry field: the client resumes with Last-Event-ID as above,
// and gets 404 when its session went with the data (it initializes
// again); a legacy handler's stream (Part.Listen), which has no ids of
// the part's, is sent the restart's messages instead and goes on. A GET
// stream also checks its session at least every minute
// (a quarter of the idle time when shorter), so that a session ended
// elsewhere or lost by the store ends it within that time.
//
// 2026-07-28 era: there are no event ids (SEP-2575). A broken
// subscriptions/listen is issued again, on any instance, and receives
// from its acknowledgement on; what changed while no stream was open
// shows on the client's next list. Resuming, for an open listen stream
// that may have missed events (a [notify.Missed]), is starting over in
// place: it is sent list_changed (when its filter asks for it), the
// watchers' notifications of its filter and updated for each URI of its
// filter the caller may read, and stays open. A listen stream takes a
// mark in the event log as it opens (as a GET stream's priming id, never
// sent), so that a fleet's broker listener that is cut off later catches
// its subject up. The part does not send list_changed
// first on a new listen: telling whether the caller's view changed since
// its last listen would need a per-caller record shared by the fleet (a
// store write per listen and per event), which is not cheap; a client
// that re-listens lists again.
package sessions

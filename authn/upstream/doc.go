// Package upstream reaches resources whose home is another service as the
// caller, never by passing the caller's MCP access token through (MCP
// forbids it: its audience is the MCP server, not the upstream). It offers
// the two ways the MCP specification names:
//
//   - [Exchanger]: OAuth 2.0 Token Exchange (RFC 8693) at the
//     authorization server the caller's token came from. The subject token
//     is the caller's own access token, captured from the request by
//     [CaptureSubjectToken] (mounted in front of the MCP endpoint) and held
//     for that request only, never stored; the upstream token is cached per
//     caller (identity, client, scopes, audience) until shortly before it
//     expires, in a bounded memory, and the concurrent calls of one caller
//     share one exchange (single flight).
//   - [Grants]: a per-user grant the user gives on a page the kit serves,
//     reached by URL-mode elicitation (SEP-1036): a callback that needs a
//     grant the caller has not given returns an [*ElicitationError], which
//     the MCP endpoint (package mcphttp) turns into the protocol's form:
//     -32042 URLElicitationRequiredError in 2025-11-25, an input_required
//     result in 2026-07-28. The page runs the authorization code flow with
//     PKCE at the upstream's authorization server; the refresh token is
//     kept sealed at rest with the kit's AEAD key ring, bound to the user,
//     refreshed single-flight and revocable ([Grants.Disconnect]).
//
// Both return an *http.Client for one upstream as one caller. A 401 from
// the upstream replaces the token once (a new exchange, or a refresh);
// a second 401 is [ErrRefused] for an exchange and a new elicitation for a
// grant: never a loop.
//
// Errors carry the kit's own texts; what an authorization server or
// upstream said goes to the operator log (never a token).
//
// # The grant flow and its threats
//
// [Grants.Elicit] (called by Token and Client for a caller without a
// grant) mints an elicitation: a random id and a link to ConnectURL
// carrying a value sealed with the key ring (AEAD) that names the user and
// the id and expires after LinkTTL (10 minutes). The connect page opens
// it, starts the authorization code flow with PKCE (S256) at the
// upstream's authorization server with a fresh state, kept in the
// [Store] (sealed, bound to the state) until LinkTTL and taken once by the
// callback, and sets a cookie that binds the flow to the browser that
// opened the link. The callback takes the state, checks that cookie,
// redeems the code with the verifier, seals the tokens (bound to the
// upstream and the user: a row copied to another user's key does not
// open) and calls OnComplete, which sends
// notifications/elicitation/complete on the user's sessions.
//
//   - A link forwarded to another person: whoever opens the link within its
//     ten minutes connects their upstream account to the user it names.
//     The link is a bearer capability of the user who asked; clients show
//     it to that user only. With [GrantOptions.Identify] (the service's
//     own sign-in, or its authorization server's session) the page refuses
//     a browser signed in as anyone else, which closes this hole; without
//     it, keep LinkTTL short.
//   - An authorization URL forwarded after the link was opened (a victim
//     approving at the upstream what an attacker started): the callback
//     arrives in a browser without the flow's cookie and is refused, and
//     with Identify a browser of another user is refused too.
//   - A replayed callback: the state is taken once; a second use finds
//     nothing. An expired one (LinkTTL) is refused.
//   - A stolen database: rows are sealed with the key ring (AES-256-GCM),
//     so a dump without the keys grants nothing, and a row moved from one
//     user's key to another's (or spliced from two rows) does not open.
//
// An upstream refusing a token (401) gets one refresh; if it refuses the
// refreshed one too, the grant is removed and the caller is asked again.
// A refresh the authorization server refuses (invalid_grant) removes the
// grant; one it cannot answer (down) keeps it and fails the call with
// [ErrUnavailable]. Refreshes are single-flight per instance; a fleet
// shares grants through its Store, and an instance whose refresh token
// was rotated by another re-reads the row once before giving up.
package upstream

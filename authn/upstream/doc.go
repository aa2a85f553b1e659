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
package upstream

// Package devissuer is the development token issuer of the mcpkit
// examples (documents, mount, legacy): just enough of an OAuth
// authorization server to try a server on a laptop, and nothing a
// production deployment should use. Copy it along with an example if you
// want the same development mode; it imports only public packages.
//
// It signs RFC 9068 access tokens (header typ "at+jwt", ES256) with one
// P-256 key. [Open] generates the key on first use and keeps it in a data
// directory (dev-issuer-key.pem, mode 0600), so that a second process, such
// as the documents server's "token USER" subcommand, mints tokens the
// running server accepts:
//
//	iss, err := devissuer.Open(".mcpkit-documents", "http://127.0.0.1:8080/dev",
//		"http://127.0.0.1:8080/mcp", devissuer.Options{})
//	tok, err := iss.Sign("alice", []string{"documents:read"}, time.Hour)
//
// [New] keeps a fresh key in memory only, for a server that prints its own
// development tokens at start (the mount and legacy examples): the tokens
// stop verifying when the process ends.
//
// A token carries iss (the issuer URL), aud (the resource), sub, client_id,
// scope, iat, exp and a random jti, which is what authn.JWTVerifier checks.
//
// The issuer publishes its JWK Set ([Issuer.JWKSHandler], at
// [Issuer.JWKSPath]) and RFC 8414 metadata without endpoints
// ([Issuer.MetadataHandler], at [Issuer.MetadataPath]) under the server's
// own origin: enough for a server whose tokens come from [Issuer.Sign].
//
// # Signing in from a real MCP client
//
// [Issuer.NewServer] makes the issuer a small OAuth 2.1 authorization
// server, so that MCP clients (MCP Inspector, VS Code, Claude, an app on
// the TypeScript SDK) connect and sign in through the browser. Mount it on
// every path of [Server.Paths]; for the issuer http://127.0.0.1:8080/dev:
//
//	/.well-known/oauth-authorization-server/dev   RFC 8414 metadata, also at the two
//	/.well-known/openid-configuration/dev         OpenID discovery locations MCP
//	/dev/.well-known/openid-configuration         clients try
//	/dev/authorize   the authorization endpoint: the login page (GET)
//	/dev/consent     the login page's form (POST)
//	/dev/token       the token endpoint: authorization_code, refresh_token
//	/dev/register    RFC 7591 dynamic client registration
//	/dev/jwks.json   the JWK Set
//
// What it does, and the rules it holds to:
//
//   - Clients are public (token_endpoint_auth_method "none"; no secrets),
//     known in two ways. A client ID metadata document
//     (draft-ietf-oauth-client-id-metadata-document): the client_id is an
//     https URL with a path and without query, fragment or userinfo, the
//     server fetches it (5 s at most, 5 KiB at most, no redirects
//     followed, 200 and a JSON type only, at most 4 fetches at once,
//     cached up to its max-age, at most an hour), and the document must
//     name itself as client_id, list its redirect URIs and hold no secret.
//     It is never fetched from an address of RFC 6890's special-use blocks
//     (private, link-local, shared, documentation, multicast…), checked on
//     every address the name resolves to and again on the socket; a proxy
//     is never used; IPv6 forms that embed an IPv4 address (mapped ones
//     are judged as that address; compatible, translated, NAT64, 6to4 and
//     Teredo ones are refused). The development rules for loopback: documents on
//     loopback hosts (127.0.0.0/8, ::1, localhost) are fetched, since
//     the draft allows it when the authorization server runs on loopback,
//     as a development server always does; and on a loopback host plain
//     http is accepted, so that a client on the same machine can serve
//     its document without a certificate. Or RFC 7591 registration: in
//     memory, at most ServerOptions.MaxClients, forgotten at restart. An
//     address keeps at most 20 clients not yet used in an approved
//     sign-in (its own oldest is replaced); a full registry replaces the
//     oldest unused client of the address holding the most, and is
//     refused with 503 when every client has been used.
//   - Redirect URIs: https; http on loopback hosts only; private-use
//     schemes of native apps named by a reverse domain name, in lower
//     case (RFC 8252 §7.1: "com.example.app:/cb"; no "myapp:", no
//     javascript:, data:, file: and the like); no fragment or userinfo. An authorization request's redirect_uri
//     (required) must be one of the client's byte for byte, except the
//     port of an http loopback one (RFC 8252 §7.3). A request whose client
//     or redirect URI is wrong gets an error page: nothing is sent to an
//     unverified redirect URI. Any other error of an authorization request
//     goes back to the redirect URI only when the user signed in in that
//     browser approved this client before; otherwise it is shown on a page
//     (RFC 9700 §4.11.2: anyone may register a client with any redirect
//     URI, so redirecting its errors unasked would make the server an open
//     redirector).
//   - The authorization code grant with PKCE S256 required (plain is
//     refused, and so is a missing challenge); response_mode query only;
//     state echoed; iss in every response (RFC 9207). The resource
//     parameter (RFC 8707) may name only the issuer's audience; anything
//     else is invalid_target, at both endpoints. The requested scopes
//     (unknown ones are invalid_scope; none means
//     ServerOptions.DefaultScopes) are shown on the page and granted.
//   - The login page: plain HTML without scripts, labelled as development
//     mode, showing the client (its name, and the host of its metadata
//     document), where it sends the person back, and the scopes; choose a
//     listed user or type any other, then Approve or Deny. It is never
//     framed (CSP frame-ancestors 'none', X-Frame-Options DENY), loads
//     nothing but its own style, and its form carries a CSRF token bound
//     to an HttpOnly, SameSite=Strict cookie and to the sign-in; a
//     cross-site post is refused (http.CrossOriginProtection) and each
//     sign-in is answered once, within 10 minutes. An approval remembers
//     the user in the browser (an HttpOnly cookie MAC'd with the CSRF
//     one): when a client asks again there (a step-up, for more scopes),
//     the page says who is signed in and only that user may approve;
//     "Sign in as someone else" brings the list back. At most 20 sign-ins
//     are in progress per address (an IPv6 address counts by its /64;
//     beyond, 429), and ServerOptions.MaxPending in all: when full, a new
//     sign-in pushes out the oldest of the address holding the most, if
//     that address holds more than the newcomer would (max-min), else 503.
//     So a crowd of addresses cannot keep a person's new sign-in out, nor
//     push out the one sign-in a person has in progress (only a crowd of
//     more addresses than MaxPending could). Metadata documents are
//     fetched at most 8 at once, 2 for requests from one address, and the
//     last 4 slots only for addresses with no fetch in flight: it takes 8
//     addresses naming slow documents at once (each bounded by
//     ServerOptions.ClientMetadataTimeout) to make others wait. The AS112
//     blocks (192.31.196.0/24, 192.175.48.0/24, 2001:4:112::/48,
//     2620:4f:8000::/48) are never fetched from.
//   - Codes are single-use and short-lived (ServerOptions.CodeTTL, one
//     minute): any redemption uses one up, a wrong code_verifier included,
//     and a replay revokes the refresh tokens the first redemption got
//     (RFC 6749 §4.1.2). Clients that registered the refresh_token grant
//     get refresh tokens, rotated on every use; a rotated-out one used
//     again revokes the whole sign-in. A refresh may narrow the scopes,
//     never widen them. Codes and refresh tokens are kept as SHA-256
//     digests, bounded in number, in memory only.
//   - Access tokens are the issuer's RFC 9068 JWTs (see above), with the
//     client's id as client_id. Errors are RFC 6749's (§4.1.2.1 and §5.2),
//     with fixed descriptions that never repeat what the client sent.
//   - Every request must name the issuer's host (Host): a page elsewhere
//     that rebinds its name to 127.0.0.1 gets 421. Metadata, JWK Set,
//     token and registration answers allow any origin (CORS), for
//     browser-based clients; they involve no cookie.
//
// It is for development only: there are no passwords, and anyone who can
// reach the server can sign in as any user. Serve it on loopback only,
// never where others can reach it, and never in production.
//
// # The JWK Set before the server listens
//
// authn.NewJWTVerifier fetches the JWK Set once at construction, before the
// server accepts connections. [Issuer.Client] returns an http.Client whose
// transport answers requests for the JWK Set URL in-process, from the same
// handler the server mounts, and refuses every other URL: give it to the
// verifier (authn.JWTOptions.HTTPClient) and tokens verify on the very first
// request, with no network round trip and no start-up ordering to get right.
//
// # Security
//
// Anyone who can read the key file can mint tokens for any user. The file is
// created with mode 0600 in a directory created with mode 0700, and [Open]
// refuses a key file that other users can read or write (on Unix). Never
// copy the key to a server, and never run a server in development mode where
// others can reach it.
package devissuer

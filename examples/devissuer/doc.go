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
// [Issuer.JWKSPath]) and its RFC 8414 authorization server metadata
// ([Issuer.MetadataHandler], at [Issuer.MetadataPath]) under the server's
// own origin, so the protected resource metadata can name it. It has no
// authorization or token endpoint: clients cannot obtain tokens from it
// with OAuth flows, only from the operator who runs [Issuer.Sign].
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

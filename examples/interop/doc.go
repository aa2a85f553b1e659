// Package interop tests the documents server (examples/documents) with real
// MCP clients: the official TypeScript SDK clients — v1
// (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client), driven
// by tsclient/client.mjs, tools.mjs and listen.mjs under Node.js — and the
// official go-sdk client. Each connects with alice's token, walks
// resources/list through every nextCursor, reads every listed resource,
// and checks that none of bob's documents is listed, that bob's are not
// readable with alice's token, and that a request without a token gets 401
// with a resource_metadata URL the client can fetch. Through the tools
// bridge (TestGoSDKToolsBridge, TestTypeScriptSDKTools: v1 in the legacy
// era, v2 in both), they call list_resources to the end (the same walk as
// resources/list), read_resource on every URI, search and fetch, and bob's
// URIs and ids answer like missing ones.
//
// Notifications in the 2026-07-28 era, with what the clients really send
// recorded: the go-sdk client subscribes (a subscriptions/listen stream,
// which carries an update of the document), unsubscribes (it sends
// notifications/cancelled with an Mcp-Method header and no _meta; 202) and
// keeps using its session (TestGoSDKModernSubscribeUnsubscribe); the
// TypeScript SDK v2 client (@modelcontextprotocol/client, driven by
// tsclient/listen.mjs) calls listen() and closes the subscription (it sends
// notifications/cancelled with _meta and no Mcp-Method header; 202), and
// the server answers nothing with 400 (TestTypeScriptV2ListenClose).
//
// The server runs in the test process (examples/documents/app on
// 127.0.0.1:0, a temporary data directory, its development issuer's
// tokens). The go-sdk tests need nothing else:
//
//	go test ./examples/interop/
//
// The TypeScript test needs Node.js 20 or later and the pinned SDK,
// installed outside the repository by tsclient/install.sh, which prints
// the variable to export:
//
//	eval "$(bash examples/interop/tsclient/install.sh)"   # export MCPKIT_TS_SDK_DIR=…
//	go test -run TypeScript -v ./examples/interop/
//
// Without MCPKIT_TS_SDK_DIR the TypeScript test skips with that hint;
// under CI=true a missing SDK or node fails it instead.
//
// # Walking a large inventory under the default rate limits
//
// The TestWalkAndReadWithDefaultRateLimits tests start the documents
// server as its binary starts with no flags (ParseFlags' defaults: the
// default rate limits, 50 a page) with dave owning 400 documents, and let
// each client list all 401 resources and read every one as fast as it
// goes: the go-sdk client, the TypeScript SDK v1 and v2 clients
// (tsclient/walk.mjs; v2 in both eras), and the MCP Inspector's CLI
// (@modelcontextprotocol/inspector on Node.js 22, both pinned in
// inspector/package.json and its lock file), which lists every page in one
// command but reads one resource per command, a Node.js process each, so
// it reads a sample. None may see a 429; each also reads the filtered
// listing docs://documents{?q}. TestReadFloodIsRateLimited sends 3,000
// reads at once and gets 429 with Retry-After past the burst. The
// Inspector installs like the SDK:
//
//	eval "$(bash examples/interop/inspector/install.sh)"   # export MCPKIT_INSPECTOR_DIR=…
//	go test -run 'WalkAndRead|ReadFlood' -v ./examples/interop/
//
// # DPoP with a real authorization server
//
// TestDPoPWithOIDCProviderAndTypeScriptSDK runs oidc-provider (panva's,
// pinned in oidcprovider/package.json and its lock file, driven by
// oidcprovider/provider.mjs) as the authorization server: resource
// indicators, RFC 9068 JWT access tokens signed ES256, DPoP. The documents
// server trusts it with -dpop required. The TypeScript SDK v2 client
// (tsclient/dpop.mjs) uses its own DPoP support (an OAuthClientProvider
// whose dpop() returns a DpopSession): it discovers the authorization
// server from the resource metadata, runs the authorization code flow
// with PKCE (login and consent are automatic) and a DPoP proof in its
// token request, gets a token bound to its key (token_type DPoP,
// cnf.jkt), and walks and reads alice's documents with a fresh proof on
// every request (ES256; EdDSA with server nonces). The SDK starts an
// authorization for each 401 (the GET stream's, then the POST's, each with
// its own PKCE verifier); the script follows the first, so the code must be
// exchanged with that URL's verifier, not the one saved last. The token as
// Bearer, a replayed proof, a proof of another key and no proof are refused.
// oidc-provider 9 asks for Node.js 22 and warns on Node.js 20, where it
// works for this test. Install it as the SDK:
//
//	eval "$(bash examples/interop/oidcprovider/install.sh)"   # export MCPKIT_OIDC_PROVIDER_DIR=…
//	go test -run DPoP -v ./examples/interop/
//
// # A real browser
//
// TestBrowserCORS drives headless Chromium (Debian's chromium package;
// MCPKIT_CHROMIUM names another binary) against the documents server with
// AllowedOrigins set to a page origin (http://127.0.0.1:P1; the server is
// on http://localhost:P2): the page's script lists every page with a
// bearer token, reads a document in both protocol eras and reads the
// exposed headers, and shows its findings in the DOM; a page of another
// origin gets nothing (its preflight and its no-cors POST get 403). It
// skips without Chromium, and fails under CI=true.
//
// # Signing in from real clients, in a real browser
//
// TestSignInWithTypeScriptSDKs runs tsclient/signin.mjs: the TypeScript
// SDK v1 and v2 clients' own OAuth support (an OAuthClientProvider with a
// loopback redirect URI) against the documents server in development mode,
// whose development authorization server (examples/devissuer) signs people
// in. Each client registers once by a client ID metadata document (served
// over https by the test) and once dynamically; headless Chromium, driven
// by playwright-core (pinned in tsclient/package.json beside the SDK, no
// browser of its own: it starts Debian's chromium), shows the login page,
// chooses alice or bob and approves; the SDK exchanges the code and lists
// that user's documents only. Alice's flows also step up (a read that
// needs documents:share: 403 insufficient_scope, a second sign-in, and on),
// bob's v2 flow refreshes (rotation, and reuse revoking the sign-in), and
// one flow checks that the page cannot be framed. The test writes
// screenshots of the login page to its artifact directory:
//
//	mkdir -p /tmp/signin && go test -run SignIn -v -artifacts -outputdir /tmp/signin ./examples/interop/
//
// TestSignInWithOIDCProvider runs the same client flow against
// oidc-provider with a login form (provider.mjs with MCPKIT_LOGIN=form),
// which the documents server trusts as its real issuer: the kit needs
// nothing of its own development server. Both need the SDK (with
// playwright-core), Chromium, and for the second oidc-provider, and skip
// without them (fail under CI=true).
//
// TestSignInWithHydra runs Ory Hydra v2.3.0 (built from the Go module
// proxy by .ci/hydra.sh, in-memory database) with the minimal login and
// consent app of the hydra package: a client registered dynamically signs
// alice in (authorization code, PKCE, the resource parameter), Hydra's JWT
// access tokens are verified by authn.JWTVerifier and its opaque ones by
// authn.IntrospectionVerifier, the refresh token works once, and a record
// that needs a wider scope is read after signing in again for it. It
// skips without MCPKIT_HYDRA (fails under CI=true):
//
//	eval "$(bash .ci/hydra.sh)"   # export MCPKIT_HYDRA=…
//	go test -run Hydra -v ./examples/interop/
//
// TestSignInAtConnect runs the TypeScript SDK v2 client against the
// documents server with -require-sign-in: initialize itself gets 401, and
// the client signs in at connect.
//
// # Intercept in front of real SDK servers
//
// The package also tests intercept.New wrapping real servers of the
// official go-sdk (stateful, stateless, JSON responses) and of mcp-go,
// driven by the go-sdk client in several protocol versions
// (TestInterceptWithRealSDKs), and measures what the wrapper costs on a
// forwarded request (BenchmarkInterceptVsDirect reports the ratio). These
// live here, in the examples module, so that the core module's go.mod
// requires neither SDK; they build their inventory and authenticator
// through mcpkit's public API, with tokens of examples/devissuer.
package interop

// Package testissuer is a small OAuth 2.1 authorization server for tests
// and local development: it holds RSA-2048, EC P-256 and Ed25519 signing
// keys, serves their JWK Set (and an RFC 7662 introspection endpoint) over
// real HTTP with httptest, and mints RFC 9068 "at+jwt" access tokens.
//
//	is, err := testissuer.New(testissuer.Options{Audience: "https://mcp.example.com"})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer is.Close()
//	tok, err := is.Sign(testissuer.Claims{Subject: "alice", Scopes: []string{"docs:read"}})
//
// In tests, [Start] does the same, fails the test on error and closes the
// issuer in t.Cleanup, and [Issuer.Token] mints without an error return.
//
// Hooks make the JWK Set misbehave on purpose ([Issuer.SetJWKSHandler] with
// [Status], [Body], [Huge], [Issuer.Stall]); [Issuer.Unpublish], [Issuer.AddKey]
// and [Issuer.AddRawJWK] change what it publishes; [Issuer.JWKSFetches]
// counts fetches. [Issuer.SignRaw], [Compact] and [ToJSON] sign arbitrary
// header and payload bytes to craft malicious tokens.
//
// Key material: to keep tests fast, issuers in one process share their
// default keys (generated once) unless Options.UniqueKeys is set. Tokens of
// one issuer therefore verify with another issuer's keys; tests about
// foreign keys must use UniqueKeys or [GenerateKey]. Never use this package
// in production: its keys are generated in memory and its HTTP server is
// plain http on 127.0.0.1.
package testissuer

// Package dpop configures the DPoP (RFC 9449) checks of an
// authn.Authenticator and names their errors. The Authenticator checks:
// the proof JWT (read by this package alone, with jwx only checking a
// signature for one algorithm and one key), the replay memory (in
// process, with per-caller shares, or a shared [ReplayStore]), the server
// nonces, and the checks that bind a proof to its request and its token.
//
// A service turns DPoP on with authn.Options.DPoP, an [Options]; the
// Authenticator checks every proof and answers its errors
// ([ErrInvalidProof], [ErrUseNonce], [ErrKeyMismatch], [ErrUnavailable])
// with the DPoP challenges. A fleet shares its replay memory by giving
// every instance the same [ReplayStore] (redisstore has one).
//
// # The checks
//
// authn.Options.DPoP turns DPoP on, in one of three modes (off, the zero
// value; allowed; required). A DPoP request is
// "Authorization: DPoP <token>" with exactly one DPoP proof header, and the
// proof is checked on every request, after the token's verification (which
// a authn.Cache may remember; the proof is never cached): a compact JWS read
// by this package with the strict JSON engine; typ dpop+jwt; an
// allowlisted asymmetric alg (default ES256, EdDSA, PS256, RS256) that
// fits the jwk; a public jwk (a private member in any letter case, an oct
// key, a point off its curve, RSA under 2048 bits refuse it) from which
// this package builds the key (jwx only checks the signature with that
// key; jku, x5u, x5c and crit refuse the proof and are never fetched); the
// signature; htm equal to the method; htu equal to the external URL of the
// request after RFC 3986 normalization (Options.BaseURL, by default the
// origin of Resource, followed by the request's path; never the Host
// header); iat within ProofWindow (60 s) either way; ath equal to the
// token's SHA-256; the proof key's RFC 7638 thumbprint equal to the
// token's cnf.jkt (from the JWT or the introspection response); a server
// nonce when RequireNonce is set (stateless HMAC nonces, use_dpop_nonce and
// DPoP-Nonce); and a jti not seen in twice the window (a bounded memory of
// two rotating generations that refuses new proofs with 503 when full,
// rather than forgetting live ones; each caller, the token's identity,
// holds at most a share of it, so a caller at its share is refused while
// the others' proofs are still accepted). A DPoP-bound token sent as Bearer is
// refused in every mode, Off included (RFC 9449 §7.2), and a token sent
// as DPoP must be bound. Challenges follow RFC 9449 §7.1 (see
// authn.Authenticator.WriteError); publish authn.Authenticator.DPoPAlgorithms and
// the mode in authn.Metadata. The replay memory and the nonce key are per
// process unless Options.NonceSecret is shared: see [Options] for
// fleets.
package dpop

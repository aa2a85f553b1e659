// Package dpop checks DPoP proofs (RFC 9449) for an authn.Authenticator:
// the proof JWT (read by this package alone, with jwx only checking a
// signature for one algorithm and one key), the replay memory (in
// process, with per-caller shares, or a shared [ReplayStore]), the server
// nonces, and the checks that bind a proof to its request and its token.
//
// A service turns DPoP on with authn.Options.DPoP, an [Options]; the
// Authenticator makes the [Checker] and answers its errors
// ([ErrInvalidProof], [ErrUseNonce], [ErrKeyMismatch], [ErrUnavailable])
// with the DPoP challenges. A fleet shares its replay memory by giving
// every instance the same [ReplayStore] (redisstore has one).
package dpop

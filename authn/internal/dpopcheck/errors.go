package dpopcheck

import (
	"encoding/base64"

	"github.com/mcpkit/mcpkit/authn/dpop"
)

// proofError is an dpop.ErrInvalidProof that remembers, for logs and tests
// only, which check failed. Reason makes it a reason-carrying error
// authn's logs read (a fixed classification, never request data).
type proofError struct{ reason string }

func (e *proofError) Error() string        { return dpop.ErrInvalidProof.Error() }
func (e *proofError) Is(target error) bool { return target == dpop.ErrInvalidProof }
func (e *proofError) Reason() string       { return e.reason }

// The reasons a proof is rejected (see proofError).
var (
	errProofHeaders   = &proofError{"dpop_headers"}   // no DPoP header, or several
	errProofMalformed = &proofError{"dpop_malformed"} // size, segments, base64, JSON
	errProofType      = &proofError{"dpop_typ"}       // typ is not dpop+jwt
	errProofAlg       = &proofError{"dpop_alg"}       // alg not allowed, or does not fit the jwk
	errProofHeader    = &proofError{"dpop_header"}    // forbidden or ill-typed header parameter
	errProofKey       = &proofError{"dpop_jwk"}       // jwk missing, private, malformed, weak
	errProofClaims    = &proofError{"dpop_claims"}    // a claim missing or of the wrong type
	errProofSignature = &proofError{"dpop_signature"} // signature does not verify with the jwk
	errProofMethod    = &proofError{"dpop_htm"}       // htm is not the request method
	errProofURL       = &proofError{"dpop_htu"}       // htu is not the request URL
	errProofTime      = &proofError{"dpop_iat"}       // iat outside the window
	errProofATH       = &proofError{"dpop_ath"}       // ath is not the token's hash
	errProofReplay    = &proofError{"dpop_replay"}    // jti seen before
)

// b64 is strict base64url without padding.
var b64 = base64.RawURLEncoding.Strict()

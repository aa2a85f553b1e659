package authn

import "github.com/mcpkit/mcpkit/authn/internal/jose"

// DefaultAlgorithms are the signature algorithms a [JWTVerifier] accepts
// when [JWTOptions.Algorithms] is nil.
func DefaultAlgorithms() []string { return []string{"RS256", "PS256", "ES256", "EdDSA"} }

func checkAlgorithms(algs []string) ([]string, error) {
	if algs == nil {
		return DefaultAlgorithms(), nil
	}
	return jose.CheckAlgorithms(algs)
}

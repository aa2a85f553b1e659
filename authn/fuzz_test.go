package authn

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/authn/internal/jwks"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// FuzzVerifyToken: Verify never panics, returns only ErrInvalidToken for
// garbage, and never accepts a token that is not one the test issuer
// signed (the oracle is the exact set of seed tokens).
func FuzzVerifyToken(f *testing.F) {
	e := newEnvF(f)
	o := e.opts()
	o.Logger = discardLogger()
	o.Algorithms = []string{"RS256", "PS256", "ES256", "EdDSA"}
	v, err := NewJWTVerifier(context.Background(), o)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = v.Close() })
	signed := map[string]bool{}
	for _, kid := range []string{testissuer.KidRS256, testissuer.KidPS256, testissuer.KidRSANoAlg, testissuer.KidES256,
		testissuer.KidECNoAlg, testissuer.KidEdDSA, testissuer.KidEdDSANoAlg} {
		tok, err := e.is.Sign(testissuer.Claims{Subject: "alice", Scopes: []string{"read"}}, testissuer.WithKey(kid))
		if err != nil {
			f.Fatal(err)
		}
		signed[tok] = true
		f.Add(tok)
	}
	for _, s := range []string{"", "a.b.c", "..", strings.Repeat(".", 100), "eyJhbGciOiJub25lIn0.e30.", "{\"payload\":\"e30\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		p, _, err := v.Verify(context.Background(), tok)
		if err == nil {
			if !signed[tok] {
				t.Fatalf("accepted a token the issuer did not sign: %q (principal %+v)", tok, p)
			}
			if p.Subject != "alice" || p.Audience != testResource {
				t.Fatalf("wrong principal %+v", p)
			}
			return
		}
		if err.Error() != ErrInvalidToken.Error() && err.Error() != ErrUnavailable.Error() {
			t.Fatalf("error text %q", err.Error())
		}
	})
}

// FuzzJWKSParse: the key filter never panics and never yields a key that
// is not an RSA, P-256 or Ed25519 public key fitting the allowlist.
func FuzzJWKSParse(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"oct","kid":"a","k":"AAAA"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"OKP","kid":"a","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","kid":"a","crv":"P-256","x":"AQ","y":"AQ","use":"enc"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB","alg":"RS256"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		set, _, err := jwks.Parse(body, DefaultAlgorithms())
		if err != nil {
			return
		}
		for kid, keys := range set {
			if kid == "" || len(kid) > jwks.MaxKeyIDBytes {
				t.Fatalf("kid %q kept", kid)
			}
			for _, k := range keys {
				if k.Fam != jose.FamRSA && k.Fam != jose.FamP256 && k.Fam != jose.FamEd25519 {
					t.Fatalf("family %d kept", k.Fam)
				}
				if k.Alg != "" && (jose.FamilyOf(k.Alg) != k.Fam || !jose.Contains(DefaultAlgorithms(), k.Alg)) {
					t.Fatalf("alg %q kept for family %d", k.Alg, k.Fam)
				}
			}
		}
	})
}

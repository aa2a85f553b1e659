package dpop

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

const (
	testResource = "https://mcp.example.com/mcp"
	dpopURL      = "https://mcp.example.com/mcp"
)

// FuzzDPoPProof: the proof parser never panics; a proof it accepts has a
// key of the header's algorithm and a 43-character thumbprint, and for
// the seed proofs the thumbprint is the one jwx computes (an independent
// implementation of RFC 7638); a mutated proof never verifies with the
// key it names unless its signing input is unchanged.
func FuzzDPoPProof(f *testing.F) {
	type seed struct{ jkt, input string }
	seeds := map[string]seed{}
	for _, kt := range []testissuer.KeyType{testissuer.EC256, testissuer.Ed25519, testissuer.RSA} {
		k, err := testissuer.NewProofKey(kt)
		if err != nil {
			f.Fatal(err)
		}
		jkt, err := k.Thumbprint()
		if err != nil {
			f.Fatal(err)
		}
		p, err := k.Sign(testissuer.Proof{Method: "POST", URL: dpopURL, Token: "tok", Time: time.Unix(1_800_000_000, 0), Nonce: "n"})
		if err != nil {
			f.Fatal(err)
		}
		seeds[p] = seed{jkt, p[:strings.LastIndexByte(p, '.')]}
		f.Add(p)
	}
	for _, s := range []string{"", "a.b.c", "..", "eyJ0eXAiOiJkcG9wK2p3dCJ9.e30.", strings.Repeat("A", 100) + "." + strings.Repeat("B", 100) + ".C"} {
		f.Add(s)
	}
	allowed := DefaultAlgorithms()
	c, err := New(Options{Mode: Allowed}, testResource, slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pr, err := parseProof(s, defaultMaxProofBytes, allowed)
		if err != nil {
			return
		}
		if len(pr.jkt) != 43 || jose.FamilyOf(pr.alg) != pr.fam || pr.key == nil {
			t.Fatalf("accepted a proof with jkt %q alg %s family %d", pr.jkt, pr.alg, pr.fam)
		}
		if sd, ok := seeds[s]; ok && sd.jkt != pr.jkt {
			t.Fatalf("thumbprint %s, jwx says %s", pr.jkt, sd.jkt)
		}
		if pr.verify(c.verifiers[pr.alg]) == nil {
			for _, sd := range seeds {
				if strings.HasPrefix(s, sd.input+".") && pr.input != sd.input {
					t.Fatalf("a mutated signing input verified")
				}
			}
		}
	})
}

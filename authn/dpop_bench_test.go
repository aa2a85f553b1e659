package authn

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// BenchmarkDPoPInterleaved measures what a DPoP proof costs per request:
// every iteration authenticates a plain bearer request (a cached token:
// the baseline) and a DPoP request (the same cached verification, plus
// the proof: parse, key, signature, htu, ath, thumbprint, replay memory),
// alternately, so that load from other processes hits both alike. The
// proof is signed outside the timed part. Reported: each one's mean, the
// proof's own cost (dpop − bearer), the ratio dpop/bearer, and, timed in
// the same iteration, the bare signature check of the proof (jwx's
// verifier with the parsed key: what no implementation can skip) with the
// rest of the proof's cost beside it (other = proof − sig).
func BenchmarkDPoPInterleaved(b *testing.B) {
	for _, kt := range []struct {
		name string
		t    testissuer.KeyType
	}{{"ES256", testissuer.EC256}, {"EdDSA", testissuer.Ed25519}} {
		b.Run(kt.name, func(b *testing.B) {
			e := newEnvTB(b)
			o := e.opts()
			o.Logger = discardLogger()
			o.Now = nil
			v, err := NewJWTVerifier(b.Context(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			a, err := NewAuthenticator(NewCache(v, CacheOptions{}), Options{Resource: testResource, Logger: discardLogger(),
				DPoP: dpop.Options{Mode: dpop.Allowed, MaxReplayEntries: 1 << 22}})
			if err != nil {
				b.Fatal(err)
			}
			k, err := testissuer.NewProofKey(kt.t)
			if err != nil {
				b.Fatal(err)
			}
			jkt, _ := k.Thumbprint()
			vf, err := jws.NewVerifier(jwa.SignatureAlgorithm(k.Alg))
			if err != nil {
				b.Fatal(err)
			}
			pub := k.Private.Public()
			iat := time.Now().Add(time.Hour)
			bound := claims("alice", "read")
			bound.DPoPThumbprint = jkt
			bound.ExpiresAt, bound.IssuedAt = iat.Add(time.Hour), iat.Add(-time.Hour)
			plainC := claims("alice", "read")
			plainC.ExpiresAt, plainC.IssuedAt = bound.ExpiresAt, bound.IssuedAt
			tok := e.is.Token(b, bound, testissuer.WithKey(testissuer.KidES256))
			plain := e.is.Token(b, plainC, testissuer.WithKey(testissuer.KidES256))
			bearerReq := httptest.NewRequest(http.MethodPost, dpopURL, nil)
			bearerReq.Header.Set("Authorization", "Bearer "+plain)
			dpopReq := httptest.NewRequest(http.MethodPost, dpopURL, nil)
			dpopReq.Header.Set("Authorization", "DPoP "+tok)
			var bearerTime, dpopTime, sigTime time.Duration
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				b.StopTimer()
				proof, err := k.Sign(testissuer.Proof{Method: http.MethodPost, URL: dpopURL, Token: tok})
				if err != nil {
					b.Fatal(err)
				}
				dpopReq.Header.Set("DPoP", proof)
				dot := strings.LastIndexByte(proof, '.')
				sig, err := base64.RawURLEncoding.DecodeString(proof[dot+1:])
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				if _, err := a.Authenticate(bearerReq); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := a.Authenticate(dpopReq); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if vf.Verify([]byte(proof[:dot]), sig, pub) != nil {
					b.Fatal("signature")
				}
				sigTime += time.Since(t2)
				dpopTime += t2.Sub(t1)
				bearerTime += t1.Sub(t0)
				n++
			}
			b.ReportMetric(float64(bearerTime.Nanoseconds())/float64(n), "bearer-ns/op")
			b.ReportMetric(float64(dpopTime.Nanoseconds())/float64(n), "dpop-ns/op")
			b.ReportMetric(float64((dpopTime-bearerTime).Nanoseconds())/float64(n), "proof-ns/op")
			b.ReportMetric(float64(dpopTime)/float64(bearerTime), "dpop/bearer")
			b.ReportMetric(float64(sigTime.Nanoseconds())/float64(n), "sig-ns/op")
			b.ReportMetric(float64((dpopTime-bearerTime-sigTime).Nanoseconds())/float64(n), "other-ns/op")
		})
	}
}

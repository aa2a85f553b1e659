package authn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
)

// Benchmarks beside their baselines (run together):
//
//	BenchmarkVerify/<alg>/jwx       jwx's own jwt.ParseString with WithKeySet and WithValidate (baseline)
//	BenchmarkVerify/<alg>/authn     JWTVerifier.Verify, first verification (no cache)
//	BenchmarkCache/hit              Cache.Verify of a cached token
//	BenchmarkHandler/bare           a bare handler (baseline)
//	BenchmarkHandler/authenticated  the same behind Authenticator.Handler with a cached token
func BenchmarkVerify(b *testing.B) {
	e, v := benchVerifier(b)
	doc, err := e.is.JWKS()
	if err != nil {
		b.Fatal(err)
	}
	set, err := jwk.Parse(doc)
	if err != nil {
		b.Fatal(err)
	}
	for _, kid := range []string{testissuer.KidRS256, testissuer.KidES256, testissuer.KidEdDSA} {
		tok, err := e.is.Sign(claims("alice", "read", "write"), testissuer.WithKey(kid))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(kid+"/jwx", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jwt.ParseString(tok, jwt.WithKeySet(set), jwt.WithValidate(true),
					jwt.WithIssuer(e.is.ID()), jwt.WithAudience(testResource), jwt.WithClock(jwt.ClockFunc(e.clock.Now))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kid+"/authn", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyInterleaved alternates the jwx baseline and Verify on
// every iteration, so load from other processes hits both alike, and
// reports each one's mean and their ratio (authn/jwx, issue 12: at or under jwx, ≤ 1.0).
func BenchmarkVerifyInterleaved(b *testing.B) {
	e, v := benchVerifier(b)
	doc, err := e.is.JWKS()
	if err != nil {
		b.Fatal(err)
	}
	set, err := jwk.Parse(doc)
	if err != nil {
		b.Fatal(err)
	}
	for _, kid := range []string{testissuer.KidRS256, testissuer.KidES256, testissuer.KidEdDSA} {
		tok, err := e.is.Sign(claims("alice", "read", "write"), testissuer.WithKey(kid))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(kid, func(b *testing.B) {
			var jwxTime, ourTime time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := jwt.ParseString(tok, jwt.WithKeySet(set), jwt.WithValidate(true),
					jwt.WithIssuer(e.is.ID()), jwt.WithAudience(testResource), jwt.WithClock(jwt.ClockFunc(e.clock.Now))); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
				jwxTime += t1.Sub(t0)
				ourTime += time.Since(t1)
			}
			benchpair.Report(b, "op", "jwx", jwxTime, "authn", ourTime)
		})
	}
}

func BenchmarkCache(b *testing.B) {
	e, v := benchVerifier(b)
	c := NewCache(v, CacheOptions{Now: e.clock.Now})
	tok, err := e.is.Sign(claims("alice", "read", "write"))
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.Verify(context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := c.Verify(context.Background(), tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkHandler(b *testing.B) {
	e, v := benchVerifier(b)
	a, err := NewAuthenticator(NewCache(v, CacheOptions{Now: e.clock.Now}), Options{Resource: testResource, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := e.is.Sign(claims("alice", "read"))
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	run := func(b *testing.B, h http.Handler) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatal(w.Code)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, next) })
	b.Run("authenticated", func(b *testing.B) { run(b, a.Handler(next)) })
}

// admitAll is a Throttle that admits everything and counts nothing.
type admitAll struct{}

func (admitAll) Admit(*http.Request) (bool, time.Duration) { return true, 0 }
func (admitAll) Refused(*http.Request)                     {}

// BenchmarkThrottleInterleaved measures what the refused-credentials
// Throttle costs an honest request (issue 27: a token verified lately is
// served without asking the Throttle; the cost is its digest and a map
// lookup): a cached token authenticated without a Throttle and with one,
// alternately on every iteration, reporting each one's mean and their
// ratio (throttle/none).
func BenchmarkThrottleInterleaved(b *testing.B) {
	e, v := benchVerifier(b)
	c := NewCache(v, CacheOptions{Now: e.clock.Now})
	plain, err := NewAuthenticator(c, Options{Resource: testResource, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	throttled, err := NewAuthenticator(c, Options{Resource: testResource, Logger: discardLogger(), Throttle: admitAll{}})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := e.is.Sign(claims("alice", "read"))
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	var noneTime, throttleTime time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := plain.Authenticate(r); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := throttled.Authenticate(r); err != nil {
			b.Fatal(err)
		}
		throttleTime += time.Since(t1)
		noneTime += t1.Sub(t0)
	}
	benchpair.Report(b, "op", "none", noneTime, "throttle", throttleTime)
}

// benchVerifier returns a test environment and a JWT verifier of its
// issuer that logs nothing, closed when the benchmark ends.
func benchVerifier(b *testing.B) (*env, *JWTVerifier) {
	b.Helper()
	e := newEnvTB(b)
	o := e.opts()
	o.Logger = discardLogger()
	v, err := NewJWTVerifier(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = v.Close() })
	return e, v
}

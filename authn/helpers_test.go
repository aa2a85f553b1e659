package authn

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
)

const testResource = "https://mcp.example.com/mcp"

// fakeClock is an injected clock shared by the issuer and the verifier.
type fakeClock = fakeclock.Clock

func newClock() *fakeClock { return fakeclock.New(time.Unix(1_800_000_000, 0)) }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer = logbuf.Buffer

func newLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

type env struct {
	is    *testissuer.Issuer
	clock *fakeClock
	logs  *syncBuffer
	log   *slog.Logger

	// attackerURL is a server the attacker controls; attackerHits counts
	// the requests it receives (A6: must stay 0).
	attackerURL  string
	attackerHits *atomic.Int64
}

func newEnv(t *testing.T) *env { return newEnvTB(t) }

// newEnvF is newEnv for fuzz targets.
func newEnvF(f *testing.F) *env { return newEnvTB(f) }

func newEnvTB(t testing.TB) *env {
	t.Helper()
	clk := newClock()
	log, buf := newLogger()
	is := testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now})
	hits := &atomic.Int64{}
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(attacker.Close)
	return &env{is: is, clock: clk, logs: buf, log: log, attackerURL: attacker.URL, attackerHits: hits}
}

func (e *env) opts() JWTOptions {
	return JWTOptions{
		Issuer:   e.is.ID(),
		Resource: testResource,
		JWKSURL:  e.is.JWKSURL(),
		Logger:   e.log,
		Now:      e.clock.Now,
	}
}

func (e *env) verifier(t *testing.T, mod func(*JWTOptions)) *JWTVerifier {
	t.Helper()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	v, err := NewJWTVerifier(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v
}

// keyStoreGoroutines counts the goroutines a keyStore starts (the
// refresher and fetches).
func keyStoreGoroutines() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	s := string(buf[:n])
	return strings.Count(s, "jwks.(*Store).loop(") + strings.Count(s, "jwks.(*Store).run(")
}

func claims(sub string, scopes ...string) testissuer.Claims {
	return testissuer.Claims{Subject: sub, ClientID: "client-1", Scopes: scopes}
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func compactFor(alg string, key any, header string, payload []byte) (string, error) {
	return testissuer.Compact(alg, key, []byte(header), payload)
}

// goodPayload is a valid claim set for testResource.
func (e *env) goodPayload(t *testing.T) []byte {
	t.Helper()
	p, err := e.is.Payload(claims("alice"))
	require.NoError(t, err)
	return p
}

// addRawKey publishes a fresh RSA key under kid with extra JWK members
// (for example `"use":"enc"`) and returns its private key.
func (e *env) addRawKey(t *testing.T, kid, extra string) crypto.Signer {
	t.Helper()
	priv, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	jk, err := jwk.FromRaw(priv.Public())
	require.NoError(t, err)
	require.NoError(t, jk.Set(jwk.KeyIDKey, kid))
	raw, err := json.Marshal(jk)
	require.NoError(t, err)
	if extra != "" {
		raw = append(raw[:len(raw)-1], []byte(","+extra+"}")...)
	}
	e.is.AddRawJWK(raw)
	return priv
}

func withType(typ string) testissuer.SignOption { return testissuer.WithType(typ) }

func withHeader(name string, v any) testissuer.SignOption { return testissuer.WithHeader(name, v) }

func withAudience(c testissuer.Claims, aud ...string) testissuer.Claims {
	c.Audience = aud
	return c
}

func withExpiry(c testissuer.Claims, exp time.Time) testissuer.Claims {
	c.ExpiresAt = exp
	c.IssuedAt = exp.Add(-time.Hour)
	return c
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// withPrincipal returns r with p in its context, as a service's own
// middleware would put it there.
func withPrincipal(t testing.TB, r *http.Request, p principal.Principal) *http.Request {
	t.Helper()
	ctx, err := principal.NewContext(r.Context(), p)
	require.NoError(t, err)
	return r.WithContext(ctx)
}

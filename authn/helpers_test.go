package authn

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testissuer"
	"github.com/stretchr/testify/require"
)

const testResource = "https://mcp.example.com/mcp"

// fakeClock is an injected clock shared by the issuer and the verifier.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

type env struct {
	is    *testissuer.Issuer
	clock *fakeClock
	logs  *syncBuffer
	log   *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := newClock()
	log, buf := newLogger()
	is := testissuer.Start(t, testissuer.Options{Audience: testResource, Now: clk.Now})
	return &env{is: is, clock: clk, logs: buf, log: log}
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

// keyStoreGoroutines counts goroutines running keyStore code.
func keyStoreGoroutines() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "authn.(*keyStore)")
}

func claims(sub string, scopes ...string) testissuer.Claims {
	return testissuer.Claims{Subject: sub, ClientID: "client-1", Scopes: scopes}
}

package authn

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingVerifier accepts every token "tok-<n>" with the given expiry and
// counts calls.
type countingVerifier struct {
	calls atomic.Int64
	exp   time.Time
	err   error
}

func (c *countingVerifier) Verify(ctx context.Context, tok string) (principal.Principal, time.Time, error) {
	c.calls.Add(1)
	if c.err != nil {
		return principal.Principal{}, time.Time{}, c.err
	}
	return principal.Principal{Subject: tok, Scopes: []string{"a", "b"}, Audience: testResource}, c.exp, nil
}

func TestCacheHitAndExpiry(t *testing.T) {
	clk := newClock()
	cv := &countingVerifier{exp: clk.Now().Add(2 * time.Minute)}
	c := NewCache(cv, CacheOptions{Now: clk.Now, MaxTTL: 5 * time.Minute})
	for range 3 {
		p, exp, err := c.Verify(context.Background(), "tok-1")
		require.NoError(t, err)
		assert.Equal(t, "tok-1", p.Subject)
		assert.Equal(t, cv.exp, exp)
	}
	assert.Equal(t, int64(1), cv.calls.Load())

	// The returned scopes are a copy: a handler mutating them cannot poison the cache.
	p, _, _ := c.Verify(context.Background(), "tok-1")
	p.Scopes[0] = "admin"
	p, _, _ = c.Verify(context.Background(), "tok-1")
	assert.Equal(t, []string{"a", "b"}, p.Scopes)

	// The entry dies with the token.
	clk.Advance(2*time.Minute - time.Second)
	_, _, _ = c.Verify(context.Background(), "tok-1")
	assert.Equal(t, int64(1), cv.calls.Load())
	clk.Advance(time.Second)
	_, _, _ = c.Verify(context.Background(), "tok-1")
	assert.Equal(t, int64(2), cv.calls.Load())
}

func TestCacheMaxTTL(t *testing.T) {
	clk := newClock()
	cv := &countingVerifier{exp: clk.Now().Add(time.Hour)}
	c := NewCache(cv, CacheOptions{Now: clk.Now, MaxTTL: time.Minute})
	_, _, _ = c.Verify(context.Background(), "tok")
	clk.Advance(59 * time.Second)
	_, _, _ = c.Verify(context.Background(), "tok")
	assert.Equal(t, int64(1), cv.calls.Load())
	clk.Advance(time.Second)
	_, _, _ = c.Verify(context.Background(), "tok")
	assert.Equal(t, int64(2), cv.calls.Load())

	// Zero expiry (unknown): MaxTTL applies. Already expired: not cached.
	cv.exp = time.Time{}
	_, _, _ = c.Verify(context.Background(), "zero")
	_, _, _ = c.Verify(context.Background(), "zero")
	assert.Equal(t, int64(3), cv.calls.Load())
	cv.exp = clk.Now().Add(-time.Second)
	_, _, _ = c.Verify(context.Background(), "past")
	_, _, _ = c.Verify(context.Background(), "past")
	assert.Equal(t, int64(5), cv.calls.Load())
}

func TestCacheNeverCachesFailures(t *testing.T) {
	for _, e := range []error{ErrInvalidToken, &UnavailableError{}, fmt.Errorf("x")} {
		cv := &countingVerifier{err: e}
		c := NewCache(cv, CacheOptions{})
		for range 3 {
			_, _, err := c.Verify(context.Background(), "tok")
			assert.ErrorIs(t, err, e)
		}
		assert.Equal(t, int64(3), cv.calls.Load())
		assert.Zero(t, c.Len())
	}
}

func TestCacheBoundedAndKeyedByDigest(t *testing.T) {
	clk := newClock()
	cv := &countingVerifier{exp: clk.Now().Add(time.Hour)}
	c := NewCache(cv, CacheOptions{Now: clk.Now, MaxEntries: 100})
	for i := range 1000 {
		_, _, err := c.Verify(context.Background(), fmt.Sprintf("tok-%d", i))
		require.NoError(t, err)
		require.LessOrEqual(t, c.Len(), 100)
	}
	assert.Equal(t, 100, c.Len())
	// Keys are digests, never the token.
	c.mu.RLock()
	_, ok := c.m[sha256.Sum256([]byte("tok-999"))]
	c.mu.RUnlock()
	assert.True(t, ok)

	// Expired entries are evicted before live ones.
	clk.Advance(2 * time.Hour)
	cv.exp = clk.Now().Add(time.Hour)
	_, _, _ = c.Verify(context.Background(), "fresh")
	assert.Less(t, c.Len(), 100)
}

func TestCacheConcurrent(t *testing.T) {
	cv := &countingVerifier{exp: time.Now().Add(time.Hour)}
	c := NewCache(cv, CacheOptions{MaxEntries: 50})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				p, _, err := c.Verify(context.Background(), fmt.Sprintf("tok-%d", (i*g)%80))
				assert.NoError(t, err)
				assert.Len(t, p.Scopes, 2)
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Len(), 50)
}

// End to end: a cached JWT skips the signature check but not expiry.
func TestCacheWithJWTVerifier(t *testing.T) {
	e := newEnv(t)
	v := e.verifier(t, nil)
	c := NewCache(v, CacheOptions{Now: e.clock.Now})
	tok := e.is.Token(t, claims("alice"))
	_, _, err := c.Verify(context.Background(), tok)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	e.is.Close() // keys gone: only the cache can answer now
	_, _, err = c.Verify(context.Background(), tok)
	assert.NoError(t, err)
	e.clock.Advance(time.Hour + 2*time.Minute) // past exp + leeway
	_, _, err = c.Verify(context.Background(), tok)
	assert.ErrorIs(t, err, ErrInvalidToken, "expired: not served from the cache")
}

package authn

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/evict"
	"github.com/mcpkit/mcpkit/internal/nilness"

	"github.com/mcpkit/mcpkit/principal"
)

// CacheOptions configures a [Cache]. The zero value is valid.
type CacheOptions struct {
	// MaxEntries bounds the number of cached verifications. Zero means
	// 10 000. When full, expired entries are dropped first, otherwise a
	// random one.
	MaxEntries int

	// MaxTTL bounds how long a verification is reused, whatever the token's
	// expiry: it is the window in which a revoked token still passes. Zero
	// means 5 minutes.
	MaxTTL time.Duration

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Cache is a [Verifier] that remembers successful verifications of another
// Verifier, so a repeated token skips the signature check or the
// introspection call. Entries are keyed by the SHA-256 digest of the token
// (the token itself is never stored) and live until the token's expiry or
// MaxTTL, whichever comes first. Failures are never cached. It is safe for
// concurrent use.
type Cache struct {
	v      Verifier
	max    int
	maxTTL time.Duration
	now    func() time.Time

	mu sync.RWMutex
	m  map[[sha256.Size]byte]cacheEntry
}

var errCacheZero = &misuseError{"authn: Cache not made by NewCache (or made with a nil Verifier)"}

// verifierResource is the resource of the Verifier behind the cache, ""
// when it is not one of this package's.
func (c *Cache) verifierResource() (string, bool) {
	if c == nil || c.m == nil || c.v == nil || nilness.Is(c.v) {
		return "", false
	}
	if kv, ok := c.v.(kitVerifier); ok {
		return kv.verifierResource()
	}
	return "", true
}

type cacheEntry struct {
	p      principal.Principal
	exp    time.Time // the token's expiry, returned to callers
	expire time.Time // when this entry stops being used
}

var _ Verifier = (*Cache)(nil)

// NewCache returns a Cache in front of v. Negative options are treated as
// zero (the defaults). A nil v, or a nil pointer in v, makes a Cache that
// [NewAuthenticator] refuses and whose Verify answers an error (500).
func NewCache(v Verifier, opts CacheOptions) *Cache {
	if v != nil && nilness.Is(v) {
		v = nil // Verify answers errCacheZero; NewAuthenticator refuses it
	}
	c := &Cache{v: v, max: opts.MaxEntries, maxTTL: opts.MaxTTL, now: opts.Now}
	if c.max <= 0 {
		c.max = 10000
	}
	if c.maxTTL <= 0 {
		c.maxTTL = 5 * time.Minute
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.m = make(map[[sha256.Size]byte]cacheEntry, min(c.max, 1024))
	return c
}

// maxCachedToken is the longest token the cache keeps: far beyond any
// verifier's MaxTokenBytes, so that only absurd tokens skip it.
const maxCachedToken = 256 << 10

// Verify returns the cached verification of token when there is a live
// one, and otherwise asks the underlying Verifier and caches a success.
// The returned principal's Scopes is a fresh copy.
func (c *Cache) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	if c == nil || c.m == nil || c.v == nil {
		return principal.Principal{}, time.Time{}, errCacheZero
	}
	if len(token) > maxCachedToken { // not worth hashing; the verifier rejects it
		return c.v.Verify(ctx, token)
	}
	key := digest(token)
	now := c.now()
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if ok && now.Before(e.expire) {
		p := e.p
		p.Scopes = slices.Clone(p.Scopes)
		return p, e.exp, nil
	}
	p, exp, err := c.v.Verify(ctx, token)
	if err != nil {
		return p, exp, err
	}
	expire := now.Add(c.maxTTL)
	if !exp.IsZero() && exp.Before(expire) {
		expire = exp
	}
	if now.Before(expire) {
		stored := p
		stored.Scopes = slices.Clone(p.Scopes)
		c.mu.Lock()
		if _, present := c.m[key]; !present && len(c.m) >= c.max {
			c.evictLocked(now)
		}
		c.m[key] = cacheEntry{p: stored, exp: exp, expire: expire}
		c.mu.Unlock()
	}
	return p, exp, nil
}

// hashBufs recycles the buffers a token is copied into for hashing, so a
// cache hit does not allocate; each buffer is cleared after use.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func digest(token string) [sha256.Size]byte {
	bp := hashBufs.Get().(*[]byte)
	b := append((*bp)[:0], token...)
	sum := sha256.Sum256(b)
	clear(b)
	*bp = b[:0]
	hashBufs.Put(bp)
	return sum
}

// evictLocked makes room: it drops the expired entries among a sample, or
// if there are none, one entry at random (map iteration starts at a random
// position).
func (c *Cache) evictLocked(now time.Time) {
	evict.Sample(c.m, func(e cacheEntry) bool { return !now.Before(e.expire) })
}

// Len returns the number of cached entries, expired ones included.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

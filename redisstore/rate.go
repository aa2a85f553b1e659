package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// DefaultRatePrefix begins the keys of a [RateStore] when
// RateOptions.Prefix is empty.
const DefaultRatePrefix = "mcpkit:rate:"

// RateOptions configures a [RateStore]. The zero value is valid.
type RateOptions struct {
	// Prefix begins every key of the store. Empty means
	// DefaultRatePrefix. Give each application (or environment) sharing
	// a Redis its own.
	Prefix string
}

// RateStore is a [ratelimit.Store] in Redis: the token buckets of every
// Limiter (every instance of a fleet) that uses it, so a caller spread
// over the instances gets one budget. Each Take or Peek is one script
// call (one round trip) running GCRA, the token bucket kept as a single
// number: the time at which the bucket will be full again. A bucket's key
// is the prefix and the SHA-256 of the Limiter's bucket key (which holds
// an identity key or an address), never the key itself, and it expires
// when the bucket is full again, so Redis holds only the callers that
// spent tokens lately (about 83 bytes each, measured by BenchmarkRedisMemory). It is
// safe for concurrent use.
type RateStore struct {
	client redis.UniversalClient
	prefix string
	gates  gates
}

var _ ratelimit.Store = (*RateStore)(nil)

// NewRateStore returns a RateStore using client. It does not connect.
func NewRateStore(client redis.UniversalClient, o RateOptions) (*RateStore, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = DefaultRatePrefix
	}
	return &RateStore{client: client, prefix: o.Prefix}, nil
}

// rateScript is GCRA (the generic cell rate algorithm) on one key holding
// the bucket's theoretical arrival time, tat (µs): the bucket is full at
// tat, and each call moves tat one emission interval later.
//
//	ARGV: now (µs), the interval (µs a token), the burst's span (µs: the
//	      burst times the interval), 1 to take (0 to peek).
//
// A call is allowed when the new tat is within the burst's span of now
// (there is a token: the bucket holds (span − (tat − now)) / interval);
// it returns 0 then (and, taking, stores the new tat, expiring when the
// bucket is full again), else the µs until a token.
var rateScript = newScript(`
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new = tat + interval
local over = new - now - tonumber(ARGV[3])
if over > 0 then return math.ceil(over) end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[1], string.format('%.0f', math.ceil(new)), 'PX', math.ceil((new - now) / 1000))
end
return 0
`)

// Take takes one token from bucket b at now, and reports whether there
// was one; when not, retry is how long until there will be.
func (s *RateStore) Take(ctx context.Context, b ratelimit.Bucket, now time.Time) (ok bool, retry time.Duration, err error) {
	return s.run(ctx, b, now, 1)
}

// Peek reports whether bucket b has a token at now, taking nothing.
func (s *RateStore) Peek(ctx context.Context, b ratelimit.Bucket, now time.Time) (ok bool, retry time.Duration, err error) {
	return s.run(ctx, b, now, 0)
}

func (s *RateStore) run(ctx context.Context, b ratelimit.Bucket, now time.Time, take int) (bool, time.Duration, error) {
	if s == nil || s.client == nil {
		return false, 0, errStoreNotMade
	}
	if !(b.PerSecond > 0) || math.IsInf(b.PerSecond, 0) || b.Burst < 1 {
		return false, 0, errors.New("redisstore: rate: a bucket needs a positive rate and burst")
	}
	interval := 1e6 / b.PerSecond
	key := s.Key(b.Key)
	g := s.gates.For(ctx, s.client, key)
	if !g.allow() {
		return false, 0, ErrUnavailable
	}
	wait, err := rateScript.run(ctx, s.client, []string{key},
		now.UnixMicro(), interval, float64(b.Burst)*interval, take).Int64()
	g.done(ctx, err)
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: rate: %w", err)
	}
	if wait > 0 {
		return false, time.Duration(wait) * time.Microsecond, nil
	}
	return true, 0, nil
}

// Key returns the Redis key of the bucket key k: the prefix and the
// base64url SHA-256 of k.
func (s *RateStore) Key(k string) string { return hashKey(s.prefix, k) }

// hashKey returns prefix followed by the base64url (unpadded) SHA-256 of k.
func hashKey(prefix, k string) string {
	sum := sha256.Sum256([]byte(k))
	buf := make([]byte, len(prefix)+base64.RawURLEncoding.EncodedLen(len(sum)))
	copy(buf, prefix)
	base64.RawURLEncoding.Encode(buf[len(prefix):], sum[:])
	return string(buf)
}

package authn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"
)

// replayCache remembers the proofs accepted recently, so that none is
// accepted twice (RFC 9449 §11.1). It keeps two generations of entries and
// rotates them every period: an entry lives between one and two periods,
// at least as long as a proof with its jti could still be accepted (the
// period is twice the proof window). Memory is bounded by max entries in
// both generations together; when they are full of live entries, add
// refuses rather than forgets one (fail closed). It is safe for
// concurrent use.
type replayCache struct {
	max    int
	period time.Duration

	mu        sync.Mutex
	rotated   time.Time // when cur was started; zero before the first add
	cur, prev map[[16]byte]struct{}
}

type replayResult uint8

const (
	replayFresh replayResult = iota // remembered now
	replaySeen                      // seen before: a replay
	replayFull                      // no room: refused
)

func newReplayCache(max int, period time.Duration) *replayCache {
	return &replayCache{max: max, period: period, cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{}}
}

// add remembers k at time now unless it is remembered already.
func (c *replayCache) add(k [16]byte, now time.Time) replayResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch d := now.Sub(c.rotated); {
	case c.rotated.IsZero() || d >= 2*c.period:
		clear(c.prev)
		clear(c.cur)
		c.rotated = now
	case d >= c.period:
		c.prev, c.cur = c.cur, c.prev
		clear(c.cur)
		c.rotated = c.rotated.Add(c.period)
	}
	if _, ok := c.cur[k]; ok {
		return replaySeen
	}
	if _, ok := c.prev[k]; ok {
		return replaySeen
	}
	if len(c.cur)+len(c.prev) >= c.max {
		return replayFull
	}
	c.cur[k] = struct{}{}
	return replayFresh
}

// untilRotation is how long until the older generation is dropped.
func (c *replayCache) untilRotation(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.rotated.Add(c.period).Sub(now), time.Second)
}

// len returns the number of remembered proofs.
func (c *replayCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}

// nonceSource issues and checks server nonces (RFC 9449 §9) without
// keeping state: a nonce is its issue time (Unix seconds) and an HMAC of
// it, base64url, valid for life after issue.
type nonceSource struct {
	secret []byte
	life   time.Duration
}

const nonceMACBytes = 16

func (n *nonceSource) mac(ts []byte) []byte {
	m := hmac.New(sha256.New, n.secret)
	m.Write([]byte("mcpkit dpop nonce v1\x00"))
	m.Write(ts)
	return m.Sum(nil)[:nonceMACBytes]
}

// issue returns a fresh nonce.
func (n *nonceSource) issue(now time.Time) string {
	var raw [8 + nonceMACBytes]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(now.Unix()))
	copy(raw[8:], n.mac(raw[:8]))
	return b64.EncodeToString(raw[:])
}

// valid reports whether s is a nonce this source issued within life
// before now (and not after now, beyond a second of rounding).
func (n *nonceSource) valid(s string, now time.Time) bool {
	var raw [8 + nonceMACBytes]byte
	if len(s) != b64.EncodedLen(len(raw)) {
		return false
	}
	if k, err := b64.Decode(raw[:], []byte(s)); err != nil || k != len(raw) {
		return false
	}
	if !hmac.Equal(raw[8:], n.mac(raw[:8])) {
		return false
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0)
	return !issued.After(now.Add(time.Second)) && now.Sub(issued) <= n.life
}

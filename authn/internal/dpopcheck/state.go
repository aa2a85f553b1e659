package dpopcheck

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"time"
)

// replayCache remembers the proofs accepted recently, so that none is
// accepted twice (RFC 9449 §11.1). It keeps two generations of entries and
// rotates them every period: an entry lives between one and two periods,
// at least as long as a proof with its jti could still be accepted (the
// period is twice the proof window). Memory is bounded by max entries in
// both generations together, and each caller (an identity hash, see
// [Checker.identity]) holds at most share of them: a caller over its
// share is refused, and so are all callers when the generations are full
// of live entries; add never forgets a live entry (fail closed). A replay
// is reported as one whatever the share or the fill. It is safe for
// concurrent use.
type replayCache struct {
	max, share int
	period     time.Duration
	seed       maphash.Seed // keys the identity hashes

	mu        sync.Mutex
	rotated   time.Time // when cur was started; zero before the first add
	cur, prev map[[16]byte]struct{}
	// curBy and prevBy count each caller's entries in cur and prev; a
	// caller is counted only while it has an entry, so each holds at most
	// as many callers as its generation holds entries.
	curBy, prevBy map[uint64]int
	// warned is when a refusal of each kind was last reported for the log
	// (indexed by replayResult), so that a flood logs once a period.
	warned [replayOverShare + 1]time.Time
}

type replayResult uint8

const (
	replayFresh     replayResult = iota // remembered now
	replaySeen                          // seen before: a replay
	replayFull                          // no room at all: refused
	replayOverShare                     // the caller holds its share: refused
)

func newReplayCache(max, share int, period time.Duration) *replayCache {
	return &replayCache{
		max: max, share: share, period: period, seed: maphash.MakeSeed(),
		cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{},
		curBy: map[uint64]int{}, prevBy: map[uint64]int{},
	}
}

// add remembers k, a proof of the caller id, at time now unless it is
// remembered already. A refusal (replayFull, replayOverShare) comes with
// when to retry, the time until the caller's or the cache's oldest entry
// is dropped, and warn, true for the first refusal of its kind in a
// period (the one to log).
func (c *replayCache) add(k [16]byte, id uint64, now time.Time) (res replayResult, retry time.Duration, warn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch d := now.Sub(c.rotated); {
	case c.rotated.IsZero() || d >= 2*c.period:
		clear(c.prev)
		clear(c.cur)
		clear(c.prevBy)
		clear(c.curBy)
		c.rotated = now
	case d >= c.period:
		c.prev, c.cur = c.cur, c.prev
		c.prevBy, c.curBy = c.curBy, c.prevBy
		clear(c.cur)
		clear(c.curBy)
		c.rotated = c.rotated.Add(c.period)
	}
	if _, ok := c.cur[k]; ok {
		return replaySeen, 0, false
	}
	if _, ok := c.prev[k]; ok {
		return replaySeen, 0, false
	}
	held, older := c.curBy[id], c.prevBy[id]
	switch {
	case held+older >= c.share:
		res = replayOverShare
	case len(c.cur)+len(c.prev) >= c.max:
		res, older = replayFull, len(c.prev)
	default:
		c.cur[k] = struct{}{}
		c.curBy[id] = held + 1
		return replayFresh, 0, false
	}
	// Room comes back when the older generation is dropped, or, if the
	// entries in the way are all in the current one, a period later.
	retry = max(c.rotated.Add(c.period).Sub(now), time.Second)
	if older == 0 {
		retry += c.period
	}
	if w := c.warned[res]; w.IsZero() || now.Sub(w) >= c.period {
		c.warned[res], warn = now, true
	}
	return res, retry, warn
}

// len returns the number of remembered proofs and of callers holding them.
func (c *replayCache) len() (proofs, callers int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev), len(c.curBy) + len(c.prevBy)
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

package sealedcursor

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var (
	// ErrInvalid is returned by Open for every cursor that does not
	// authenticate for the binding given: malformed, tampered, foreign,
	// sealed under an unknown key, or dated in the future.
	ErrInvalid = errors.New("sealedcursor: invalid cursor")
	// ErrExpired is returned by Open for an authentic cursor whose first
	// page is older than the TTL.
	ErrExpired = errors.New("sealedcursor: expired cursor")
	// ErrPayloadTooLarge is returned by Seal for a payload over MaxPayload.
	ErrPayloadTooLarge = errors.New("sealedcursor: payload too large")
)

const (
	// MaxPayload is the largest payload Seal accepts, in bytes.
	MaxPayload = 512
	// DefaultTTL is the lifetime of a traversal when Options.TTL is zero.
	DefaultTTL = 15 * time.Minute
	// DefaultSkew is the future clock skew tolerated when Options.Skew is zero.
	DefaultSkew = 5 * time.Second

	version   = 0x01
	nonceSize = 12
	tagSize   = 16
	timeSize  = 8
	headSize  = 2 // version, key id
	overhead  = headSize + nonceSize + timeSize + tagSize
	adPrefix  = "mcpkit/sealedcursor/v1\x00"
)

// strictURL is the canonical decoder: base64url, no padding, zero
// trailing bits. Strict returns a copy, so it is built once.
var strictURL = base64.RawURLEncoding.Strict()

// maxLen is the length of the longest cursor Seal can produce; anything
// longer is rejected before decoding.
var maxLen = SealedLen(MaxPayload)

// SealedLen returns the exact length of the cursor string that Seal produces
// for a payload of payloadLen bytes. Callers use it to reserve room for a
// cursor in a size-bounded response.
func SealedLen(payloadLen int) int {
	return base64.RawURLEncoding.EncodedLen(overhead + payloadLen)
}

// Options configures a [Sealer]. The zero value is valid.
type Options struct {
	// TTL is how long a traversal lives after its first page. Zero means
	// DefaultTTL (15 minutes).
	TTL time.Duration
	// Skew is how far in the future a first-page time may lie (clock
	// differences between replicas sharing a key ring). Zero means
	// DefaultSkew (5 seconds).
	Skew time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Keys is the key ring. Nil means a fresh random key for this Sealer:
	// cursors do not survive a restart and are not accepted by other
	// replicas.
	Keys *KeyRing
}

// Sealer seals and opens cursors. It is safe for concurrent use.
type Sealer struct {
	ttl, skew time.Duration
	now       func() time.Time
	keys      *KeyRing
}

// New returns a Sealer. It returns an error for a negative TTL or Skew, a
// KeyRing not made by NewKeyRing, or when no random key can be drawn.
func New(opts Options) (*Sealer, error) {
	if opts.TTL < 0 || opts.Skew < 0 {
		return nil, errors.New("sealedcursor: TTL and Skew must not be negative")
	}
	if opts.Keys != nil && opts.Keys.aeads[opts.Keys.active] == nil {
		return nil, errors.New("sealedcursor: Options.Keys was not made by NewKeyRing")
	}
	s := &Sealer{ttl: opts.TTL, skew: opts.Skew, now: opts.Now, keys: opts.Keys}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.skew == 0 {
		s.skew = DefaultSkew
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.keys == nil {
		kr, err := processKeyRing()
		if err != nil {
			return nil, err
		}
		s.keys = kr
	}
	return s, nil
}

// MustNew is like New but panics on error. It is meant for tests and
// program start-up.
func MustNew(opts Options) *Sealer {
	s, err := New(opts)
	if err != nil {
		panic(err)
	}
	return s
}

// Now returns the Sealer's current time.
func (s *Sealer) Now() time.Time { return s.now() }

// TTL returns the lifetime of a traversal.
func (s *Sealer) TTL() time.Duration { return s.ttl }

// Seal returns a cursor carrying payload and the time of the traversal's
// first page, bound to binding. The binding is authenticated but not
// stored: Open must be given the same bytes. Each call draws a new random
// nonce, so sealing the same input twice gives different cursors.
func (s *Sealer) Seal(binding, payload []byte, firstIssued time.Time) (string, error) {
	b, err := s.AppendSeal(nil, binding, payload, firstIssued)
	return string(b), err
}

// AppendSeal is like Seal but appends the cursor to dst and returns the
// extended slice, so that a caller building a response can write the cursor
// in place without allocating.
func (s *Sealer) AppendSeal(dst, binding, payload []byte, firstIssued time.Time) ([]byte, error) {
	if len(payload) > MaxPayload {
		return dst, ErrPayloadTooLarge
	}
	if firstIssued.IsZero() {
		return dst, errors.New("sealedcursor: zero first-issued time")
	}
	kid := s.keys.active
	aead := s.keys.aeads[kid]

	w := workPool.Get().(*work)
	defer workPool.Put(w)
	raw := w.raw[:headSize+nonceSize+timeSize+len(payload)]
	raw[0], raw[1] = version, kid
	nonce := raw[headSize : headSize+nonceSize]
	if _, err := rand.Read(nonce); err != nil {
		return dst, fmt.Errorf("sealedcursor: reading nonce: %w", err)
	}
	plain := raw[headSize+nonceSize:]
	binary.BigEndian.PutUint64(plain, uint64(firstIssued.UnixNano()))
	copy(plain[timeSize:], payload)

	w.ad = additionalData(w.ad[:0], raw[:headSize], binding)
	sealed := aead.Seal(plain[:0], nonce, plain, w.ad)
	return base64.RawURLEncoding.AppendEncode(dst, raw[:headSize+nonceSize+len(sealed)]), nil
}

// work is the scratch space of one Seal or Open: the raw cursor, its
// associated data and, for Open, the cursor's text. It is recycled
// through workPool.
type work struct {
	raw [overhead + MaxPayload]byte
	ad  []byte
	src []byte
}

var workPool = sync.Pool{New: func() any { return &work{ad: make([]byte, 0, 256)} }}

// Open checks cursor against binding and returns its payload and the time
// of the traversal's first page. Every failure an attacker controls is
// ErrInvalid; an authentic cursor older than the TTL is ErrExpired.
func (s *Sealer) Open(binding []byte, cursor string) (payload []byte, firstIssued time.Time, err error) {
	return s.AppendOpen(nil, binding, cursor)
}

// AppendOpen is like Open but appends the payload to dst and returns the
// extended slice (dst unchanged on error), so that a caller that parses
// the payload at once can open cursors without allocating.
func (s *Sealer) AppendOpen(dst, binding []byte, cursor string) (payload []byte, firstIssued time.Time, err error) {
	if len(cursor) > maxLen || len(cursor) < SealedLen(0) || hasLineBreak(cursor) {
		return dst, time.Time{}, ErrInvalid
	}
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	w.src = append(w.src[:0], cursor...)
	n, err := strictURL.Decode(w.raw[:], w.src)
	if err != nil || n < overhead {
		return dst, time.Time{}, ErrInvalid
	}
	raw := w.raw[:n]
	if raw[0] != version {
		return dst, time.Time{}, ErrInvalid
	}
	aead := s.keys.aeads[raw[1]]
	if aead == nil {
		return dst, time.Time{}, ErrInvalid
	}
	nonce := raw[headSize : headSize+nonceSize]
	w.ad = additionalData(w.ad[:0], raw[:headSize], binding)
	plain, err := aead.Open(raw[headSize+nonceSize:headSize+nonceSize], nonce, raw[headSize+nonceSize:], w.ad)
	if err != nil || len(plain) < timeSize {
		return dst, time.Time{}, ErrInvalid
	}
	first := time.Unix(0, int64(binary.BigEndian.Uint64(plain)))
	now := s.now()
	if first.Sub(now) > s.skew {
		return dst, time.Time{}, ErrInvalid
	}
	if now.Sub(first) > s.ttl {
		return dst, time.Time{}, ErrExpired
	}
	return append(dst, plain[timeSize:]...), first, nil
}

// additionalData is the AEAD associated data: a domain-separation prefix,
// the cursor header (version, key id) and the caller's binding. It
// appends to dst, a work buffer.
func additionalData(dst, head, binding []byte) []byte {
	ad := append(dst, adPrefix...)
	ad = append(ad, head...)
	return append(ad, binding...)
}

// hasLineBreak reports whether s holds '\r' or '\n': strictURL rejects
// every byte outside the base64url alphabet except those two, which it
// silently skips, so they are refused here.
func hasLineBreak(s string) bool {
	return strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0
}

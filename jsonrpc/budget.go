package jsonrpc

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/principal"
)

// BodyBudget bounds the memory that request bodies hold at once, in
// shares, so that no caller denies another: anonymous callers draw on a
// small pool of their own, each client address on a share of it, and
// each signed-in principal on a share of the rest that it cannot exceed,
// however many connections it opens. A body's
// storage is charged to its caller's share as the storage grows with the
// bytes received (never by the Content-Length a client declares), and
// returned when the body is released. A request whose storage cannot be
// charged is refused with 503 and Retry-After; it costs no other caller
// anything. It is safe for concurrent use.
//
// A share is found by a keyed 64-bit hash of the principal's issuer and
// subject (or client id), or of the address: two callers share one only
// on a collision. Memory is a few words per caller with a body in
// flight.
type BodyBudget struct {
	max      int64 // the whole budget
	anonMax  int64 // the anonymous pool, within max
	addrMax  int64 // one client address's share of the anonymous pool
	shareMax int64 // one principal's share
	anon     atomic.Int64
	signed   atomic.Int64
	seed     maphash.Seed
	shards   [budgetShards]shareShard
}

// BudgetOptions sets the shares of a [BodyBudget]. The zero value is the
// default; each field documents its zero value.
type BudgetOptions struct {
	// Anonymous is the pool that the bodies of anonymous callers hold at
	// most, together; it is reserved within the budget: signed-in callers
	// never draw on it. Zero means 1/16 of the budget (4 MiB of the
	// default 64 MiB): a thousand slow anonymous bodies of 4 KiB each.
	Anonymous int64
	// AnonymousPerAddress is the most the anonymous bodies of one client
	// address (see Limits.ClientAddr; an IPv6 address by its /64) may
	// hold at once, so that one stranger's crowd of slow bodies fills
	// its own share of the anonymous pool, not the pool. Zero means 1/8
	// of Anonymous (512 KiB of the default: 128 slow bodies, or 8 of the
	// largest anonymous ones).
	AnonymousPerAddress int64
	// PerPrincipal is the most the bodies of one signed-in principal may
	// hold at once, across all its requests. Zero means 1/8 of the
	// budget (8 MiB of the default: two bodies of the largest default
	// size at once, or a thousand small ones).
	PerPrincipal int64
}

const budgetShards = 16 // a power of two

type shareShard struct {
	mu   sync.Mutex
	held map[uint64]int64 // by the principal's key hash; absent when zero
	_    [40]byte         // a cache line of its own
}

// NewBodyBudget returns a budget of maxBytes (zero or negative means
// DefaultBodyBudget) with the shares of o. Shares larger than the budget
// are cut to it; the anonymous pool to half of it.
func NewBodyBudget(maxBytes int64, o BudgetOptions) *BodyBudget {
	if maxBytes <= 0 {
		maxBytes = DefaultBodyBudget
	}
	b := &BodyBudget{max: maxBytes, anonMax: o.Anonymous, shareMax: o.PerPrincipal, seed: maphash.MakeSeed()}
	if b.anonMax <= 0 {
		b.anonMax = maxBytes / 16
	}
	b.anonMax = min(b.anonMax, maxBytes/2)
	if b.addrMax = o.AnonymousPerAddress; b.addrMax <= 0 {
		b.addrMax = b.anonMax / 8
	}
	b.addrMax = min(b.addrMax, b.anonMax)
	if b.shareMax <= 0 {
		b.shareMax = maxBytes / 8
	}
	b.shareMax = min(b.shareMax, maxBytes-b.anonMax)
	for i := range b.shards {
		b.shards[i].held = make(map[uint64]int64)
	}
	return b
}

// InUse returns the bytes charged now, anonymous and signed-in callers'
// together.
func (b *BodyBudget) InUse() int64 { return b.anon.Load() + b.signed.Load() }

// account is whose share a body is charged to: a client address's share
// of the anonymous pool, or a principal's share of the rest.
type account struct {
	b    *BodyBudget
	anon bool
	key  uint64 // the principal's or the address's hash
}

// accountOf returns the account of caller in b; for a nil caller
// (anonymous), that of its client address addr.
func (b *BodyBudget) accountOf(caller *principal.Principal, addr netip.Addr) account {
	if caller == nil {
		a := addr.Unmap().WithZone("")
		if a.Is6() {
			p, _ := a.Prefix(64) // one host holds a /64
			a = p.Addr()
		}
		k := a.As16()
		return account{b: b, anon: true, key: maphash.Bytes(b.seed, k[:]) ^ 0x94d049bb133111eb}
	}
	// Issuer and subject (else client id) hashed apart and mixed: no
	// concatenation to allocate, no two identities alike by their text.
	id, kind := caller.Subject, uint64(0x9e3779b97f4a7c15)
	if id == "" {
		id, kind = caller.ClientID, 0xc2b2ae3d27d4eb4f
	}
	k := maphash.String(b.seed, caller.Issuer)*0xff51afd7ed558ccd ^ (maphash.String(b.seed, id) + kind)
	return account{b: b, key: k}
}

// reserve charges n bytes to the account, and reports whether they fit
// both its share and its pool.
func (a account) reserve(n int64) bool {
	share, pool, poolMax := a.b.shareMax, &a.b.signed, a.b.max-a.b.anonMax
	if a.anon {
		share, pool, poolMax = a.b.addrMax, &a.b.anon, a.b.anonMax
	}
	s := &a.b.shards[a.key&(budgetShards-1)]
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.held[a.key]
	if held+n > share || !reserveUpTo(pool, n, poolMax) {
		return false
	}
	s.held[a.key] = held + n
	return true
}

// release returns n bytes charged to the account before.
func (a account) release(n int64) {
	if a.b == nil || n == 0 {
		return
	}
	s := &a.b.shards[a.key&(budgetShards-1)]
	s.mu.Lock()
	if held := s.held[a.key] - n; held > 0 {
		s.held[a.key] = held
	} else {
		delete(s.held, a.key)
	}
	s.mu.Unlock()
	if a.anon {
		a.b.anon.Add(-n)
		return
	}
	a.b.signed.Add(-n)
}

// reserveUpTo adds n to used if the sum stays within max.
func reserveUpTo(used *atomic.Int64, n, max int64) bool {
	for {
		u := used.Load()
		if u+n > max {
			return false
		}
		if used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

package jsonrpc

import (
	"context"
	"hash/maphash"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// BodyBudget bounds the memory that request bodies hold at once, in two
// pools, so that no caller and no crowd of callers denies another:
// anonymous callers draw on a small pool of their own, each client address
// (an IPv6 address by its /64) as one account, and signed-in principals on
// the rest, each principal as one account however many connections it
// opens. A body's storage is charged to its account as the storage grows
// with the bytes received (never by the Content-Length a client declares),
// and returned when the body is released. A request whose storage cannot
// be charged is refused with 503 and Retry-After; it costs no other caller
// anything. It is safe for concurrent use.
//
// Each pool keeps a reserve (1/8 of the signed-in pool, 1/4 of the
// anonymous pool) that only light accounts may draw on: an account whose
// bodies hold at most a light amount together, such as a caller holding
// nothing that sends a call of a few KiB, or a new client's initialize.
// The light amount is 64 KiB signed in and 8 KiB anonymous, less in a
// small budget so that at least 64 light accounts fit the reserve, never
// less than a body's first 4 KiB of storage.
// The rest of the pool is shared max-min: an account may grow to the
// pool's unreserved part divided by the number of accounts holding
// something in the pool (itself included), never less than the light
// amount and never more than its ceiling (BudgetOptions.PerPrincipal or
// AnonymousPerAddress). So shares shrink as more callers hold them, and
// however many identities or addresses hold the unreserved part, a
// caller holding nothing is still admitted from the reserve.
//
// Limits, by design: memory already held is never taken back, so
// accounts that grew while few held keep what they hold until their
// bodies end (ReadTimeout bounds that); a large body of a newcomer may
// wait (503) while a crowd holds the unreserved part, its small calls
// are served. The reserve itself is filled only by a crowd of more
// accounts than it has light amounts: with the default 64 MiB budget
// about 120 signed-in identities, or 128 client addresses (IPv6 /64s),
// each holding its whole light amount at once.
//
// A refusal is logged at WARN (BudgetOptions.Log), at most once per
// 10 seconds per pool, with the pool, what was full (the unreserved
// part, or only the caller's share), its size, the bytes held, the
// number of accounts holding and how many bodies were refused since the
// last line; never an identity or an address.
//
// An account is found by a keyed 64-bit hash of the principal's issuer
// and subject (or client id), or of the address: two callers share one
// only on a collision. Memory is a few words per caller with a body in
// flight.
type BodyBudget struct {
	max    int64 // the whole budget
	pools  [2]pool
	seed   maphash.Seed
	log    *slog.Logger // nil: slog.Default()
	shards [budgetShards]shareShard
}

// pool is one of a budget's two pools: anonymous or signed in.
type pool struct {
	name    string
	size    int64 // its bytes
	general int64 // the unreserved part: size less the reserve
	light   int64 // what an account may hold and still draw on the reserve
	ceiling int64 // the most one account may hold
	used    atomic.Int64
	holders atomic.Int64 // accounts holding something
	refused atomic.Int64 // refusals since the last log line
	logged  atomic.Int64 // unix nanoseconds of the last log line
}

const (
	poolSigned = 0
	poolAnon   = 1
)

// Light amounts: what an account may hold and still draw on its pool's
// reserve.
const (
	signedLight = 64 << 10
	anonLight   = 8 << 10
)

// refusalLogEvery is the least time between two log lines of one pool.
const refusalLogEvery = 10 * time.Second

// BudgetOptions sets the pools and shares of a [BodyBudget]. The zero
// value is the default; each field documents its zero value.
type BudgetOptions struct {
	// Anonymous is the pool that the bodies of anonymous callers hold at
	// most, together; it is reserved within the budget: signed-in callers
	// never draw on it. Zero means 1/16 of the budget (4 MiB of the
	// default 64 MiB): a thousand slow anonymous bodies of 4 KiB each.
	// A quarter of it is kept for addresses holding at most 8 KiB.
	Anonymous int64
	// AnonymousPerAddress is the most the anonymous bodies of one client
	// address (see Limits.ClientAddr; an IPv6 address by its /64) may
	// hold at once, and its share shrinks below that as more addresses
	// hold bodies (see [BodyBudget]). Zero means 1/8 of Anonymous
	// (512 KiB of the default: 128 slow bodies, or 8 of the largest
	// anonymous ones).
	AnonymousPerAddress int64
	// PerPrincipal is the most the bodies of one signed-in principal may
	// hold at once, across all its requests, and its share shrinks below
	// that as more principals hold bodies (see [BodyBudget]). Zero means
	// 1/8 of the budget (8 MiB of the default: two bodies of the largest
	// default size at once, or a thousand small ones).
	PerPrincipal int64
	// Log is told, at WARN and at most once per 10 s per pool, that a
	// pool refuses bodies. Nil means slog.Default().
	Log *slog.Logger
}

const budgetShards = 16 // a power of two

type shareShard struct {
	mu   sync.Mutex
	held map[uint64]int64 // by the account's key hash; absent when zero
	_    [40]byte         // a cache line of its own
}

// NewBodyBudget returns a budget of maxBytes (zero or negative means
// DefaultBodyBudget) with the pools and shares of o. Shares larger than
// their pool are cut to it; the anonymous pool to half the budget.
func NewBodyBudget(maxBytes int64, o BudgetOptions) *BodyBudget {
	if maxBytes <= 0 {
		maxBytes = DefaultBodyBudget
	}
	b := &BodyBudget{max: maxBytes, seed: maphash.MakeSeed(), log: o.Log}
	anonMax := o.Anonymous
	if anonMax <= 0 {
		anonMax = maxBytes / 16
	}
	anonMax = min(anonMax, maxBytes/2)
	addrMax := o.AnonymousPerAddress
	if addrMax <= 0 {
		addrMax = anonMax / 8
	}
	shareMax := o.PerPrincipal
	if shareMax <= 0 {
		shareMax = maxBytes / 8
	}
	b.pools[poolSigned].init("signed-in", maxBytes-anonMax, 8, signedLight, shareMax)
	b.pools[poolAnon].init("anonymous", anonMax, 4, anonLight, addrMax)
	for i := range b.shards {
		b.shards[i].held = make(map[uint64]int64)
	}
	return b
}

// init sets a pool of size bytes with a reserve of 1/reserveDiv of it,
// accounts holding at most light bytes drawing on it.
func (p *pool) init(name string, size, reserveDiv, light, ceiling int64) {
	p.name, p.size = name, size
	p.general = size - size/reserveDiv
	p.ceiling = max(min(ceiling, size), 1)
	// At least 64 light accounts fit the reserve; each may take a body's
	// first storage from it.
	p.light = min(max(min(light, (size-p.general)/64), initialBodyBytes), p.ceiling)
}

// InUse returns the bytes charged now, anonymous and signed-in callers'
// together.
func (b *BodyBudget) InUse() int64 {
	return b.pools[poolAnon].used.Load() + b.pools[poolSigned].used.Load()
}

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

func (a account) pool() *pool {
	if a.anon {
		return &a.b.pools[poolAnon]
	}
	return &a.b.pools[poolSigned]
}

// reserve charges n bytes to the account, and reports whether they fit:
// within its fair share of the pool's unreserved part, or, while the
// account stays light, within the whole pool (see BodyBudget).
func (a account) reserve(n int64) bool {
	p := a.pool()
	s := &a.b.shards[a.key&(budgetShards-1)]
	s.mu.Lock()
	held := s.held[a.key]
	holders := p.holders.Load()
	if held == 0 {
		holders++ // this account, once charged
	}
	ok := held+n <= p.light && reserveUpTo(&p.used, n, p.size) ||
		held+n <= p.share(holders) && reserveUpTo(&p.used, n, p.general)
	if ok {
		if held == 0 {
			p.holders.Add(1)
		}
		s.held[a.key] = held + n
	}
	s.mu.Unlock()
	if !ok {
		a.b.refused(p, p.used.Load()+n > p.general)
	}
	return ok
}

// share is one account's fair share of p's unreserved part while
// holders accounts hold something in it.
func (p *pool) share(holders int64) int64 {
	return min(p.ceiling, max(p.light, p.general/max(holders, 1)))
}

// refused counts a refusal of p, and logs the refusals at most once per
// refusalLogEvery; pressed tells whether the pool's unreserved part was
// full (else the caller's share was).
func (b *BodyBudget) refused(p *pool, pressed bool) {
	p.refused.Add(1)
	now := time.Now().UnixNano()
	last := p.logged.Load()
	if now-last < int64(refusalLogEvery) || !p.logged.CompareAndSwap(last, now) {
		return
	}
	log := b.log
	if log == nil {
		log = slog.Default()
	}
	full := "share"
	if pressed {
		full = "pool"
	}
	log.LogAttrs(context.Background(), slog.LevelWarn, "jsonrpc: a body memory pool refuses request bodies (503)",
		slog.String("pool", p.name), slog.String("full", full), slog.Int64("size", p.size), slog.Int64("in_use", p.used.Load()),
		slog.Int64("holders", p.holders.Load()), slog.Int64("refused", p.refused.Swap(0)))
}

// release returns n bytes charged to the account before.
func (a account) release(n int64) {
	if a.b == nil || n == 0 {
		return
	}
	p := a.pool()
	s := &a.b.shards[a.key&(budgetShards-1)]
	s.mu.Lock()
	if held := s.held[a.key] - n; held > 0 {
		s.held[a.key] = held
	} else {
		delete(s.held, a.key)
		p.holders.Add(-1)
	}
	s.mu.Unlock()
	p.used.Add(-n)
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

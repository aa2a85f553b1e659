package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/principal"
)

// DefaultMaxCallers is the number of callers a [Limiter] tracks at once
// when Limits.MaxCallers is zero.
const DefaultMaxCallers = 1 << 16

// Rate is a token bucket: Burst calls at once, refilled at PerSecond calls
// a second.
type Rate struct {
	// PerSecond is the sustained rate. Zero means the class is not limited.
	PerSecond float64
	// Burst is the bucket's size: how many calls may come at once after a
	// pause. Zero means PerSecond rounded up (at least 1).
	Burst int
}

// Limits configures a [Limiter]. The zero value limits nothing;
// each field documents its zero value.
type Limits struct {
	// List limits the calls of class list (mcphttp.MethodOptions.Class):
	// resources/list, resources/templates/list, tools/list, and the tools
	// that list (list_resources).
	List Rate
	// Read limits the calls of class read: resources/read, and the tools
	// that read one resource (read_resource, fetch, the template tools).
	Read Rate
	// Search limits the calls of class search: completion/complete, and
	// the tools that run a query of the application's (search).
	Search Rate
	// Other limits every other request (initialize, ping,
	// server/discover, subscriptions, a tool of no class) and the GET and
	// DELETE of legacy sessions. Notifications and client responses are
	// never limited: they are answered 202 without work.
	Other Rate
	// Refused limits the work of refusing credentials per client address
	// (the anonymous key: see Key and ClientAddr). It applies where the
	// limiter is the Authenticator's Throttle (authn.Options.Throttle: a
	// *Limiter is an authn.Throttle). Only refusals are counted, and only
	// the work of refusing is limited: a token the Authenticator verified
	// lately is served without asking the limiter, and past the burst a
	// new token from that address is still checked, one check at a time
	// in a shared lane (a valid one is served; an invalid one gets 429
	// with Retry-After), so a forger behind the same address or proxy
	// costs an honest caller nothing. Callers at other addresses are
	// served as before.
	Refused Rate

	// Key returns the rate key of a call. Nil, or an empty result, means
	// the default: the principal's issuer and subject; else, for a token
	// without a subject, its issuer and client id; else, for an anonymous
	// caller, the client address (see ClientAddr; an IPv6 address by its
	// /64 prefix, which one host controls as a whole). Keys are compared
	// by a keyed 64-bit hash (hash/maphash, a random seed per limiter):
	// two callers share a bucket only on a collision, about 3·10⁻¹⁰
	// likely among 100,000.
	Key func(r *http.Request, caller *principal.Principal) string

	// ClientAddr returns the address of a request's client, which keys
	// anonymous callers' buckets and the refused credentials (Refused,
	// and so the Authenticator's Throttle). Nil, or an invalid result,
	// means r.RemoteAddr. Behind a reverse proxy r.RemoteAddr is the
	// proxy's, so every client would share one bucket and one client's
	// forged tokens would lock everyone out: name the proxies and give
	// their method value, (*TrustedProxies).ClientAddr, which believes
	// the proxies' X-Forwarded-For or Forwarded and nobody else's.
	ClientAddr func(r *http.Request) netip.Addr

	// MaxInFlight bounds the calls one caller (keyed as the buckets are)
	// may have in flight at once, whatever their class: a call past it
	// gets 429 with Retry-After 1, like a call over its rate, and takes
	// nothing from the buckets. A client that sends one call after
	// another never meets it, however fast it goes; a flood of calls at
	// once does. Zero means no bound. It counts per process, also with a
	// Store: concurrency is what costs an instance. Streams count only
	// while the call that opens one is served, and the GET and DELETE of
	// legacy sessions not at all.
	MaxInFlight int

	// MaxCallers bounds how many callers are tracked at once. Zero means
	// DefaultMaxCallers. Callers whose buckets have refilled are forgotten
	// first, which changes nothing (a full bucket is what a new caller
	// gets); when that is not enough, the least recently seen of a few
	// sampled callers is forgotten, and its next call starts with a full
	// bucket: the limiter fails open for it rather than lock anyone out.
	MaxCallers int

	// Store holds the buckets. Nil means this process's memory (bounded
	// by MaxCallers, sharded, no round trip); a store shared by the
	// instances of a fleet (a Redis one, say) makes every limit hold
	// fleet-wide, so that a caller spread over the instances by a load
	// balancer gets its configured budget, not one per instance.
	Store Store
	// FailClosed decides what a call gets when the Store cannot answer:
	// false (the zero value) lets it through (fail open: an outage of the
	// store does not take the service down; logged once a minute), true
	// refuses it with 503 and Retry-After.
	FailClosed bool
	// Logger receives the store's failures (never keys). Nil means
	// slog.Default().
	Logger *slog.Logger

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Store holds token buckets for a [Limiter] shared by several processes.
// Implementations must be safe for concurrent use and answer each call in
// at most one round trip; errors are for system failures only (the
// Limiter then follows Limits.FailClosed).
type Store interface {
	// Take takes one token from bucket b at now and reports whether there
	// was one; when not, retry is how long until there will be. A bucket
	// not seen before (or forgotten) is full.
	Take(ctx context.Context, b Bucket, now time.Time) (ok bool, retry time.Duration, err error)
	// Peek reports whether bucket b has a token at now, taking nothing.
	Peek(ctx context.Context, b Bucket, now time.Time) (ok bool, retry time.Duration, err error)
}

// Bucket names one caller's bucket of one class, and its rate.
type Bucket struct {
	// Key identifies the caller and the class: stable across processes,
	// at most a few hundred bytes (it holds an identity key or an
	// address: a store that keeps keys where others can read them should
	// hash them).
	Key string
	// PerSecond and Burst are the class's Rate (Burst resolved).
	PerSecond float64
	Burst     int
}

// Limiter limits the calls of each caller, per class of what they do,
// with token buckets: give an endpoint its part ([Limiter.Part]). A call
// over its class's limit gets HTTP 429 with Retry-After and, for a POST,
// the JSON-RPC error [CodeRateLimited]; observers see it as
// mcphttp.OutcomeRateLimited. Calls refused before a limit applies (a bad
// Origin, a token that does not verify) take nothing; behind
// mcphttp/intercept only the methods the endpoint serves are limited.
// Callers are keyed by principal (see Limits.Key), so one noisy caller
// exhausts its own buckets only. Memory is bounded (Limits.MaxCallers;
// about 80 bytes a caller); no goroutine runs in the background. The state
// is per process: behind a load balancer each instance limits on its own.
// It is safe for concurrent use.
type Limiter struct {
	store      Store // nil: the table
	failClosed bool
	log        *slog.Logger
	warned     atomic.Int64 // when a store failure was last logged (unix ns)

	rates  [numClasses]rate
	active bool  // some class is limited
	fill   int64 // nanoseconds in which every bucket refills from empty
	key    func(*http.Request, *principal.Principal) string
	client func(*http.Request) netip.Addr
	now    func() time.Time
	seed   maphash.Seed
	table  bucketTable

	maxInFlight int32
	inflight    inflightTable
}

// rate is a class's Rate in the units the buckets use.
type rate struct {
	perNano float64 // tokens per nanosecond; 0: not limited
	burst   float32
	perSec  float64
	burstN  int
}

// The method classes.
const (
	classList = iota
	classRead
	classSearch
	classOther
	classRefused // refused credentials, by client address
	numClasses
)

// New returns a Limiter for l. It returns an error for a
// negative or non-finite rate, a negative burst, MaxCallers or
// MaxInFlight.
func New(l Limits) (*Limiter, error) {
	if l.Store != nil && nilness.Is(l.Store) {
		return nil, fmt.Errorf("ratelimit: Limits.Store holds a nil %T: give a built one or leave the field nil", l.Store)
	}
	rl := &Limiter{key: l.Key, client: l.ClientAddr, now: l.Now, seed: maphash.MakeSeed(), store: l.Store, failClosed: l.FailClosed, log: l.Logger}
	if rl.now == nil {
		rl.now = time.Now
	}
	if rl.log == nil {
		rl.log = slog.Default()
	}
	for i, r := range [numClasses]Rate{l.List, l.Read, l.Search, l.Other, l.Refused} {
		if r.PerSecond < 0 || math.IsNaN(r.PerSecond) || math.IsInf(r.PerSecond, 0) || r.Burst < 0 {
			return nil, errors.New("ratelimit: rate limits must be finite and not negative")
		}
		if r.PerSecond == 0 {
			continue
		}
		burst := r.Burst
		if burst == 0 {
			burst = max(1, int(math.Ceil(r.PerSecond)))
		}
		rl.rates[i] = rate{perNano: r.PerSecond / 1e9, burst: float32(burst), perSec: r.PerSecond, burstN: burst}
		rl.active = true
		rl.fill = max(rl.fill, int64(math.Ceil(float64(burst)/r.PerSecond*1e9)))
	}
	if l.MaxCallers < 0 {
		return nil, errors.New("ratelimit: Limits.MaxCallers must not be negative")
	}
	if l.MaxInFlight < 0 || l.MaxInFlight > math.MaxInt32 {
		return nil, errors.New("ratelimit: Limits.MaxInFlight must not be negative")
	}
	rl.maxInFlight = int32(l.MaxInFlight)
	maxCallers := l.MaxCallers
	if maxCallers == 0 {
		maxCallers = DefaultMaxCallers
	}
	rl.table.init(maxCallers)
	return rl, nil
}

// Allow takes one call of class (mcphttp.ClassList, ClassRead,
// ClassSearch; anything else is the other class) from the caller's
// bucket, and reports whether the call may proceed; when it may not,
// retryAfter is how long until it may. r and caller give the rate key
// (see Limits.Key); caller is nil for an anonymous call. A refused call
// takes nothing.
func (l *Limiter) Allow(r *http.Request, caller *principal.Principal, callClass string) (ok bool, retryAfter time.Duration) {
	ok, retryAfter, _ = l.decide(r, caller, classOf(callClass), false, nil)
	return ok, retryAfter
}

// decide takes (or, with peek, looks at) a token of class for the caller;
// unavailable reports a store failure that refused the call (FailClosed).
func (l *Limiter) decide(r *http.Request, caller *principal.Principal, class int, peek bool, k *callerKey) (ok bool, retry time.Duration, unavailable bool) {
	if l == nil || !l.active || l.rates[class].perNano == 0 {
		return true, 0, false
	}
	if l.store == nil {
		if peek {
			ok, retry = l.table.peek(l.keyOf(k, r, caller), class, l.now().UnixNano(), l)
		} else {
			ok, retry = l.table.take(l.keyOf(k, r, caller), class, l.now().UnixNano(), l)
		}
		return ok, retry, false
	}
	var buf [320]byte
	rt := &l.rates[class]
	b := Bucket{Key: string(l.appendKey(append(buf[:0], classNames[class]...), r, caller)), PerSecond: rt.perSec, Burst: rt.burstN}
	ctx := context.Background()
	if r != nil {
		ctx = r.Context()
	}
	var err error
	if peek {
		ok, retry, err = l.store.Peek(ctx, b, l.now())
	} else {
		ok, retry, err = l.store.Take(ctx, b, l.now())
	}
	if err == nil {
		return ok, retry, false
	}
	l.warn()
	if l.failClosed {
		return false, time.Second, true
	}
	return true, 0, false
}

// warn logs a store failure, at most once a minute.
func (l *Limiter) warn() {
	now := time.Now().UnixNano()
	if last := l.warned.Load(); now-last >= int64(time.Minute) && l.warned.CompareAndSwap(last, now) {
		policy := "letting calls through (Limits.FailClosed is false)"
		if l.failClosed {
			policy = "refusing calls with 503 (Limits.FailClosed)"
		}
		l.log.Warn("ratelimit: the rate-limit store cannot answer; " + policy)
	}
}

// classNames prefix the store keys of the classes.
var classNames = [numClasses]string{"l:", "r:", "s:", "o:", "x:"}

// Admit reports whether r's client address (Limits.ClientAddr) may have credentials checked
// now: whether its bucket of refused credentials (Limits.Refused) has
// room for one more refusal. It takes nothing; see [Limiter.Refused].
// With Refused unlimited it always admits. Admit and Refused make a
// Limiter an authn.Throttle.
func (l *Limiter) Admit(r *http.Request) (ok bool, retryAfter time.Duration) {
	ok, retryAfter, _ = l.decide(r, nil, classRefused, true, nil)
	return ok, retryAfter
}

// Refused takes one refusal from r's client address's bucket of refused
// credentials (see [Limiter.Admit]).
func (l *Limiter) Refused(r *http.Request) { l.decide(r, nil, classRefused, false, nil) }

// Len returns the number of callers tracked now.
func (l *Limiter) Len() int { return l.table.len() }

// check is Allow as an error of the error table.
func (l *Limiter) check(r *http.Request, caller *principal.Principal, class string, k *callerKey) error {
	ok, wait, unavailable := l.decide(r, caller, classOf(class), false, k)
	switch {
	case unavailable:
		return errStoreUnavailable
	case !ok:
		return errRateLimited(wait)
	}
	return nil
}

// errStoreUnavailable: the store cannot answer and Limits.FailClosed.
var errStoreUnavailable = &mcphttp.Error{Status: http.StatusServiceUnavailable, RetryAfter: 1, Code: jsonrpc.CodeInternalError, Message: "Service unavailable"}

// classOf returns the bucket of a call class.
func classOf(class string) int {
	switch class {
	case mcphttp.ClassList:
		return classList
	case mcphttp.ClassRead:
		return classRead
	case mcphttp.ClassSearch:
		return classSearch
	}
	return classOther
}

// CodeRateLimited is the JSON-RPC error code of a request over the
// caller's rate limit or in-flight bound, as the MCP draft "Standardize
// Rate-Limiting Errors" (SEP-3304) has it: HTTP 429, a Retry-After header
// in whole seconds (rounded up), and error.data.retryAfterMs, the
// milliseconds to wait (the draft's RL-1 to RL-3; the optional limit and
// remaining are not sent: they would tell a caller its quota exactly).
const CodeRateLimited = mcpwire.CodeRateLimited

// errRateLimited: the caller is over its rate limit for the call's class,
// or has too many calls in flight; retry is the time until a call is
// allowed again.
func errRateLimited(retry time.Duration) error {
	ms := max(1, (retry.Nanoseconds()+int64(time.Millisecond)-1)/int64(time.Millisecond))
	data := struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}{ms}
	return &mcphttp.Error{Status: http.StatusTooManyRequests, RetryAfter: int((ms + 999) / 1000), Code: CodeRateLimited, Message: mcpwire.RateLimitedMessage, Data: data}
}

// errTooManyInFlight: the caller has Limits.MaxInFlight calls in flight.
var errTooManyInFlight = errRateLimited(time.Second)

// Part returns the endpoint part that applies the limiter: to every
// request the endpoint serves, by the class of what it does
// (mcphttp.Request.Class), and to the HTTP methods parts serve (GET and
// DELETE of legacy sessions: the other class). Notifications and client
// responses are never limited. The part of a nil Limiter, or of one not
// made by New, is refused by mcphttp.New: a limiter that was meant to
// limit and limits nothing is a mistake.
func (l *Limiter) Part() mcphttp.Part {
	return mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		if l == nil || l.now == nil {
			return errNotMade
		}
		s.Use(func(next mcphttp.Handler) mcphttp.Handler {
			return func(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
				if c.ID.IsZero() {
					return next(ctx, c)
				}
				var k callerKey // computed once, for both
				key, held, ok := l.beginCall(c.HTTP, c.Principal, &k)
				if !ok {
					return mcphttp.Result{}, errTooManyInFlight
				}
				if held {
					defer l.inflight.end(key)
				}
				if err := l.check(c.HTTP, c.Principal, c.Class(), &k); err != nil {
					return mcphttp.Result{}, err
				}
				return next(ctx, c)
			}
		})
		if h := seam.Of(s); h != nil { // nil: a Setup not made by mcphttp.New, which serves no verbs
			h.CheckHTTP(func(r *http.Request, caller *principal.Principal) error { return l.check(r, caller, "", nil) })
		}
		return nil
	})
}

// errNotMade is the Setup error of the Part of a nil or zero Limiter.
var errNotMade = errors.New("ratelimit: the Part of a nil Limiter, or of one not made by ratelimit.New (use New)")

// callerKey is a request's hashed caller key, computed at most once.
type callerKey struct {
	h    uint64
	done bool
}

// keyOf returns the hashed key of r's caller, computed into k the first
// time (k nil: computed afresh).
func (l *Limiter) keyOf(k *callerKey, r *http.Request, caller *principal.Principal) uint64 {
	if k == nil {
		return l.hash(r, caller)
	}
	if !k.done {
		k.h, k.done = l.hash(r, caller), true
	}
	return k.h
}

// hash returns the caller's key, hashed with the limiter's seed.
func (l *Limiter) hash(r *http.Request, caller *principal.Principal) uint64 {
	var buf [320]byte
	return maphash.Bytes(l.seed, l.appendKey(buf[:0], r, caller))
}

// appendKey appends the caller's key: Limits.Key's, else the principal's
// identity key (issuer and subject), else its client key, else the
// remote address (an IPv6 address by its /64 prefix, which one host
// controls as a whole). The kinds are told apart by a leading byte.
func (l *Limiter) appendKey(dst []byte, r *http.Request, caller *principal.Principal) []byte {
	if l.key != nil {
		if k := l.key(r, caller); k != "" {
			return append(append(dst, 'k'), k...)
		}
	}
	switch {
	case caller != nil && caller.Subject != "":
		return append(append(dst, 's'), caller.Key()...)
	case caller != nil && caller.ClientID != "":
		return append(append(dst, 'c'), caller.ClientKey()...)
	}
	var addr netip.Addr
	if l.client != nil {
		addr = l.client(r).Unmap().WithZone("")
	}
	if !addr.IsValid() {
		if addr = remoteAddr(r.RemoteAddr); !addr.IsValid() {
			return append(append(dst, 'r'), r.RemoteAddr...) // not host:port (a Unix socket, a test): as it is
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		addr = p.Addr()
	}
	b := addr.As16()
	return append(append(dst, 'a'), b[:]...)
}

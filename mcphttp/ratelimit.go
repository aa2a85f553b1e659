package mcphttp

import (
	"errors"
	"hash/maphash"
	"math"
	"net/http"
	"net/netip"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
)

// DefaultMaxCallers is the number of callers a [RateLimiter] tracks at
// once when RateLimits.MaxCallers is zero.
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

// RateLimits configures a [RateLimiter]. The zero value limits nothing;
// each field documents its zero value.
type RateLimits struct {
	// List limits resources/list, resources/templates/list and tools/list.
	List Rate
	// Read limits resources/read.
	Read Rate
	// Search limits tools/call and completion/complete: the calls an
	// application answers with a query of its own.
	Search Rate
	// Other limits every other request (initialize, ping,
	// server/discover, subscriptions) and the GET and DELETE of legacy
	// sessions. Notifications and client responses are never limited:
	// they are answered 202 without work.
	Other Rate
	// Refused limits the credentials refused per remote address (the
	// anonymous key: see Key): past its burst, a request from that
	// address that offers credentials gets 429 with Retry-After before
	// they are checked, so that a flood of forged tokens costs no
	// signature checks, while callers at other addresses are served as
	// before. It applies where the limiter is the Authenticator's
	// Throttle (authn.Options.Throttle). Only refusals are counted: a
	// caller whose token verifies takes nothing from it.
	Refused Rate

	// Key returns the rate key of a call. Nil, or an empty result, means
	// the default: the principal's issuer and subject; else, for a token
	// without a subject, its issuer and client id; else, for an anonymous
	// caller, the remote address (an IPv6 address by its /64 prefix, which
	// one host controls as a whole). Behind a reverse proxy r.RemoteAddr is
	// the proxy's, so every anonymous caller would share one bucket:
	// supply a Key that returns the client address the proxy vouches for
	// (the last X-Forwarded-For hop it appended, say) for anonymous
	// callers, and "" otherwise. Keys are compared by a keyed 64-bit hash
	// (hash/maphash, a random seed per limiter): two callers share a
	// bucket only on a collision, about 3·10⁻¹⁰ likely among 100,000.
	Key func(r *http.Request, caller *principal.Principal) string

	// MaxCallers bounds how many callers are tracked at once. Zero means
	// DefaultMaxCallers. Callers whose buckets have refilled are forgotten
	// first, which changes nothing (a full bucket is what a new caller
	// gets); when that is not enough, the least recently seen of a few
	// sampled callers is forgotten, and its next call starts with a full
	// bucket: the limiter fails open for it rather than lock anyone out.
	MaxCallers int

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// RateLimiter limits the calls of each caller, per method class, with
// token buckets: give it to an endpoint in Options.RateLimiter. A call
// over its class's limit gets HTTP 429 with Retry-After and, for a POST,
// the JSON-RPC error [CodeRateLimited]; the Observer sees it as
// OutcomeRateLimited. Calls refused before a limit applies (a bad Origin,
// a token that does not verify) take nothing; behind [Intercept] only the
// methods it owns are limited. Callers are keyed by principal (see RateLimits.Key),
// so one noisy caller exhausts its own buckets only. Memory is bounded
// (RateLimits.MaxCallers; about 80 bytes a caller); no goroutine runs in
// the background. The state is per process: behind a load balancer each
// instance limits on its own. It is safe for concurrent use.
type RateLimiter struct {
	rates  [numClasses]rate
	active bool  // some class is limited
	fill   int64 // nanoseconds in which every bucket refills from empty
	key    func(*http.Request, *principal.Principal) string
	now    func() time.Time
	seed   maphash.Seed
	table  bucketTable
}

var _ authn.Throttle = (*RateLimiter)(nil)

// rate is a class's Rate in the units the buckets use.
type rate struct {
	perNano float64 // tokens per nanosecond; 0: not limited
	burst   float32
	perSec  float64
}

// The method classes.
const (
	classList = iota
	classRead
	classSearch
	classOther
	classRefused // refused credentials, by remote address
	numClasses
)

// NewRateLimiter returns a RateLimiter for l. It returns an error for a
// negative or non-finite rate, a negative burst or MaxCallers.
func NewRateLimiter(l RateLimits) (*RateLimiter, error) {
	rl := &RateLimiter{key: l.Key, now: l.Now, seed: maphash.MakeSeed()}
	if rl.now == nil {
		rl.now = time.Now
	}
	for i, r := range [numClasses]Rate{l.List, l.Read, l.Search, l.Other, l.Refused} {
		if r.PerSecond < 0 || math.IsNaN(r.PerSecond) || math.IsInf(r.PerSecond, 0) || r.Burst < 0 {
			return nil, errors.New("mcphttp: rate limits must be finite and not negative")
		}
		if r.PerSecond == 0 {
			continue
		}
		burst := r.Burst
		if burst == 0 {
			burst = max(1, int(math.Ceil(r.PerSecond)))
		}
		rl.rates[i] = rate{perNano: r.PerSecond / 1e9, burst: float32(burst), perSec: r.PerSecond}
		rl.active = true
		rl.fill = max(rl.fill, int64(math.Ceil(float64(burst)/r.PerSecond*1e9)))
	}
	if l.MaxCallers < 0 {
		return nil, errors.New("mcphttp: RateLimits.MaxCallers must not be negative")
	}
	rl.table.init(cmpOr(l.MaxCallers, DefaultMaxCallers))
	return rl, nil
}

// Allow takes one call of method (a JSON-RPC method; "" for a GET or
// DELETE) from the caller's bucket, and reports whether the call may
// proceed; when it may not, retryAfter is how long until it may. r and
// caller give the rate key (see RateLimits.Key); caller is nil for an
// anonymous call. A refused call takes nothing.
func (l *RateLimiter) Allow(r *http.Request, caller *principal.Principal, method string) (ok bool, retryAfter time.Duration) {
	if l == nil || !l.active {
		return true, 0
	}
	class := classOf(method)
	if l.rates[class].perNano == 0 {
		return true, 0
	}
	return l.table.take(l.hash(r, caller), class, l.now().UnixNano(), l)
}

// Admit reports whether r's remote address may have credentials checked
// now: whether its bucket of refused credentials (RateLimits.Refused) has
// room for one more refusal. It takes nothing; see [RateLimiter.Refused].
// With Refused unlimited it always admits. Admit and Refused make a
// RateLimiter an authn.Throttle.
func (l *RateLimiter) Admit(r *http.Request) (ok bool, retryAfter time.Duration) {
	if l == nil || l.rates[classRefused].perNano == 0 {
		return true, 0
	}
	return l.table.peek(l.hash(r, nil), classRefused, l.now().UnixNano(), l)
}

// Refused takes one refusal from r's remote address's bucket of refused
// credentials (see [RateLimiter.Admit]).
func (l *RateLimiter) Refused(r *http.Request) {
	if l == nil || l.rates[classRefused].perNano == 0 {
		return
	}
	l.table.take(l.hash(r, nil), classRefused, l.now().UnixNano(), l)
}

// Len returns the number of callers tracked now.
func (l *RateLimiter) Len() int { return l.table.len() }

// check is Allow as an error of the error table.
func (l *RateLimiter) check(r *http.Request, caller *principal.Principal, method string) error {
	if ok, wait := l.Allow(r, caller, method); !ok {
		return errRateLimited(max(1, int(math.Ceil(wait.Seconds()))))
	}
	return nil
}

// classOf returns the class of a method.
func classOf(method string) int {
	switch method {
	case "resources/list", "resources/templates/list", "tools/list":
		return classList
	case "resources/read":
		return classRead
	case "tools/call", "completion/complete":
		return classSearch
	}
	return classOther
}

// hash returns the caller's key, hashed with the limiter's seed.
func (l *RateLimiter) hash(r *http.Request, caller *principal.Principal) uint64 {
	var h maphash.Hash
	h.SetSeed(l.seed)
	if l.key != nil {
		if k := l.key(r, caller); k != "" {
			h.WriteByte('k')
			h.WriteString(k)
			return h.Sum64()
		}
	}
	switch {
	case caller != nil && caller.Subject != "":
		h.WriteByte('s')
		h.WriteString(issuerOf(caller))
		h.WriteByte(0)
		h.WriteString(caller.Subject)
	case caller != nil && caller.ClientID != "":
		h.WriteByte('c')
		h.WriteString(issuerOf(caller))
		h.WriteByte(0)
		h.WriteString(caller.ClientID)
	default:
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			h.WriteByte('r')
			h.WriteString(r.RemoteAddr) // not host:port (a Unix socket, a test): as it is
			break
		}
		addr := ap.Addr().Unmap().WithZone("")
		if addr.Is6() {
			p, _ := addr.Prefix(64)
			addr = p.Addr()
		}
		b := addr.As16()
		h.WriteByte('a')
		h.Write(b[:])
	}
	return h.Sum64()
}

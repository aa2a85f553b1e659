// Package refusal holds the mechanisms authn uses to keep refusals cheap
// and visible: a bounded memory of token digests, a lane that runs a few
// checks at a time, and a log that aggregates refusal reasons per
// interval.
package refusal

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/evict"
)

// Memory remembers token digests until a time, with an optional
// error: the known-good and known-refused memories. It is bounded; when
// full, expired entries among a sample go first, else one at random.
type Memory struct {
	max int
	mu  sync.Mutex
	m   map[[sha256.Size]byte]Entry
}

type Entry struct {
	Until time.Time
	Err   error // known-refused: the refusal
}

func NewMemory(max int) *Memory {
	return &Memory{max: max, m: make(map[[sha256.Size]byte]Entry, min(max, 256))}
}

// get returns the live entry of key.
func (tm *Memory) Get(key [sha256.Size]byte, now time.Time) (Entry, bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	e, ok := tm.m[key]
	if ok && !now.Before(e.Until) {
		delete(tm.m, key)
		return Entry{}, false
	}
	return e, ok
}

func (tm *Memory) Put(key [sha256.Size]byte, e Entry, now time.Time) {
	if !now.Before(e.Until) {
		return
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if _, present := tm.m[key]; !present && len(tm.m) >= tm.max {
		evict.Sample(tm.m, func(old Entry) bool { return !now.Before(old.Until) })
	}
	tm.m[key] = e
}

func (tm *Memory) Forget(key [sha256.Size]byte) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	delete(tm.m, key)
}

// Lane runs the checks of credentials from throttled addresses,
// a few at a time.
type Lane struct {
	slots      chan struct{}
	maxWaiters int32
	maxWait    time.Duration
	waiting    atomic.Int32
}

// NewLane returns a lane that runs slots checks at once, with at most
// maxWaiters waiting, each at most maxWait.
func NewLane(slots, maxWaiters int, maxWait time.Duration) *Lane {
	return &Lane{slots: make(chan struct{}, slots), maxWaiters: int32(maxWaiters), maxWait: maxWait}
}

// Enter waits for a slot: false when too many wait already, the wait
// exceeds maxWait, or ctx ends. A true must be followed by Leave.
func (l *Lane) Enter(ctx context.Context) bool {
	if l.waiting.Add(1) > l.maxWaiters {
		l.waiting.Add(-1)
		return false
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(l.maxWait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

func (l *Lane) Leave() { <-l.slots }

// Log logs each refusal reason at INFO, aggregated per interval:
// the first refusal of a reason in an interval is logged at once, the
// others of that interval as one line with their count when it ends. Only
// fixed texts are logged: never token bytes or key ids.
type Log struct {
	log      *slog.Logger
	hint     func(reason string) string
	Interval time.Duration // settable before use (tests)
	mu       sync.Mutex
	groups   map[string]*refusalGroup
}

type refusalGroup struct {
	start time.Time
	more  int // refusals after the first, not yet logged
	timer *time.Timer
}

// NewLog returns a Log to log, aggregating per interval; hint gives the
// fixed hint of a reason.
func NewLog(log *slog.Logger, interval time.Duration, hint func(reason string) string) *Log {
	return &Log{log: log, hint: hint, Interval: interval, groups: map[string]*refusalGroup{}}
}

// Refused records one refusal answered with status.
func (l *Log) Refused(ctx context.Context, reason string, status int) {
	l.RefusedHint(ctx, reason, status, "")
}

// RefusedHint is Refused with the hint of this refusal, when it says more
// than the reason's fixed one (a count, an algorithm: never token bytes or
// key ids); "" means the fixed one. The aggregated line of an interval
// carries the fixed hint.
func (l *Log) RefusedHint(ctx context.Context, reason string, status int, hint string) {
	if !l.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	now := time.Now()
	l.mu.Lock()
	g := l.groups[reason]
	if g != nil && now.Sub(g.start) < l.Interval {
		g.more++
		if g.timer == nil {
			g.timer = time.AfterFunc(l.Interval-now.Sub(g.start), func() { l.flush(reason, g) })
		}
		l.mu.Unlock()
		return
	}
	l.groups[reason] = &refusalGroup{start: now}
	l.mu.Unlock()
	if hint == "" {
		hint = l.hint(reason)
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, "authn: credentials refused",
		slog.String("reason", reason), slog.Int("status", status), slog.String("hint", hint))
}

// flush logs the count of g's further refusals and ends its interval.
func (l *Log) flush(reason string, g *refusalGroup) {
	l.mu.Lock()
	n := g.more
	if l.groups[reason] == g {
		delete(l.groups, reason)
	}
	l.mu.Unlock()
	if n > 0 {
		l.log.LogAttrs(context.Background(), slog.LevelInfo, "authn: more credentials refused",
			slog.String("reason", reason), slog.Int("count", n), slog.Duration("interval", l.Interval),
			slog.String("hint", l.hint(reason)))
	}
}

// hints tell an operator what to look at for each reason (issue
// 29: a mismatched resource or a token typed JWT was logged only at
// DEBUG). authn/README.md's "Why tokens are refused" has the
// same list.
var hints = map[string]string{
	"malformed":            "not a compact JWS of the allowed size (or not a b64token)",
	"header":               "a forbidden or ill-typed JOSE header parameter (crit, jku, jwk, x5u, x5c, b64)",
	"alg":                  "the token's alg is not in JWTOptions.Algorithms, or does not fit the key",
	"typ":                  "typ is not at+jwt (RFC 9068); for a provider that types access tokens JWT see JWTOptions.AllowPlainJWTType",
	"kid":                  "no key with the token's kid in the issuer's JWK Set (JWTOptions.JWKSURL; a rotation is fetched within UnknownKeyCooldown)",
	"kid_absent":           "the token has no kid and the JWK Set does not hold exactly one key for its alg (a token without kid is verified only when one key fits)",
	"signature":            "the signature does not verify with the issuer's key (a forged token, or another issuer's)",
	"claims":               "a claim of the wrong type, duplicated, or invalid UTF-8",
	"iss":                  "iss is not JWTOptions.Issuer (compared exactly: mind a trailing slash)",
	"issuer_unknown":       "iss names no issuer of MultiIssuerOptions",
	"aud":                  "aud is not this resource (Options.Resource, or JWTOptions.Audience when the provider names the API otherwise)",
	"exp":                  "the token has expired (or has no exp); check the clocks (JWTOptions.Leeway)",
	"nbf":                  "nbf or iat is in the future; check the clocks (JWTOptions.Leeway)",
	"sub":                  "no subject claim, or one that breaks the principal rules (ClaimNames.Subject)",
	"client_id":            "the client id claim breaks the rules (ClaimNames.ClientID)",
	"scope":                "the scope claim breaks RFC 6749 §3.3 (ClaimNames.Scope)",
	"insufficient_scope":   "the token lacks a scope the method requires (403)",
	"inactive":             "introspection answered active=false",
	"verifier_result":      "the Verifier returned a principal for another audience, or with an unusable subject",
	"cnf":                  "cnf is not an object, or cnf.jkt is no thumbprint",
	"dpop_bound_as_bearer": "a DPoP-bound token was sent with the Bearer scheme",
	"unbound_as_dpop":      "a token without cnf.jkt was sent with the DPoP scheme",
	"bearer_refused":       "a Bearer token while dpop.Options.Mode is dpop.Required",
	"dpop_key_binding":     "the DPoP proof's key is not the token's cnf.jkt",
	"dpop_nonce":           "the DPoP proof lacks a valid server nonce (the client retries with DPoP-Nonce)",
	"invalid_token":        "the Verifier refused the token",
	"invalid_request":      "a malformed Authorization header, several, or a token in the query or form body",
	"throttled":            "too many refused credentials from this address (Options.Throttle)",
}

// Hint returns the hint of a reason; the DPoP proof reasons share
// one.
func Hint(reason string) string {
	if h, ok := hints[reason]; ok {
		return h
	}
	if len(reason) > len("dpop_") && reason[:len("dpop_")] == "dpop_" {
		return "the DPoP proof was refused (see the reason: typ, alg, jwk, signature, htm, htu, iat, ath, replay, ...)"
	}
	return ""
}

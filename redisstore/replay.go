package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/authn/dpop"
)

// Defaults of [ReplayOptions]: the in-memory replay cache's (see
// dpop.Options), fleet-wide.
const (
	DefaultReplayPrefix     = "mcpkit:dpop:"
	DefaultProofWindow      = 60 * time.Second
	DefaultClockSkew        = 5 * time.Second
	DefaultMaxReplayEntries = 100_000
)

// ReplayOptions configures a [ReplayStore]. The zero value is valid for an
// Authenticator with the default dpop.Options.ProofWindow.
type ReplayOptions struct {
	// Prefix begins every key of the store. Empty means
	// DefaultReplayPrefix. Give each application (or environment) sharing
	// a Redis its own. The store puts a hash tag after it (its keys are
	// spread over families, each on a slot of its own: see the package
	// documentation, Redis Cluster); a prefix with a hash tag of its own
	// ("{app}:") keeps all of them on one slot.
	Prefix string

	// ProofWindow must be the Authenticators' dpop.Options.ProofWindow.
	// Zero means 60 s (dpop.Options' own default). With the clock skew it
	// sets the period of the store's counters and how long a Redis that
	// lost its data refuses proofs (see the package documentation).
	ProofWindow time.Duration

	// ClockSkew is how far apart the clocks of the instances may be. A
	// proof is remembered this much longer than it could be accepted by
	// the instance that remembers it, so that an instance whose clock is
	// behind still finds it. Zero means DefaultClockSkew (5 s).
	ClockSkew time.Duration

	// MaxEntries bounds the proofs remembered, fleet-wide: when the
	// counters of the current and the previous period reach it, every
	// new proof is refused (*dpop.UnavailableError with RetryAfter)
	// until a period ends, never remembered past the bound nor accepted
	// unremembered. Zero means DefaultMaxReplayEntries (100 000: about
	// 13.5 MB of Redis, measured by BenchmarkRedisMemory).
	MaxEntries int

	// MaxEntriesPerCaller is each caller's share of MaxEntries (a caller
	// is the token's identity with the key it is bound to, as the
	// Authenticator names it): a caller holding its share is refused,
	// with the time until its older proofs are forgotten, while every
	// other caller is served. Zero means MaxEntries / 50 (2 000 by
	// default); at most MaxEntries.
	MaxEntriesPerCaller int

	// Logger receives the store's own events: Redis found without the
	// store's marker (new, restarted empty, flushed), and the refusal of
	// proofs that follows. Nil means slog.Default().
	Logger *slog.Logger

	// Now returns the current time: give it the Authenticators'
	// dpop.Options.Now. Nil means time.Now.
	Now func() time.Time
}

// ReplayStore is a [dpop.ReplayStore] in Redis: the DPoP replay memory
// of every Authenticator (every instance of a fleet) that uses it, so a
// proof accepted by one is refused by all. Each Remember is one script
// call (one round trip). It is safe for concurrent use.
type ReplayStore struct {
	client          redis.UniversalClient
	prefix          string
	period, skew    time.Duration
	max, share      int
	log             *slog.Logger
	now             func() time.Time
	gates           gates
	tags            []string        // the families' hash tags (see familyTags)
	perFamily       int             // the bound of each family's counters
	armed           atomic.Bool     // arm tried (by the first proof)
	quarantineUntil atomic.Int64    // the end of the last quarantine logged (unix ms)
	warned          [2]atomic.Int64 // the period (+1) of the last full, at-share refusal logged
}

var _ dpop.ReplayStore = (*ReplayStore)(nil)

// NewReplayStore returns a ReplayStore using client. It does not connect.
// It returns an error for a nil client or invalid options.
func NewReplayStore(client redis.UniversalClient, o ReplayOptions) (*ReplayStore, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = DefaultReplayPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	switch {
	case o.ProofWindow < 0 || o.ClockSkew < 0:
		return nil, errors.New("redisstore: ReplayOptions.ProofWindow and ClockSkew must not be negative")
	case o.MaxEntries < 0:
		return nil, errors.New("redisstore: ReplayOptions.MaxEntries must not be negative")
	}
	if o.ProofWindow == 0 {
		o.ProofWindow = DefaultProofWindow
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = DefaultMaxReplayEntries
	}
	switch {
	case o.MaxEntriesPerCaller < 0 || o.MaxEntriesPerCaller > o.MaxEntries:
		return nil, errors.New("redisstore: ReplayOptions.MaxEntriesPerCaller must be from 0 to MaxEntries")
	case o.MaxEntriesPerCaller == 0:
		o.MaxEntriesPerCaller = max(o.MaxEntries/50, 1)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// The callers are spread over families of keys, each on a slot of its
	// own (see the package documentation, Redis Cluster): up to 16, each
	// holding the bound's share of eight callers' shares at least; a
	// prefix with a hash tag of its own keeps one family.
	n := min(max(o.MaxEntries/(8*o.MaxEntriesPerCaller), 1), maxFamilies)
	tags := familyTags(n)
	if strings.ContainsRune(o.Prefix, '{') {
		tags = []string{""}
	}
	return &ReplayStore{
		client: client, prefix: o.Prefix, skew: o.ClockSkew,
		// A proof is accepted up to a window after its iat, which is up
		// to a window ahead of the clock: it lives at most two windows
		// and the skew. A period holds that, as the in-memory cache's.
		period: 2*o.ProofWindow + o.ClockSkew + time.Second,
		max:    o.MaxEntries, share: o.MaxEntriesPerCaller, log: o.Logger, now: o.Now,
		tags: tags, perFamily: max(o.MaxEntries/len(tags), o.MaxEntriesPerCaller),
	}, nil
}

// maxFamilies bounds the families of a ReplayStore.
const maxFamilies = 16

// replayScript remembers a proof, atomically, in one call.
//
//	KEYS: the proof; the caller's counters of this and the last period;
//	      the store's counters of this and the last period; the marker.
//	ARGV: now (ms), the proof's TTL (ms), the share, the bound, the
//	      counters' TTL (ms), the quarantine (ms).
//
// It returns {status, n}: 0 remembered; 1 a replay; 2 the store is full
// and 3 the caller is at its share (n: the entries of the last period
// counted against it); 4 the store is in quarantine (n: the ms left).
//
// The marker holds the end of the quarantine that began when the script
// found no marker, and the Redis process that wrote it ("<ms>:<ident>",
// see runLua): a Redis without it may have lost proofs that are
// still within their window (a restart without persistence, a flush, an
// eviction), and one that is not the process that wrote it may have too
// (a restart from a snapshot older than the last proof, a replica
// promoted before it had every write of its master), so nothing is
// accepted until they all would have expired. A marker moved here with
// its slot (trusted) and one without an ident (set by hand to "0", see
// Markers, or by an older version) are adopted.
var replayScript = newScript(runLua + markerLua + `
local now = tonumber(ARGV[1])
local m = marker(KEYS[6], now, tonumber(ARGV[6]))
if now < m then return {4, m - now} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {1, 0} end
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
local older = tonumber(redis.call('GET', KEYS[3]) or '0')
if held + older >= tonumber(ARGV[3]) then return {3, older} end
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
local totalOlder = tonumber(redis.call('GET', KEYS[5]) or '0')
if total + totalOlder >= tonumber(ARGV[4]) then return {2, totalOlder} end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
if redis.call('INCR', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
if redis.call('INCR', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[5]) end
return {0, 0}
`)

// markerLua: marker(key, now, q) returns the end of the family's
// quarantine (ms), beginning one of q ms when the marker is missing, not
// readable, or written by a Redis process it cannot vouch for (see
// runLua).
const markerLua = `
local function marker(key, now, q)
  local v = redis.call('GET', key)
  local m, w
  if v then
    local a, b = string.match(v, '^(%d+):?(.*)$')
    m, w = tonumber(a), b
  end
  if not m then
    m = now + q
  elseif w == here then
    return m
  elseif w ~= '' and not trusted(w) then
    m = math.max(m, now + q)
  end
  redis.call('SET', key, string.format('%.0f', m) .. ':' .. here)
  return m
end
`

// armScript checks a family's marker as a proof would (marker): sets a
// missing one, writes the ident into one without (so that a replica
// promoted later cannot adopt it: see Markers), begins the quarantine of
// one another process wrote. KEYS: the marker. ARGV: now (ms), the
// quarantine (ms).
var armScript = newScript(runLua + markerLua + `
marker(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
return 1
`)

// arm checks the marker of every family (armScript, one round trip to
// each node), so that the quarantine of a new or restarted Redis begins
// for all of them at once rather than at each family's first proof, and
// markers set to "0" carry the Redis process's ident from then on. It is tried
// once, by the store's first proof: a family it could not reach (its
// node down), like one whose marker goes later (its node restarted
// empty), begins its own at its first proof, as the script sets a
// missing marker. Trying again on every proof would make every shard's
// proofs wait for a dead one.
func (s *ReplayStore) arm(ctx context.Context, now, quarantine int64) {
	if len(s.tags) == 1 {
		return // the script sets the only marker
	}
	_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, t := range s.tags {
			// A family that asks for a vouch (runLua) is left to its
			// first proof.
			p.Eval(ctx, armScript.src, []string{s.prefix + t + "marker"}, now, quarantine, "")
		}
		return nil
	})
}

// Markers returns the keys of the store's markers, one for each family
// of its keys (see the package documentation: a Redis, or a node of a
// cluster, found without one refuses the family's proofs for a period).
// A family is refused too when its Redis is not the process that wrote
// the marker (restarted, failed over). An operator who knows that the
// Redis lost nothing (tests, a Redis that was never used, a restart with
// every write persisted) may set them ("0") to skip that quarantine: a
// marker "0" is adopted by the first proof of a store (which checks every
// family's marker) or of its family, which writes the Redis process into
// it. Until then it is adopted by whichever
// process holds it, a replica promoted too: set it when no failover is
// under way.
func (s *ReplayStore) Markers() []string {
	out := make([]string, len(s.tags))
	for i, t := range s.tags {
		out[i] = s.prefix + t + "marker"
	}
	return out
}

// Remember records proof, charged to caller, until expires plus the clock
// skew. It returns nil when the proof is new, dpop.ErrReplayed for a
// replay, an *dpop.UnavailableError when the store will not remember it
// now (full, the caller at its share, or in quarantine after Redis lost
// its data), and another error when Redis cannot answer (ErrUnavailable
// for a while after a failure, without a round trip). The Authenticator
// refuses the proof on every error.
func (s *ReplayStore) Remember(ctx context.Context, proof, caller string, expires time.Time) error {
	if s == nil || s.client == nil {
		return errStoreNotMade
	}
	if proof == "" || caller == "" {
		return errors.New("redisstore: replay: empty proof or caller")
	}
	now := s.now()
	ttl := max(expires.Sub(now), 0) + s.skew
	nowMS := now.UnixMilli()
	periodMS := s.period.Milliseconds()
	gen := nowMS / periodMS
	cur, prev := strconv.FormatInt(gen, 10), strconv.FormatInt(gen-1, 10)
	p := s.prefix + s.tags[family(caller, len(s.tags))]
	keys := []string{
		p + "p:" + proof,
		p + "c:" + caller + ":" + cur, p + "c:" + caller + ":" + prev,
		p + "n:" + cur, p + "n:" + prev,
		p + "marker",
	}
	g := s.gates.For(ctx, s.client, keys[0])
	if !g.allow() {
		return ErrUnavailable
	}
	if !s.armed.Load() && s.armed.CompareAndSwap(false, true) {
		s.arm(ctx, nowMS, periodMS)
	}
	res, err := replayScript.run(ctx, s.client, keys,
		nowMS, max(ttl.Milliseconds(), 1), s.share, s.perFamily, 2*periodMS+s.skew.Milliseconds(), periodMS).Int64Slice()
	g.done(ctx, err)
	if err != nil {
		return fmt.Errorf("redisstore: replay: %w", err)
	}
	if len(res) != 2 {
		return errors.New("redisstore: replay: unexpected reply")
	}
	switch res[0] {
	case 0:
		return nil
	case 1:
		return dpop.ErrReplayed
	case 2, 3:
		// As the in-memory cache: room comes back when the last period's
		// entries are forgotten, or, if none are in the way, a period
		// after the current one ends.
		retry := max(time.Duration((gen+1)*periodMS-nowMS)*time.Millisecond, time.Second)
		if res[1] == 0 {
			retry += s.period
		}
		if w := &s.warned[res[0]-2]; w.Swap(gen+1) != gen+1 { // once a period
			if res[0] == 2 {
				s.log.Warn("redisstore: the DPoP replay memory is full; refusing new proofs until a period ends (ReplayOptions.MaxEntries)")
			} else {
				s.log.Warn("redisstore: a caller holds its share of the DPoP replay memory; refusing its new proofs until they age out (ReplayOptions.MaxEntriesPerCaller)")
			}
		}
		return &dpop.UnavailableError{RetryAfter: retry}
	case 4:
		left := time.Duration(res[1]) * time.Millisecond
		if end := nowMS + res[1]; s.quarantineUntil.Swap(end) != end {
			s.log.Warn("redisstore: redis holds no DPoP replay memory it can vouch for (new, flushed, restarted or failed over); refusing DPoP proofs until every proof it may have forgotten has expired",
				"retry_in", left.Round(time.Second))
		}
		return &dpop.UnavailableError{RetryAfter: max(left, time.Second)}
	}
	return errors.New("redisstore: replay: unexpected reply")
}

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/principal"
)

// DefaultSessionPrefix begins the keys of a [SessionStore] when
// SessionOptions.Prefix is empty.
const DefaultSessionPrefix = "mcpkit:sess:"

// SessionOptions configures a [SessionStore]. The zero value is valid.
type SessionOptions struct {
	// Prefix begins every key of the store. Empty means
	// DefaultSessionPrefix. Give each application (or environment)
	// sharing a Redis its own. The store puts a hash tag after it (its
	// keys are spread over families by principal, each on a slot of its
	// own: see the package documentation, Redis Cluster); a prefix with a
	// hash tag of its own ("{app}:") keeps all of them on one slot.
	Prefix string

	// Limits bound the sessions, as for a sessions.MemoryStore, but
	// fleet-wide: IdleTimeout, Lifetime, MaxSessions,
	// MaxSessionsPerPrincipal and MaxSubscriptions (zero values mean the
	// sessions package's defaults; the stream fields are the part's).
	Limits sessions.Limits

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// SessionStore is a [sessions.Store] in Redis: legacy sessions and their
// subscriptions, shared by every instance of a fleet, so a session minted
// by one is found by the others and a subscription made through one
// reaches the stream open on another. Each method but Create is one
// script call (one round trip; see the package documentation, Round
// trips). It is safe for concurrent use.
//
// A session is a hash (its principal's key digest, when it began, the
// latest credential expiry seen, when it was last used) that expires with
// the session, beside the set of its subscribed URIs; each principal's
// sessions are a sorted set, oldest first, capped by
// MaxSessionsPerPrincipal (a new session ends the oldest; sessions that
// have ended on their own are dropped first), and the sessions of each
// family of principals a sorted set by when each ends. On one Redis there
// is one family, bounded by MaxSessions (a full family first drops up to
// 100 of the sessions that have ended, found by when they end, then
// refuses: sessions.ErrFull). On a cluster, where principals are spread
// over families (see the package documentation, Redis Cluster) and hash
// unevenly, MaxSessions bounds the store as a whole through a ledger of
// seats on a slot of its own, which only Create and End touch (never
// Find, Subscribe or Subscribed): a Create takes a seat, or, the ledger
// full, checks the seats whose sessions may have ended (their families
// say) and refuses only when the store holds MaxSessions live sessions;
// a principal at its cap still replaces its oldest, taking its seat, as
// in a MemoryStore (see session_seats.go for the rules). A session ends at its lifetime, when the latest
// credential seen on it expires, and when it is idle for IdleTimeout, as
// in a MemoryStore. Keys hold session ids (which authenticate nothing)
// and the SHA-256 of principals' session keys, never an identity. A
// session holds about 520 bytes of one Redis (measured by
// BenchmarkRedisMemory, each of a principal of its own; on a cluster its
// pointer and its seat add some), and its URIs.
// Sessions do not survive a Redis that restarts empty: clients then get
// 404 and initialize again, as the protocol has them do.
type SessionStore struct {
	client redis.UniversalClient
	prefix string
	lim    sessions.Limits
	now    func() time.Time
	gates  gates
	tags   []string // the families' hash tags: a principal's keys share one
	ids    idCache  // the family of sessions seen lately, by id
}

var (
	_ sessions.Store              = (*SessionStore)(nil)
	_ sessions.SubscriptionLister = (*SessionStore)(nil)
)

// NewSessionStore returns a SessionStore using client. It does not
// connect. It returns an error for a nil client or a negative limit.
func NewSessionStore(client redis.UniversalClient, o SessionOptions) (*SessionStore, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	l := o.Limits
	if l.IdleTimeout < 0 || l.Lifetime < 0 || l.MaxSessions < 0 || l.MaxSessionsPerPrincipal < 0 || l.MaxSubscriptions < 0 {
		return nil, errors.New("redisstore: SessionOptions.Limits must not be negative")
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defN := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.IdleTimeout, sessions.DefaultIdleTimeout)
	def(&l.Lifetime, sessions.DefaultLifetime)
	defN(&l.MaxSessions, sessions.DefaultMaxSessions)
	defN(&l.MaxSessionsPerPrincipal, sessions.DefaultMaxSessionsPerPrincipal)
	defN(&l.MaxSubscriptions, sessions.DefaultMaxSubscriptions)
	if o.Prefix == "" {
		o.Prefix = DefaultSessionPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// On a cluster, principals are spread over families of keys, each on
	// a slot of its own (see the package documentation, Redis Cluster):
	// up to 16, one for each eight principals at their cap that
	// MaxSessions holds (the seat ledger bounds them together: see
	// session_seats.go); a prefix with a hash tag of its own keeps one
	// family, as does one Redis.
	n := min(max(l.MaxSessions/(8*l.MaxSessionsPerPrincipal), 1), maxFamilies)
	if _, cluster := client.(*redis.ClusterClient); !cluster || strings.ContainsRune(o.Prefix, '{') {
		// One Redis holds every key: one family, bounded by MaxSessions
		// itself (families on one Redis would only split the bound).
		n = 1
	}
	tags := familyTags(n)
	if n == 1 && strings.ContainsRune(o.Prefix, '{') {
		tags = []string{""}
	}
	return &SessionStore{client: client, prefix: o.Prefix, lim: l, now: o.Now, tags: tags}, nil
}

// fam returns the key prefix of family i.
func (s *SessionStore) fam(i int) string { return s.prefix + s.tags[i] }

// familyOf returns the family of caller's sessions.
func (s *SessionStore) familyOf(pk string) int { return family(pk, len(s.tags)) }

// bound returns the bound of each family: MaxSessions (of several
// families, the seat ledger bounds the store as a whole; a family's bound
// only makes it drop its sessions that ended).
func (s *SessionStore) bound() int { return s.lim.MaxSessions }

// pointer returns the key that names the family of session id (none in a
// store of one family): Subscribed and Subscriptions know no principal.
func (s *SessionStore) pointer(id string) string { return s.prefix + "{" + id + "}" }

// sessionLua is the part every session script shares: the state of a
// session and whether it has ended, by the limits in ARGV[1..3] (now,
// the idle timeout and the lifetime, in ms).
//
// Each family has an epoch, in its marker (fam "gen": "<epoch>:<ident>",
// see runLua), and each session the epoch it was created in (field g). A
// family whose marker is missing or was written by a Redis process the
// script cannot vouch for (restarted, failed over) begins a new epoch:
// its sessions are gone, as after an empty restart, since any of them
// may have ended since (a snapshot older than its End, a replica that
// never had it), and its index of sessions (all) starts again.
const sessionLua = runLua + epochLua + `
local now, idle, life = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local function num(n) return string.format('%.0f', n) end
-- state returns the principal digest, start, credential expiry (0:
-- unknown) and last use of the session hash key, or nil.
local function state(key)
  local f = redis.call('HMGET', key, 'p', 'c', 'e', 'l', 'g')
  if not f[1] or f[5] ~= ep then return nil end
  return f[1], tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
end
local function ended(c, e, l)
  return now - c >= life or (e > 0 and now >= e) or now - l > idle
end
-- deadlines returns when the session ends at the latest, and unless used.
local function deadlines(c, e, l)
  local d = c + life
  if e > 0 and e < d then d = e end
  return d, l + idle
end
`

// epochLua: epoch(gen, all) returns the family's epoch (see
// sessionLua), beginning a new one when needed; ep holds it.
const epochLua = `
local ep
local function epoch(gen, all)
  local v = redis.call('GET', gen)
  local e, w
  if v then e, w = string.match(v, '^(%d+):(.*)$') end
  if e and w == here then return e end
  if e and trusted(w) then
    redis.call('SET', gen, e .. ':' .. here)
    return e
  end
  local t = redis.call('TIME')
  e = t[1] .. string.format('%06d', tonumber(t[2]))
  redis.call('SET', gen, e .. ':' .. here)
  redis.call('UNLINK', all)
  return e
end
`

// createScript: KEYS: the new session's hash, its principal's sessions,
// the family's sessions, then for each session the script may end (the
// principal's, as read just before, and ended sessions of the family
// when it is full): its hash, its subscriptions, its principal's
// sessions; last, the family's marker. ARGV: now, idle, life, the
// principal's digest, the credential expiry (0: unknown), the id, the cap
// per principal, the family's bound, "r" when the session may only take
// the place of the principal's oldest live session (the seat ledger is
// full: see session_seats.go), then the ids of those sessions. Returns
// {status, ended ids...}: 0 created, 2 full (or, with "r", the principal
// is not at its cap: nothing done), 9 the principal has a session not
// declared (created meanwhile): nothing done, read and run again.
var createScript = newScript(sessionLua + `
ep = epoch(KEYS[#KEYS], KEYS[3])
local pk, exp, id = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local per, all, replace = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9] == 'r'
local at = {}
for i = 10, #ARGV do at[ARGV[i]] = 3 + 3 * (i - 10) + 1 end
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
local out = {0}
local function drop(sid)
  local k = at[sid]
  redis.call('DEL', KEYS[k], KEYS[k + 1])
  redis.call('ZREM', KEYS[3], sid)
  redis.call('ZREM', KEYS[k + 2], sid)
  out[#out + 1] = sid
end
-- The principal's sessions: those that ended on their own go, then the
-- oldest while the principal is at its cap. A session not declared was
-- created after the read, so it is among the newest and alive; when one
-- of them would have to go, nothing is done.
local gone, live = {}, {}
for _, sid in ipairs(ids) do
  if at[sid] then
    local p, c, e, l = state(KEYS[at[sid]])
    if not p or ended(c, e, l) then gone[#gone + 1] = sid else live[#live + 1] = sid end
  else
    live[#live + 1] = sid
  end
end
if replace and #live < per then return {2} end
for i = 1, #live - per + 1 do
  if not at[live[i]] then return {9} end
  gone[#gone + 1] = live[i]
end
for _, sid in ipairs(gone) do drop(sid) end
-- A full family drops the sessions that ended (read by their end, the score).
if redis.call('ZCARD', KEYS[3]) >= all then
  for i = 10, #ARGV do
    local sid = ARGV[i]
    if redis.call('ZSCORE', KEYS[3], sid) then
      local p, c, e, l = state(KEYS[at[sid]])
      if not p or ended(c, e, l) then drop(sid) end
    end
  end
  if redis.call('ZCARD', KEYS[3]) >= all then out[1] = 2 return out end
end
if redis.call('EXISTS', KEYS[1]) == 1 then out[1] = 2 return out end -- an id minted twice
redis.call('HSET', KEYS[1], 'p', pk, 'c', num(now), 'e', num(exp), 'l', num(now), 'g', ep)
local d, i = deadlines(now, exp, now)
local stop = math.min(d, i)
redis.call('PEXPIRE', KEYS[1], num(stop - now + 1000))
-- Ordered by creation; one created in the same ms as the newest comes after it.
local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local order = now
if newest[2] and tonumber(newest[2]) >= order then order = tonumber(newest[2]) + 1 end
redis.call('ZADD', KEYS[2], num(order), id)
redis.call('PEXPIRE', KEYS[2], num(life + 1000))
redis.call('ZADD', KEYS[3], num(stop), id)
return out
`)

// createReadScript reads what a Create declares. KEYS: the principal's
// sessions, the family's sessions. ARGV: now, the family's bound, the
// family's key prefix. Returns {the principal's session ids, {id,
// principal digest, ...} of up to 100 of the family's sessions that
// ended, read only when the family is full}: by their score (when each
// ends), so never more than the ended ones, however many the family holds.
var createReadScript = newScript(`
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local swept = {}
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  for _, sid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
    swept[#swept + 1] = sid
    swept[#swept + 1] = redis.call('HGET', ARGV[3] .. 's:' .. sid, 'p') or ''
  end
end
return {ids, swept}
`)

// useScript finds a session bound to the principal and records the use,
// then subscribes or unsubscribes. KEYS: the session's hash, its
// subscriptions, all the sessions, the family's marker. ARGV: now, idle,
// life, the principal's digest, the credential expiry (0: unknown), the
// id, the operation
// ("f"ind, "s"ubscribe, "u"nsubscribe), the URI, the subscription bound.
// Returns {status, deadline, idle deadline}: 0 found, 1 not found, 3 too
// many subscriptions.
var useScript = newScript(sessionLua + `
ep = epoch(KEYS[4], KEYS[3])
local p, c, e, l = state(KEYS[1])
if not p or p ~= ARGV[4] or ended(c, e, l) then return {1, 0, 0} end
local exp = tonumber(ARGV[5])
if exp > e then e = exp end
l = now
redis.call('HSET', KEYS[1], 'e', num(e), 'l', num(l))
local d, i = deadlines(c, e, l)
local ttl = num(math.min(d, i) - now + 1000)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[3], num(math.min(d, i)), ARGV[6])
local status, op, uri = 0, ARGV[7], ARGV[8]
if op == 's' and redis.call('SISMEMBER', KEYS[2], uri) == 0 then
  if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[9]) then status = 3 else redis.call('SADD', KEYS[2], uri) end
elseif op == 'u' then
  redis.call('SREM', KEYS[2], uri)
end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ttl) end
return {status, d, i}
`)

// endScript ends a session bound to the principal. KEYS: the session's
// hash, its subscriptions, all the sessions, its principal's sessions,
// the family's marker. ARGV: now, idle, life, the principal's digest, the id. Returns 0 ended,
// 1 not found (unknown, another's), 2 ended already (dropped then too).
var endScript = newScript(sessionLua + `
ep = epoch(KEYS[5], KEYS[3])
local p, c, e, l = state(KEYS[1])
if not p or p ~= ARGV[4] then return 1 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[5])
redis.call('ZREM', KEYS[4], ARGV[5])
if ended(c, e, l) then return 2 end
return 0
`)

// subscribedScript: KEYS: the session's hash, its subscriptions, all the
// sessions, the family's marker. ARGV:
// the URI. Returns 1 when the session holds it.
var subscribedScript = newScript(runLua + epochLua + `
if redis.call('HGET', KEYS[1], 'g') ~= epoch(KEYS[4], KEYS[3]) then return 0 end
return redis.call('SISMEMBER', KEYS[2], ARGV[1])
`)

// subscriptionsScript: KEYS: the session's hash, its subscriptions, all
// the sessions, the family's marker.
// Returns its URIs; none when the session is gone.
var subscriptionsScript = newScript(runLua + epochLua + `
if redis.call('HGET', KEYS[1], 'g') ~= epoch(KEYS[4], KEYS[3]) then return {} end
return redis.call('SMEMBERS', KEYS[2])
`)

// maxIDLen bounds a session id: the part mints 43 characters.
const maxIDLen = 128

// validID reports whether id can name a session: 1–128 characters of the
// unpadded base64url alphabet (what the part mints). Any other id a
// client sends is unknown without a round trip, and no id can reach
// another key than its session's.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// args returns the ARGV every session script begins with.
func (s *SessionStore) args(now time.Time) []any {
	return []any{now.UnixMilli(), s.lim.IdleTimeout.Milliseconds(), s.lim.Lifetime.Milliseconds()}
}

// principalDigest returns the digest of caller's session key that the
// store keeps.
func principalDigest(caller *principal.Principal) string { return hashKey("", caller.SessionKey()) }

// expiresMS returns caller's credential expiry in ms, 0 when unknown.
func expiresMS(caller *principal.Principal) int64 {
	if caller.Expires.IsZero() {
		return 0
	}
	return max(caller.Expires.UnixMilli(), 1)
}

// run runs a script through the gate of its keys' node.
func (s *SessionStore) run(ctx context.Context, sc *script, keys []string, args ...any) *redis.Cmd {
	g := s.gates.For(ctx, s.client, keys[0])
	if !g.allow() {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ErrUnavailable)
		return cmd
	}
	cmd := sc.run(ctx, s.client, keys, args...)
	g.done(ctx, cmd.Err())
	return cmd
}

// maxCreateRounds bounds the reads and runs of one Create: another
// instance creating a session of the same principal in between makes it
// read again.
const maxCreateRounds = 16

// Create stores a new session id bound to caller; see
// [sessions.SessionStore]. It reads the principal's sessions (and, when
// its family is full, up to 100 of the family's ended ones) in one
// script, and then runs one declaring all their keys: two round trips.
// In a store of several families two more come before them, the id's
// pointer and its seat (see session_seats.go; a full ledger's checks
// add two for each hundred seats), and one after them when sessions
// ended (their seats). Each is sent once: against a stalled Redis,
// Create fails after one ReadTimeout.
func (s *SessionStore) Create(ctx context.Context, id string, caller *principal.Principal) ([]string, error) {
	if s == nil || s.client == nil {
		return nil, errStoreNotMade
	}
	if caller == nil || !validID(id) {
		return nil, errors.New("redisstore: session: no caller, or an id that is not 1–128 base64url characters")
	}
	pk := principalDigest(caller)
	fi := s.familyOf(pk)
	base := s.fam(fi)
	own, all := base+"k:"+pk, base+"all"
	if len(s.tags) > 1 {
		// The id's pointer first, on its own slot's node: a Create that
		// cannot write it creates nothing (and ends no older session); a
		// pointer whose session was not created names none and expires.
		pg := s.gates.For(ctx, s.client, s.pointer(id))
		if !pg.allow() {
			return nil, ErrUnavailable
		}
		err := do(ctx, s.client, "SET", s.pointer(id), fi, "PX", s.pointerTTL(s.lim.IdleTimeout)).Err()
		pg.done(ctx, err)
		if err != nil {
			return nil, fmt.Errorf("redisstore: session: %w", err)
		}
	}
	now, exp := s.now(), expiresMS(caller)
	seated, replace := false, false
	if len(s.tags) > 1 {
		// A seat of the ledger (see session_seats.go): MaxSessions bounds
		// the store as a whole, not each family. With none left, the
		// session may still take the place (and seat) of its principal's
		// oldest, as in a MemoryStore.
		switch err := s.takeSeat(ctx, now, fi, id, s.seatStop(now, exp)); {
		case errors.Is(err, errSeatTaken):
			return nil, sessions.ErrFull
		case errors.Is(err, errFullSeats):
			replace = true
		case err != nil:
			return nil, errSeat(err)
		default:
			seated = true
		}
	}
	g := s.gates.For(ctx, s.client, own)
	if !g.allow() {
		if seated {
			s.moveSeats(ctx, fi, "", 0, id)
		}
		return nil, ErrUnavailable
	}
	res, err := s.create(ctx, now, id, pk, exp, base, own, all, replace)
	g.done(ctx, err)
	if err != nil {
		if seated {
			// Unless the script ran after all (a timeout), in which case
			// the seat is held by a live session: the ledger finds it so
			// when it checks it. A seat given back for a session that
			// exists lets the store hold one more until the session ends.
			s.moveSeats(ctx, fi, "", 0, id)
		}
		return nil, fmt.Errorf("redisstore: session: %w", err)
	}
	var ended []string
	for _, v := range res[1:] {
		if sid, ok := v.(string); ok {
			ended = append(ended, sid)
			s.ids.drop(sid)
		}
	}
	full := false
	if status, _ := res[0].(int64); status == 2 {
		full = true
	} else {
		s.ids.put(id, fi, now.Add(min(s.lim.IdleTimeout, s.lim.Lifetime)).UnixMilli())
	}
	switch {
	case seated && full:
		s.moveSeats(ctx, fi, "", 0, append(ended, id)...)
	case replace && !full:
		s.moveSeats(ctx, fi, id, s.seatStop(now, exp), ended...)
	case len(s.tags) > 1:
		s.moveSeats(ctx, fi, "", 0, ended...)
	}
	if full {
		return ended, sessions.ErrFull
	}
	return ended, nil
}

func (s *SessionStore) create(ctx context.Context, now time.Time, id, pk string, exp int64, base, own, all string, replace bool) ([]any, error) {
	mode := ""
	if replace {
		mode = "r"
	}
	bound := s.bound()
	for range maxCreateRounds {
		// One call (a script that reads only: never retried after a
		// timeout, as a pipeline would be up to MaxRedirects times).
		r, err := createReadScript.run(ctx, s.client, []string{own, all}, now.UnixMilli(), bound, base).Slice()
		if err != nil {
			return nil, err
		}
		if len(r) != 2 {
			return nil, errors.New("unexpected reply")
		}
		ids, _ := r[0].([]any)
		swept, _ := r[1].([]any)
		declared := make([]string, 0, len(ids)+len(swept)/2)
		owners := make([]string, 0, cap(declared))
		for _, v := range ids {
			if sid, ok := v.(string); ok {
				declared, owners = append(declared, sid), append(owners, own)
			}
		}
		// The family's ended sessions, when it is full: their principals,
		// read from their hashes, name the indexes they leave.
		for i := 0; i+1 < len(swept); i += 2 {
			sid, _ := swept[i].(string)
			if !validID(sid) {
				continue
			}
			o := own
			if p, _ := swept[i+1].(string); p != "" && validID(p) {
				o = base + "k:" + p
			}
			declared, owners = append(declared, sid), append(owners, o)
		}
		keys := make([]string, 0, 3+3*len(declared))
		keys = append(keys, base+"s:"+id, own, all)
		args := append(s.args(now), pk, exp, id, s.lim.MaxSessionsPerPrincipal, bound, mode)
		for i, sid := range declared {
			keys = append(keys, base+"s:"+sid, base+"u:"+sid, owners[i])
			args = append(args, sid)
		}
		keys = append(keys, base+"gen")
		res, err := createScript.run(ctx, s.client, keys, args...).Slice()
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			return nil, errors.New("unexpected reply")
		}
		if status, _ := res[0].(int64); status != 9 {
			return res, nil
		}
	}
	return nil, errors.New("too many sessions of one principal created at once")
}

// use runs useScript for op.
func (s *SessionStore) use(ctx context.Context, id string, caller *principal.Principal, op, uri string) (sessions.Session, error) {
	if s == nil || s.client == nil {
		return sessions.Session{}, errStoreNotMade
	}
	if caller == nil || !validID(id) {
		return sessions.Session{}, sessions.ErrNotFound
	}
	pk := principalDigest(caller)
	fi := s.familyOf(pk)
	base := s.fam(fi)
	now := s.now()
	args := append(s.args(now), pk, expiresMS(caller), id, op, uri, s.lim.MaxSubscriptions)
	res, err := s.run(ctx, useScript, []string{base + "s:" + id, base + "u:" + id, base + "all", base + "gen"}, args...).Int64Slice()
	if err != nil {
		return sessions.Session{}, fmt.Errorf("redisstore: session: %w", err)
	}
	if len(res) != 3 {
		return sessions.Session{}, errors.New("redisstore: session: unexpected reply")
	}
	info := sessions.Session{Deadline: time.UnixMilli(res[1]), IdleDeadline: time.UnixMilli(res[2])}
	if res[0] == 0 || res[0] == 3 {
		s.keepPointer(ctx, id, fi, now, min(res[1], res[2]))
	}
	switch res[0] {
	case 0:
		return info, nil
	case 1:
		return sessions.Session{}, sessions.ErrNotFound
	case 3:
		return info, sessions.ErrTooManySubscriptions
	}
	return sessions.Session{}, errors.New("redisstore: session: unexpected reply")
}

// Find returns the live session id bound to caller and records the use;
// see [sessions.SessionStore].
func (s *SessionStore) Find(ctx context.Context, id string, caller *principal.Principal) (sessions.Session, error) {
	return s.use(ctx, id, caller, "f", "")
}

// End ends the session id bound to caller, with its subscriptions; see
// [sessions.SessionStore].
func (s *SessionStore) End(ctx context.Context, id string, caller *principal.Principal) error {
	if s == nil || s.client == nil {
		return errStoreNotMade
	}
	if caller == nil || !validID(id) {
		return sessions.ErrNotFound
	}
	pk := principalDigest(caller)
	fi := s.familyOf(pk)
	base := s.fam(fi)
	args := append(s.args(s.now()), pk, id)
	n, err := s.run(ctx, endScript, []string{base + "s:" + id, base + "u:" + id, base + "all", base + "k:" + pk, base + "gen"}, args...).Int64()
	if err == nil {
		s.ids.drop(id)
		if len(s.tags) > 1 && n != 1 {
			// Its seat and pointer go with the session (else the seat
			// stays until a full ledger finds it gone, and the pointer
			// expires at the session's idle deadline): a failure here
			// leaves only that. Another principal's session (1) keeps
			// both.
			s.moveSeats(ctx, fi, "", 0, id)
			if pg := s.gates.For(ctx, s.client, s.pointer(id)); n == 0 && pg.allow() {
				pg.done(ctx, do(ctx, s.client, "DEL", s.pointer(id)).Err())
			}
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: session: %w", err)
	case n != 0:
		return sessions.ErrNotFound
	}
	return nil
}

// Subscribe adds uri to the subscriptions of the session id bound to
// caller; see [sessions.SubscriptionStore].
func (s *SessionStore) Subscribe(ctx context.Context, id string, caller *principal.Principal, uri string) error {
	_, err := s.use(ctx, id, caller, "s", uri)
	return err
}

// Unsubscribe removes uri from the subscriptions of the session id bound
// to caller; see [sessions.SubscriptionStore].
func (s *SessionStore) Unsubscribe(ctx context.Context, id string, caller *principal.Principal, uri string) error {
	_, err := s.use(ctx, id, caller, "u", uri)
	return err
}

// Subscribed reports whether the session id holds uri; see
// [sessions.SubscriptionStore].
func (s *SessionStore) Subscribed(ctx context.Context, id, uri string) (bool, error) {
	if s == nil || s.client == nil {
		return false, errStoreNotMade
	}
	if !validID(id) {
		return false, nil
	}
	base, ok, err := s.base(ctx, id)
	if !ok || err != nil {
		return false, err
	}
	n, err := s.run(ctx, subscribedScript, []string{base + "s:" + id, base + "u:" + id, base + "all", base + "gen"}, uri).Int64()
	if err != nil {
		return false, fmt.Errorf("redisstore: session: %w", err)
	}
	return n == 1, nil
}

// Subscriptions returns the URIs of the session id (one script call);
// see [sessions.SubscriptionLister].
func (s *SessionStore) Subscriptions(ctx context.Context, id string) ([]string, error) {
	if s == nil || s.client == nil {
		return nil, errStoreNotMade
	}
	if !validID(id) {
		return nil, nil
	}
	base, ok, err := s.base(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	uris, err := s.run(ctx, subscriptionsScript, []string{base + "s:" + id, base + "u:" + id, base + "all", base + "gen"}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redisstore: session: %w", err)
	}
	return uris, nil
}

// base returns the key prefix of session id's family: known when the
// store has one family or saw the session lately, else read from the
// id's pointer (one round trip more). ok is false for a session unknown.
func (s *SessionStore) base(ctx context.Context, id string) (string, bool, error) {
	if len(s.tags) == 1 {
		return s.fam(0), true, nil
	}
	if fi, ok := s.ids.get(id); ok {
		return s.fam(fi), true, nil
	}
	ptr := s.pointer(id)
	g := s.gates.For(ctx, s.client, ptr)
	if !g.allow() {
		return "", false, ErrUnavailable
	}
	v, err := do(ctx, s.client, "GET", ptr).Int()
	g.done(ctx, err)
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("redisstore: session: %w", err)
	case v < 0 || v >= len(s.tags):
		return "", false, nil
	}
	s.ids.put(id, v, 0)
	return s.fam(v), true, nil
}

// Len returns the number of sessions the store holds, live or not yet
// dropped (one ZCARD a family, pipelined).
func (s *SessionStore) Len(ctx context.Context) (int, error) {
	if s == nil || s.client == nil {
		return 0, errStoreNotMade
	}
	g := s.gates.For(ctx, s.client, s.fam(0)+"all")
	if !g.allow() {
		return 0, ErrUnavailable
	}
	cmds := make([]*redis.IntCmd, len(s.tags))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range s.tags {
			cmds[i] = p.ZCard(ctx, s.fam(i)+"all")
		}
		return nil
	})
	g.done(ctx, err)
	if err != nil {
		return 0, fmt.Errorf("redisstore: session: %w", err)
	}
	var n int64
	for _, c := range cmds {
		n += c.Val()
	}
	return int(min(n, math.MaxInt32)), nil
}

// pointerTTL returns the TTL (ms) of a pointer whose session ends,
// unless used, in d: it expires a second after it.
func (s *SessionStore) pointerTTL(d time.Duration) int64 {
	return min(d, s.lim.Lifetime).Milliseconds() + 1000
}

// keepPointer makes session id's pointer (in a store of several
// families) expire with the session, whose use at now moved its end to
// end (ms): one PEXPIRE when the end moved past the pointer's by more
// than a quarter of the idle timeout (as far as this instance knows), so
// that a session used often costs one every IdleTimeout/4, not every use.
func (s *SessionStore) keepPointer(ctx context.Context, id string, fi int, now time.Time, end int64) {
	if len(s.tags) == 1 {
		return
	}
	known := s.ids.expiry(id)
	if end <= known+s.lim.IdleTimeout.Milliseconds()/4 {
		return
	}
	ptr := s.pointer(id)
	pg := s.gates.For(ctx, s.client, ptr)
	if !pg.allow() {
		return // it expires early at worst: Subscribed then finds no session
	}
	err := do(ctx, s.client, "PEXPIRE", ptr, max(end-now.UnixMilli(), 0)+1000).Err()
	pg.done(ctx, err)
	if err == nil {
		s.ids.put(id, fi, end)
	}
}

// idCache remembers the family of the sessions an instance saw lately, so
// that Subscribed (asked for every update a stream receives) costs one
// round trip, and until when it made their pointers live. It holds at
// most maxCachedIDs; when full it starts over.
type idCache struct {
	mu sync.Mutex
	m  map[string]cachedID
}

type cachedID struct {
	fi  int
	exp int64 // the pointer's expiry this instance set (ms), 0: unknown
}

const maxCachedIDs = 1 << 14

func (c *idCache) get(id string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	return v.fi, ok
}

func (c *idCache) expiry(id string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id].exp
}

func (c *idCache) put(id string, fi int, exp int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedIDs {
		c.m = make(map[string]cachedID)
	}
	if old, ok := c.m[id]; ok && old.fi == fi && exp == 0 {
		exp = old.exp
	}
	c.m[id] = cachedID{fi: fi, exp: exp}
}

func (c *idCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

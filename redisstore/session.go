package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// sharing a Redis its own. In Redis Cluster, put a hash tag in it
	// ("{mcpkit-sess}:"): a script touches several sessions' keys.
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
// reaches the stream open on another. Each method is one script call (one
// round trip). It is safe for concurrent use.
//
// A session is a hash (its principal's key digest, when it began, the
// latest credential expiry seen, when it was last used) that expires with
// the session, beside the set of its subscribed URIs; each principal's
// sessions are a sorted set, oldest first, capped by
// MaxSessionsPerPrincipal (a new session ends the oldest; sessions that
// have ended on their own are dropped first), and all the sessions a
// sorted set by when each ends, which bounds them by MaxSessions (a full
// store first drops the sessions that have ended, then refuses:
// sessions.ErrFull). A session ends at its lifetime, when the latest
// credential seen on it expires, and when it is idle for IdleTimeout, as
// in a MemoryStore. Keys hold session ids (which authenticate nothing)
// and the SHA-256 of principals' session keys, never an identity. A
// session holds about 630 bytes of Redis (measured by
// BenchmarkRedisMemory, each of a principal of its own), and its URIs.
// Sessions do not survive a Redis that restarts empty: clients then get
// 404 and initialize again, as the protocol has them do.
type SessionStore struct {
	client redis.UniversalClient
	prefix string
	lim    sessions.Limits
	now    func() time.Time
	gate   gate
}

var (
	_ sessions.Store              = (*SessionStore)(nil)
	_ sessions.SubscriptionLister = (*SessionStore)(nil)
)

// NewSessionStore returns a SessionStore using client. It does not
// connect. It returns an error for a nil client or a negative limit.
func NewSessionStore(client redis.UniversalClient, o SessionOptions) (*SessionStore, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil client")
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
	if o.Now == nil {
		o.Now = time.Now
	}
	return &SessionStore{client: client, prefix: o.Prefix, lim: l, now: o.Now}, nil
}

// sessionLua is the part every session script shares: the state of a
// session and whether it has ended, by the limits in ARGV[1..3] (now,
// the idle timeout and the lifetime, in ms).
const sessionLua = `
local now, idle, life = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local function num(n) return string.format('%.0f', n) end
-- state returns the principal digest, start, credential expiry (0:
-- unknown) and last use of the session hash key, or nil.
local function state(key)
  local f = redis.call('HMGET', key, 'p', 'c', 'e', 'l')
  if not f[1] then return nil end
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

// createScript: KEYS: the new session's hash, its principal's sessions,
// all the sessions. ARGV: now, idle, life, the principal's digest, the
// credential expiry (0: unknown), the id, the cap per principal, the
// bound, the prefix. Returns {status, ended ids...}: 0 created, 2 full.
var createScript = redis.NewScript(sessionLua + `
local pk, exp, id = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local per, all, prefix = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local out = {0}
local function drop(sid, own)
  redis.call('DEL', prefix .. 's:' .. sid, prefix .. 'u:' .. sid)
  redis.call('ZREM', KEYS[3], sid)
  if own then redis.call('ZREM', own, sid) end
  out[#out + 1] = sid
end
-- The principal's sessions: those that ended on their own go, then the
-- oldest while the principal is at its cap.
local live = {}
for _, sid in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local p, c, e, l = state(prefix .. 's:' .. sid)
  if not p or ended(c, e, l) then drop(sid, KEYS[2]) else live[#live + 1] = sid end
end
for i = 1, #live - per + 1 do drop(live[i], KEYS[2]) end
-- A full store drops the sessions that ended (by their end, the score).
if redis.call('ZCARD', KEYS[3]) >= all then
  for _, sid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', num(now), 'LIMIT', 0, 1000)) do
    local p, c, e, l = state(prefix .. 's:' .. sid)
    if not p then drop(sid, nil)
    elseif ended(c, e, l) then drop(sid, prefix .. 'k:' .. p) end
  end
  if redis.call('ZCARD', KEYS[3]) >= all then out[1] = 2 return out end
end
if redis.call('EXISTS', KEYS[1]) == 1 then out[1] = 2 return out end -- an id minted twice
redis.call('HSET', KEYS[1], 'p', pk, 'c', num(now), 'e', num(exp), 'l', num(now))
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

// useScript finds a session bound to the principal and records the use,
// then subscribes or unsubscribes. KEYS: the session's hash, its
// subscriptions, all the sessions. ARGV: now, idle, life, the principal's
// digest, the credential expiry (0: unknown), the id, the operation
// ("f"ind, "s"ubscribe, "u"nsubscribe), the URI, the subscription bound.
// Returns {status, deadline, idle deadline}: 0 found, 1 not found, 3 too
// many subscriptions.
var useScript = redis.NewScript(sessionLua + `
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
// hash, its subscriptions, all the sessions, its principal's sessions.
// ARGV: now, idle, life, the principal's digest, the id. Returns 0 ended,
// 1 not found (unknown, another's, or ended already: dropped then too).
var endScript = redis.NewScript(sessionLua + `
local p, c, e, l = state(KEYS[1])
if not p or p ~= ARGV[4] then return 1 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[5])
redis.call('ZREM', KEYS[4], ARGV[5])
if ended(c, e, l) then return 1 end
return 0
`)

// subscribedScript: KEYS: the session's hash, its subscriptions. ARGV:
// the URI. Returns 1 when the session holds it.
var subscribedScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('SISMEMBER', KEYS[2], ARGV[1])
`)

// subscriptionsScript: KEYS: the session's hash, its subscriptions.
// Returns its URIs; none when the session is gone.
var subscriptionsScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
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

// run runs a script through the gate.
func (s *SessionStore) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if !s.gate.allow() {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ErrUnavailable)
		return cmd
	}
	cmd := script.Run(ctx, s.client, keys, args...)
	s.gate.done(ctx, cmd.Err())
	return cmd
}

// Create stores a new session id bound to caller; see
// [sessions.SessionStore].
func (s *SessionStore) Create(ctx context.Context, id string, caller *principal.Principal) ([]string, error) {
	if caller == nil || !validID(id) {
		return nil, errors.New("redisstore: session: no caller, or an id that is not 1–128 base64url characters")
	}
	pk := principalDigest(caller)
	args := append(s.args(s.now()), pk, expiresMS(caller), id, s.lim.MaxSessionsPerPrincipal, s.lim.MaxSessions, s.prefix)
	res, err := s.run(ctx, createScript, []string{s.prefix + "s:" + id, s.prefix + "k:" + pk, s.prefix + "all"}, args...).Slice()
	if err != nil {
		return nil, fmt.Errorf("redisstore: session: %w", err)
	}
	if len(res) == 0 {
		return nil, errors.New("redisstore: session: unexpected reply")
	}
	var ended []string
	for _, v := range res[1:] {
		if sid, ok := v.(string); ok {
			ended = append(ended, sid)
		}
	}
	if status, _ := res[0].(int64); status == 2 {
		return ended, sessions.ErrFull
	}
	return ended, nil
}

// use runs useScript for op.
func (s *SessionStore) use(ctx context.Context, id string, caller *principal.Principal, op, uri string) (sessions.Session, error) {
	if caller == nil || !validID(id) {
		return sessions.Session{}, sessions.ErrNotFound
	}
	args := append(s.args(s.now()), principalDigest(caller), expiresMS(caller), id, op, uri, s.lim.MaxSubscriptions)
	res, err := s.run(ctx, useScript, []string{s.prefix + "s:" + id, s.prefix + "u:" + id, s.prefix + "all"}, args...).Int64Slice()
	if err != nil {
		return sessions.Session{}, fmt.Errorf("redisstore: session: %w", err)
	}
	if len(res) != 3 {
		return sessions.Session{}, errors.New("redisstore: session: unexpected reply")
	}
	info := sessions.Session{Deadline: time.UnixMilli(res[1]), IdleDeadline: time.UnixMilli(res[2])}
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
	if caller == nil || !validID(id) {
		return sessions.ErrNotFound
	}
	pk := principalDigest(caller)
	args := append(s.args(s.now()), pk, id)
	n, err := s.run(ctx, endScript, []string{s.prefix + "s:" + id, s.prefix + "u:" + id, s.prefix + "all", s.prefix + "k:" + pk}, args...).Int64()
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
	if !validID(id) {
		return false, nil
	}
	n, err := s.run(ctx, subscribedScript, []string{s.prefix + "s:" + id, s.prefix + "u:" + id}, uri).Int64()
	if err != nil {
		return false, fmt.Errorf("redisstore: session: %w", err)
	}
	return n == 1, nil
}

// Subscriptions returns the URIs of the session id (one script call);
// see [sessions.SubscriptionLister].
func (s *SessionStore) Subscriptions(ctx context.Context, id string) ([]string, error) {
	if !validID(id) {
		return nil, nil
	}
	uris, err := s.run(ctx, subscriptionsScript, []string{s.prefix + "s:" + id, s.prefix + "u:" + id}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redisstore: session: %w", err)
	}
	return uris, nil
}

// Len returns the number of sessions the store holds, live or not yet
// dropped (one ZCARD).
func (s *SessionStore) Len(ctx context.Context) (int, error) {
	if !s.gate.allow() {
		return 0, ErrUnavailable
	}
	n, err := s.client.ZCard(ctx, s.prefix+"all").Result()
	s.gate.done(ctx, err)
	if err != nil {
		return 0, fmt.Errorf("redisstore: session: %w", err)
	}
	return int(min(n, math.MaxInt32)), nil
}

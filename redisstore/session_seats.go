package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The seat ledger of a SessionStore of several families (a Redis
// Cluster): one sorted set on a slot of its own, holding a seat for each
// session of the store ("<family>:<id>", scored by when the session ends
// as far as the ledger knows), at most MaxSessions of them. A Create
// takes a seat before it creates its session in its principal's family
// (which keeps the principal's sessions, their cap and every key a
// request reads), so MaxSessions bounds the store as a whole however
// unevenly principals hash; only Create and End touch the ledger, never
// Find, Subscribe or Subscribed, so no request of a session reaches a
// single hot key.
//
// A session's use moves its end in its family, not in the ledger, so a
// seat's score is never later than its session's end (but for the short
// grace of a seat taken for a session not yet created, seatGrace): a
// seat scored in the future holds a live session, unless an End or a
// new session of its principal ended it (both give the seat back; a seat
// they could not give back, and those of a family whose Redis lost its
// data, stay until their score passes). When the ledger is full a Create
// asks the families of the seats whose score has passed (up to 100 at a
// time) when their sessions end now, gives back the seats of sessions
// gone and moves the others' scores on, and takes a seat if that freed
// one: the store refuses (sessions.ErrFull) only when it holds
// MaxSessions live sessions. A ledger found empty or written in a
// history its Redis cannot vouch for (see runLua) is rebuilt from the
// families' live sessions by the first Create that finds it so.

// seatGrace is the least time a seat taken for a new session stays
// before a full ledger may check its session: a Create takes its seat
// before it creates the session, and a seat checked in between would
// find none. (So the instances' clocks must agree within it: one ahead
// by more could give back a seat taken an instant before by another,
// and the store would hold one more session until that one ends.)
const seatGrace = 10 * time.Second

// maxSeatRounds bounds the checks of one Create on a full ledger: each
// checks up to seatBatch seats whose score has passed.
const (
	maxSeatRounds = 16
	seatBatch     = 100
)

// ledger returns the keys of the seat ledger and its marker: a hash tag
// no session id's pointer can have ('~' is not base64url).
func (s *SessionStore) ledger() (string, string) {
	return s.prefix + "{~seats}all", s.prefix + "{~seats}gen"
}

// seat returns the ledger member of session id of family fi.
func seat(fi int, id string) string { return strconv.Itoa(fi) + ":" + id }

// seatScript takes a seat. KEYS: the ledger, its marker. ARGV: now,
// MaxSessions, the seat, its score. Returns {0} taken, {3} the ledger
// must be rebuilt first (found empty, or in a history not vouched for),
// {4} the seat is held already (an id minted twice), {2, seats...} full:
// the seats (up to seatBatch) whose score has passed.
var seatScript = newScript(runLua + `
local v = redis.call('GET', KEYS[2])
if v ~= here then
  if not v or not trusted(v) then return {3} end
  redis.call('SET', KEYS[2], here)
end
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return {4} end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
  return {0}
end
local out = {2}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ` + strconv.Itoa(seatBatch) + `)) do
  out[#out + 1] = m
end
return out
`)

// settleScript records what the families said of seats: KEYS: the
// ledger. ARGV: pairs of a seat and when its session ends (0: gone);
// a seat whose session is gone (or has ended) goes, the others' scores
// move on (only if still held). ARGV[1] is now.
var settleScript = newScript(`
local now = tonumber(ARGV[1])
for i = 2, #ARGV - 1, 2 do
  local d = tonumber(ARGV[i + 1])
  if d <= now then
    redis.call('ZREM', KEYS[1], ARGV[i])
  else
    redis.call('ZADD', KEYS[1], 'XX', 'GT', ARGV[i + 1], ARGV[i])
  end
end
return 0
`)

// fillScript rebuilds the ledger: KEYS: the ledger, its marker. ARGV:
// pairs of a seat and its score (the families' live sessions). Adds
// those not held, then marks the ledger as written here.
var fillScript = newScript(runLua + `
for i = 1, #ARGV - 1, 2 do
  redis.call('ZADD', KEYS[1], 'NX', ARGV[i + 1], ARGV[i])
end
redis.call('SET', KEYS[2], here)
return 0
`)

// endsScript tells when sessions of one family end. KEYS: the family's
// sessions, its marker. ARGV: ids; or "+" and now, for every live
// session of the family. Returns {id, end (ms, 0: gone), ...}, by the family's
// index of sessions (scored by when each ends, moved on by each use), in
// the family's epoch (see sessionLua).
var endsScript = newScript(runLua + epochLua + `
ep = epoch(KEYS[2], KEYS[1])
local out = {}
if ARGV[1] == '+' then
  local r = redis.call('ZRANGE', KEYS[1], '(' .. ARGV[2], '+inf', 'BYSCORE', 'WITHSCORES')
  for i = 1, #r, 2 do out[#out + 1] = r[i]; out[#out + 1] = r[i + 1] end
  return out
end
for _, id in ipairs(ARGV) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('ZSCORE', KEYS[1], id) or '0'
end
return out
`)

// takeSeat takes the seat of session id of family fi, to end at stop
// (ms) unless used; see the ledger above. It returns sessions.ErrFull
// (wrapped by the caller) as errFullSeats when the store holds
// MaxSessions live sessions.
func (s *SessionStore) takeSeat(ctx context.Context, now time.Time, fi int, id string, stop int64) error {
	all, gen := s.ledger()
	score := max(stop, now.Add(seatGrace).UnixMilli())
	rebuilt := false
	for range maxSeatRounds {
		res, err := s.run(ctx, seatScript, []string{all, gen}, now.UnixMilli(), s.lim.MaxSessions, seat(fi, id), score).Slice()
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return errors.New("unexpected reply")
		}
		switch st, _ := res[0].(int64); st {
		case 0:
			return nil
		case 3:
			if rebuilt {
				return errors.New("the seat ledger was rebuilt and found lost again")
			}
			rebuilt = true
			if err := s.rebuildSeats(ctx, now); err != nil {
				return err
			}
			continue
		case 4:
			return errSeatTaken
		case 2:
		default:
			return errors.New("unexpected reply")
		}
		if len(res) == 1 {
			return errFullSeats // every seat's session is live
		}
		if err := s.settleSeats(ctx, now, res[1:]); err != nil {
			return err
		}
	}
	return errFullSeats
}

var (
	errFullSeats = errors.New("full")
	errSeatTaken = errors.New("a session of that id exists")
)

// settleSeats asks the families of seats when their sessions end, and
// records it in the ledger.
func (s *SessionStore) settleSeats(ctx context.Context, now time.Time, seats []any) error {
	byFam := map[int][]any{}
	for _, v := range seats {
		m, _ := v.(string)
		f, id, ok := strings.Cut(m, ":")
		fi, err := strconv.Atoi(f)
		if !ok || err != nil || fi < 0 || fi >= len(s.tags) || !validID(id) {
			// Not a seat this store writes: it goes.
			byFam[-1] = append(byFam[-1], m)
			continue
		}
		byFam[fi] = append(byFam[fi], id)
	}
	args := []any{now.UnixMilli()}
	for fi, ids := range byFam {
		if fi < 0 {
			for _, m := range ids {
				args = append(args, m, 0)
			}
			continue
		}
		base := s.fam(fi)
		r, err := s.run(ctx, endsScript, []string{base + "all", base + "gen"}, ids...).StringSlice()
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(r); i += 2 {
			args = append(args, seat(fi, r[i]), r[i+1])
		}
	}
	all, _ := s.ledger()
	return s.run(ctx, settleScript, []string{all}, args...).Err()
}

// rebuildSeats fills the ledger with the families' live sessions.
func (s *SessionStore) rebuildSeats(ctx context.Context, now time.Time) error {
	var args []any
	for fi := range s.tags {
		base := s.fam(fi)
		r, err := s.run(ctx, endsScript, []string{base + "all", base + "gen"}, "+", now.UnixMilli()).StringSlice()
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(r); i += 2 {
			if validID(r[i]) {
				args = append(args, seat(fi, r[i]), r[i+1])
			}
		}
	}
	all, gen := s.ledger()
	return s.run(ctx, fillScript, []string{all, gen}, args...).Err()
}

// moveSeats gives back the seats of sessions of family fi that ended,
// and takes seat id (unless "") to end at stop: the place of a session
// that took its principal's oldest's. A failure leaves them until their
// score passes (a full ledger then finds their sessions gone), or id
// without a seat until it ends.
func (s *SessionStore) moveSeats(ctx context.Context, fi int, id string, stop int64, ended ...string) {
	if len(ended) == 0 && id == "" {
		return
	}
	all, _ := s.ledger()
	args := make([]any, 0, 2+len(ended))
	if id != "" {
		args = append(args, seat(fi, id), stop)
	} else {
		args = append(args, "", 0)
	}
	for _, sid := range ended {
		args = append(args, seat(fi, sid))
	}
	_ = s.run(ctx, moveScript, []string{all}, args...).Err()
}

// moveScript: KEYS: the ledger. ARGV: a seat to take ("": none), its
// score, then seats to give back.
var moveScript = newScript(`
for i = 3, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
if ARGV[1] ~= '' then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
return 0
`)

// seatStop returns when a session created at now for a credential
// expiring at exp (ms, 0: unknown) ends unless used (ms).
func (s *SessionStore) seatStop(now time.Time, exp int64) int64 {
	stop := now.Add(min(s.lim.IdleTimeout, s.lim.Lifetime)).UnixMilli()
	if exp > 0 && exp < stop {
		stop = exp
	}
	return stop
}

// errSeat wraps a seat error for Create.
func errSeat(err error) error { return fmt.Errorf("redisstore: session: seat: %w", err) }

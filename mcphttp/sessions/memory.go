package sessions

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// MemoryStore is the in-process [Store], the default of [New]: sessions
// live as long as the process and are not shared with other instances. It
// is safe for concurrent use.
//
// Nothing in it can be exhausted by one caller: each principal holds at
// most Limits.MaxSessionsPerPrincipal sessions (a new one ends its
// oldest), each session at most Limits.MaxSubscriptions URIs, and a store
// holding Limits.MaxSessions sessions first drops the expired ones, then
// refuses (ErrFull). A session ends at its absolute lifetime, when the
// latest credential seen on it expires, and when it is idle for
// Limits.IdleTimeout.
//
// A full store finds its expired sessions without looking at the others:
// the sessions are kept in a heap by when they end, which a session's use
// moves on (see memSession.due), so that making room costs O(log n) per
// session dropped, whatever the number of sessions held.
type MemoryStore struct {
	lim   Limits
	now   func() time.Time
	slack int64 // nanoseconds a session's end may move before its use moves it in the heap

	mu    sync.Mutex
	byID  map[string]*memSession
	byKey map[string][]*memSession // each principal's sessions, oldest first
	ends  endHeap                  // every session of byID, by due
}

var (
	_ Store              = (*MemoryStore)(nil)
	_ SubscriptionLister = (*MemoryStore)(nil)
)

type memSession struct {
	id, key string // the session id, and the SessionKey of its principal
	created time.Time

	// due is when the session ends at the earliest, as last recorded in
	// the store's heap (Unix nanoseconds): a lower bound of its end
	// (written with the store's lock held). A use moves it on only once
	// the session's end has moved on by more than the store's slack, so
	// that most requests leave the store's lock alone, and at once when
	// the end came earlier; a full store moves on whatever it finds
	// behind when it looks for an expired session.
	due  atomic.Int64
	hidx int // index in the store's heap (store's lock)

	mu       sync.Mutex
	lastSeen time.Time
	expires  time.Time           // the latest credential expiry seen on the session; zero: unknown
	subs     map[string]struct{} // subscribed URIs; nil until the first
	ended    bool
}

// NewMemoryStore returns an empty MemoryStore bounded by lim (its session
// fields: IdleTimeout, Lifetime, MaxSessions, MaxSessionsPerPrincipal and
// MaxSubscriptions; zero values mean the defaults). It returns an error
// when a limit is negative.
func NewMemoryStore(lim Limits) (*MemoryStore, error) {
	lim, err := lim.resolve()
	if err != nil {
		return nil, err
	}
	return &MemoryStore{lim: lim, now: time.Now, slack: int64(lim.IdleTimeout / 8),
		byID: map[string]*memSession{}, byKey: map[string][]*memSession{}}, nil
}

// Create stores a new session id of caller; see [SessionStore].
func (st *MemoryStore) Create(_ context.Context, id string, caller *principal.Principal) ([]string, error) {
	now := st.now()
	s := &memSession{id: id, key: caller.SessionKey(), created: now, lastSeen: now, expires: caller.Expires}
	var ended []string
	st.mu.Lock()
	defer st.mu.Unlock()
	if own := st.byKey[s.key]; len(own) >= st.lim.MaxSessionsPerPrincipal {
		ended = append(ended, own[0].id) // the principal's oldest
		st.removeLocked(own[0])
	}
	if len(st.byID) >= st.lim.MaxSessions {
		ended = st.makeRoomLocked(now, ended)
		if len(st.byID) >= st.lim.MaxSessions {
			return ended, ErrFull
		}
	}
	if st.byID[id] != nil {
		return ended, ErrFull // an id minted twice: never share a session
	}
	st.byID[id] = s
	st.byKey[s.key] = append(st.byKey[s.key], s)
	s.due.Store(st.endOf(s).UnixNano())
	heap.Push(&st.ends, s)
	return ended, nil
}

// Find returns the live session id of caller; see [SessionStore].
func (st *MemoryStore) Find(_ context.Context, id string, caller *principal.Principal) (Session, error) {
	var info Session
	err := st.use(id, caller, func(s *memSession) error {
		info = st.infoLocked(s)
		return nil
	})
	return info, err
}

// End ends the session id of caller; see [SessionStore].
func (st *MemoryStore) End(_ context.Context, id string, caller *principal.Principal) error {
	s, err := st.lookup(id, caller)
	if err != nil {
		return err
	}
	s.mu.Lock()
	expired := st.expiredLocked(s, st.now())
	s.mu.Unlock()
	st.mu.Lock()
	st.removeLocked(s)
	st.mu.Unlock()
	if expired {
		return ErrNotFound
	}
	return nil
}

// Subscribe adds uri to the session id of caller; see [SubscriptionStore].
func (st *MemoryStore) Subscribe(_ context.Context, id string, caller *principal.Principal, uri string) error {
	return st.use(id, caller, func(s *memSession) error {
		if _, held := s.subs[uri]; held {
			return nil
		}
		if len(s.subs) >= st.lim.MaxSubscriptions {
			return ErrTooManySubscriptions
		}
		if s.subs == nil {
			s.subs = map[string]struct{}{}
		}
		s.subs[uri] = struct{}{}
		return nil
	})
}

// Unsubscribe removes uri from the session id of caller; see
// [SubscriptionStore].
func (st *MemoryStore) Unsubscribe(_ context.Context, id string, caller *principal.Principal, uri string) error {
	return st.use(id, caller, func(s *memSession) error {
		delete(s.subs, uri)
		return nil
	})
}

// Subscribed reports whether the session id holds uri; see
// [SubscriptionStore].
func (st *MemoryStore) Subscribed(_ context.Context, id, uri string) (bool, error) {
	st.mu.Lock()
	s := st.byID[id]
	st.mu.Unlock()
	if s == nil {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, held := s.subs[uri]
	return held && !s.ended, nil
}

// Subscriptions returns the URIs of the session id; see
// [SubscriptionLister].
func (st *MemoryStore) Subscriptions(_ context.Context, id string) ([]string, error) {
	st.mu.Lock()
	s := st.byID[id]
	st.mu.Unlock()
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, nil
	}
	out := make([]string, 0, len(s.subs))
	for uri := range s.subs {
		out = append(out, uri)
	}
	return out, nil
}

// Len returns the number of sessions the store holds, live or not yet
// dropped.
func (st *MemoryStore) Len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

// lookup returns the session id bound to caller, live or not.
func (st *MemoryStore) lookup(id string, caller *principal.Principal) (*memSession, error) {
	if caller == nil {
		return nil, ErrNotFound
	}
	st.mu.Lock()
	s := st.byID[id]
	st.mu.Unlock()
	if s == nil || s.key != caller.SessionKey() {
		return nil, ErrNotFound
	}
	return s, nil
}

// use runs fn on the live session id of caller (its lock held), after
// recording the use.
func (st *MemoryStore) use(id string, caller *principal.Principal, fn func(*memSession) error) error {
	s, err := st.lookup(id, caller)
	if err != nil {
		return err
	}
	now := st.now()
	s.mu.Lock()
	if st.expiredLocked(s, now) {
		s.mu.Unlock()
		return ErrNotFound
	}
	s.lastSeen = now
	if caller.Expires.After(s.expires) {
		s.expires = caller.Expires
	}
	err = fn(s)
	end := st.endOf(s).UnixNano()
	s.mu.Unlock()
	if due := s.due.Load(); end < due || end-due > st.slack {
		// The heap's record is far behind, or ahead (a first credential
		// with an expiry brought the end forward): record the end again,
		// read under both locks so that concurrent uses leave the latest.
		st.mu.Lock()
		if s.hidx >= 0 {
			s.mu.Lock()
			s.due.Store(st.endOf(s).UnixNano())
			s.mu.Unlock()
			heap.Fix(&st.ends, s.hidx)
		}
		st.mu.Unlock()
	}
	return err
}

// expiredLocked reports whether s has ended (s.mu held).
func (st *MemoryStore) expiredLocked(s *memSession, now time.Time) bool {
	return s.ended ||
		now.Sub(s.created) >= st.lim.Lifetime ||
		!s.expires.IsZero() && !now.Before(s.expires) ||
		now.Sub(s.lastSeen) > st.lim.IdleTimeout
}

// endOf returns when s ends unless it is used again (s.mu held): the
// first instant expiredLocked reports it expired.
func (st *MemoryStore) endOf(s *memSession) time.Time {
	end := s.created.Add(st.lim.Lifetime)
	if !s.expires.IsZero() && s.expires.Before(end) {
		end = s.expires
	}
	if idle := s.lastSeen.Add(st.lim.IdleTimeout + 1); idle.Before(end) {
		end = idle
	}
	return end
}

// infoLocked describes s (s.mu held).
func (st *MemoryStore) infoLocked(s *memSession) Session {
	d := s.created.Add(st.lim.Lifetime)
	if !s.expires.IsZero() && s.expires.Before(d) {
		d = s.expires
	}
	return Session{Deadline: d, IdleDeadline: s.lastSeen.Add(st.lim.IdleTimeout)}
}

// removeLocked drops s from the indexes and ends it (st.mu held).
func (st *MemoryStore) removeLocked(s *memSession) {
	if st.byID[s.id] == s {
		delete(st.byID, s.id)
		heap.Remove(&st.ends, s.hidx)
		own := st.byKey[s.key]
		for i, o := range own {
			if o == s {
				own = append(own[:i:i], own[i+1:]...)
				break
			}
		}
		if len(own) == 0 {
			delete(st.byKey, s.key)
		} else {
			st.byKey[s.key] = own
		}
	}
	s.mu.Lock()
	s.ended, s.subs = true, nil
	s.mu.Unlock()
}

// dropBatch is how many expired sessions one call of makeRoomLocked drops
// beyond the one it needs: the expired ones go early, and no request
// drops an unbounded number of them.
const dropBatch = 256

// makeRoomLocked drops expired sessions, the earliest ended first, until
// it has dropped dropBatch or there are no more, and in any case until
// the store holds fewer than MaxSessions if it can, appending their ids
// to ended (st.mu held). It looks only at the sessions whose recorded end
// has passed: one that was used since is put back by its new end, and a
// session found live at the top ends the search, since every other
// session ends later.
func (st *MemoryStore) makeRoomLocked(now time.Time, ended []string) []string {
	at := now.UnixNano()
	for dropped := 0; len(st.ends) > 0 && (dropped < dropBatch || len(st.byID) >= st.lim.MaxSessions); {
		s := st.ends[0]
		if s.due.Load() > at {
			break // no session ends before now
		}
		s.mu.Lock()
		expired := st.expiredLocked(s, now)
		end := st.endOf(s).UnixNano()
		s.mu.Unlock()
		switch {
		case !expired:
			// Live: it ends after now (by the monotonic clock; the wall
			// clock the heap keeps may disagree, so never put it back
			// before now). Next time round, the top is exact or later.
			s.due.Store(max(end, at+1))
		case end != s.due.Load():
			s.due.Store(end) // ended, but maybe after others: exact first
		default:
			ended = append(ended, s.id)
			st.removeLocked(s)
			dropped++
			continue
		}
		heap.Fix(&st.ends, 0)
	}
	return ended
}

// endHeap is a min-heap of sessions by due; each session knows its index.
type endHeap []*memSession

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].due.Load() < h[j].due.Load() }
func (h endHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}

func (h *endHeap) Push(x any) {
	s := x.(*memSession)
	s.hidx = len(*h)
	*h = append(*h, s)
}

func (h *endHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.hidx = -1
	return s
}

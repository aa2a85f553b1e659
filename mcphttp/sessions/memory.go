package sessions

import (
	"context"
	"sync"
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
type MemoryStore struct {
	lim Limits
	now func() time.Time

	mu    sync.Mutex
	byID  map[string]*memSession
	byKey map[string][]*memSession // each principal's sessions, oldest first
}

var (
	_ Store              = (*MemoryStore)(nil)
	_ SubscriptionLister = (*MemoryStore)(nil)
)

type memSession struct {
	id, key string // the session id, and the SessionKey of its principal
	created time.Time

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
	return &MemoryStore{lim: lim, now: time.Now, byID: map[string]*memSession{}, byKey: map[string][]*memSession{}}, nil
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
		ended = st.sweepLocked(now, ended)
		if len(st.byID) >= st.lim.MaxSessions {
			return ended, ErrFull
		}
	}
	if st.byID[id] != nil {
		return ended, ErrFull // an id minted twice: never share a session
	}
	st.byID[id] = s
	st.byKey[s.key] = append(st.byKey[s.key], s)
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
	defer s.mu.Unlock()
	if st.expiredLocked(s, now) {
		return ErrNotFound
	}
	s.lastSeen = now
	if caller.Expires.After(s.expires) {
		s.expires = caller.Expires
	}
	return fn(s)
}

// expiredLocked reports whether s has ended (s.mu held).
func (st *MemoryStore) expiredLocked(s *memSession, now time.Time) bool {
	return s.ended ||
		now.Sub(s.created) >= st.lim.Lifetime ||
		!s.expires.IsZero() && !now.Before(s.expires) ||
		now.Sub(s.lastSeen) > st.lim.IdleTimeout
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

// sweepLocked drops the expired sessions, appending their ids to ended
// (st.mu held).
func (st *MemoryStore) sweepLocked(now time.Time, ended []string) []string {
	for _, s := range st.byID {
		s.mu.Lock()
		expired := st.expiredLocked(s, now)
		s.mu.Unlock()
		if expired {
			ended = append(ended, s.id)
			st.removeLocked(s)
		}
	}
	return ended
}

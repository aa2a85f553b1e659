package mcphttp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Legacy session mode (Options.Notifications set): initialize mints an
// Mcp-Session-Id bound to the principal that created it. Sessions only
// carry what notifications need (resource subscriptions and the GET
// stream); they never authenticate anything: every request is still
// authenticated on its own, and a session is found only with the token of
// the principal that created it.
//
// Nothing here can be exhausted by one caller: anonymous callers never get
// a session, each principal holds at most MaxSessionsPerPrincipal (a new
// one evicts its oldest), a full table serves a signed-in initialize
// without a session rather than refusing it, and every session ends at an
// absolute lifetime and when the token last seen on it expires.

// Defaults of [SessionLimits].
const (
	DefaultSessionIdleTimeout      = 30 * time.Minute
	DefaultSessionLifetime         = 24 * time.Hour
	DefaultMaxSessions             = 10000
	DefaultMaxSessionsPerPrincipal = 8
	DefaultMaxSubscriptions        = 64
	DefaultMaxStreams              = 10000
	DefaultMaxStreamsPerPrincipal  = 8
)

// SessionLimits bound the legacy sessions and the event streams of an
// endpoint with notifications. The zero value means every default.
type SessionLimits struct {
	// IdleTimeout ends a session without requests or an open stream.
	// Zero means DefaultSessionIdleTimeout.
	IdleTimeout time.Duration
	// Lifetime ends every session this long after it began, open stream
	// or not. Zero means DefaultSessionLifetime.
	Lifetime time.Duration
	// MaxSessions bounds the sessions of the endpoint. When they are all
	// live, initialize is answered without a session (the client can
	// still use every method but subscriptions). Zero means
	// DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the sessions of one principal; a new
	// one ends that principal's oldest. Zero means
	// DefaultMaxSessionsPerPrincipal.
	MaxSessionsPerPrincipal int
	// MaxSubscriptions bounds the resources/subscribe URIs of one session.
	// Zero means DefaultMaxSubscriptions.
	MaxSubscriptions int
	// MaxStreams bounds the open event streams (GET streams and
	// subscriptions/listen) of the endpoint: one more gets 503 with
	// Retry-After. Zero means DefaultMaxStreams.
	MaxStreams int
	// MaxStreamsPerPrincipal bounds the open event streams of one
	// principal: one more gets 429 with Retry-After. Zero means
	// DefaultMaxStreamsPerPrincipal.
	MaxStreamsPerPrincipal int
}

func (l SessionLimits) resolve() (SessionLimits, bool) {
	if l.IdleTimeout < 0 || l.Lifetime < 0 || l.MaxSessions < 0 || l.MaxSessionsPerPrincipal < 0 ||
		l.MaxSubscriptions < 0 || l.MaxStreams < 0 || l.MaxStreamsPerPrincipal < 0 {
		return l, false
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultSessionIdleTimeout
	}
	if l.Lifetime == 0 {
		l.Lifetime = DefaultSessionLifetime
	}
	def(&l.MaxSessions, DefaultMaxSessions)
	def(&l.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal)
	def(&l.MaxSubscriptions, DefaultMaxSubscriptions)
	def(&l.MaxStreams, DefaultMaxStreams)
	def(&l.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal)
	return l, true
}

type session struct {
	id      string
	owner   string // ownerKey of the principal that created it
	created time.Time

	mu       sync.Mutex
	lastSeen time.Time
	expires  time.Time       // the latest token expiry seen on the session; zero: unknown
	subs     map[string]bool // subscribed resource URIs
	stream   chan struct{}   // closed to end the current GET stream
	streams  int             // open GET streams (0 or 1, briefly 2 on a reconnect)
	ended    bool
}

// ownerKey identifies a principal for session binding and stream limits:
// the same subject of another issuer, through another client, or for
// another audience, is someone else. The DPoP key is not part of it: a
// session continues with a refreshed token of the same identity, whatever
// key that token is bound to, and never with another identity.
func ownerKey(p *principal.Principal) string {
	if p == nil {
		return ""
	}
	return p.Audience + "\x00" + p.Issuer + "\x00" + p.ClientID + "\x00" + p.Subject
}

type sessionStore struct {
	lim SessionLimits
	now func() time.Time

	mu      sync.Mutex
	byID    map[string]*session
	byOwner map[string][]*session // oldest first
}

func newSessionStore(lim SessionLimits) *sessionStore {
	return &sessionStore{lim: lim, now: time.Now, byID: map[string]*session{}, byOwner: map[string][]*session{}}
}

// create mints a session for caller, who must not be nil. ok is false when
// the store is full of live sessions of other principals.
func (st *sessionStore) create(caller *principal.Principal) (*session, bool) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand never fails (Go 1.24+)
	now := st.now()
	s := &session{
		id: base64.RawURLEncoding.EncodeToString(raw[:]), owner: ownerKey(caller), created: now,
		lastSeen: now, expires: caller.Expires, subs: map[string]bool{},
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if own := st.byOwner[s.owner]; len(own) >= st.lim.MaxSessionsPerPrincipal {
		st.removeLocked(own[0]) // the principal's oldest
	}
	if len(st.byID) >= st.lim.MaxSessions {
		st.sweepLocked(now)
		if len(st.byID) >= st.lim.MaxSessions {
			return nil, false
		}
	}
	st.byID[s.id] = s
	st.byOwner[s.owner] = append(st.byOwner[s.owner], s)
	return s, true
}

// get returns the live session id of caller, or nil: an unknown, expired
// or ended session, or one created by another principal, is not found. A
// later token expiry of the caller extends the session up to its
// lifetime.
func (st *sessionStore) get(id string, caller *principal.Principal) *session {
	if caller == nil {
		return nil
	}
	st.mu.Lock()
	s := st.byID[id]
	st.mu.Unlock()
	if s == nil || s.owner != ownerKey(caller) {
		return nil
	}
	now := st.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.expiredLocked(s, now) {
		return nil
	}
	s.lastSeen = now
	if caller.Expires.After(s.expires) {
		s.expires = caller.Expires
	}
	return s
}

// expiredLocked reports whether s has ended (s.mu held).
func (st *sessionStore) expiredLocked(s *session, now time.Time) bool {
	return s.ended ||
		now.Sub(s.created) >= st.lim.Lifetime ||
		!s.expires.IsZero() && !now.Before(s.expires) ||
		s.streams == 0 && now.Sub(s.lastSeen) > st.lim.IdleTimeout
}

// remove ends a session and its stream.
func (st *sessionStore) remove(s *session) {
	st.mu.Lock()
	st.removeLocked(s)
	st.mu.Unlock()
}

func (st *sessionStore) removeLocked(s *session) {
	if st.byID[s.id] == s {
		delete(st.byID, s.id)
		own := st.byOwner[s.owner]
		for i, o := range own {
			if o == s {
				own = append(own[:i:i], own[i+1:]...)
				break
			}
		}
		if len(own) == 0 {
			delete(st.byOwner, s.owner)
		} else {
			st.byOwner[s.owner] = own
		}
	}
	s.end()
}

// sweepLocked drops expired sessions.
func (st *sessionStore) sweepLocked(now time.Time) {
	for _, s := range st.byID {
		s.mu.Lock()
		expired := st.expiredLocked(s, now)
		s.mu.Unlock()
		if expired {
			st.removeLocked(s)
		}
	}
}

// len returns the number of sessions held (live or not yet swept).
func (st *sessionStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	if s.stream != nil {
		close(s.stream)
		s.stream = nil
	}
}

// attachStream registers a new GET stream and ends the previous one (a
// reconnecting client), so that no message goes to two streams. It returns
// the channel closed when the stream must end, and a detach function.
func (s *session) attachStream() (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream != nil {
		close(s.stream)
	}
	stop := make(chan struct{})
	if s.ended {
		close(stop)
	} else {
		s.stream = stop
	}
	s.streams++
	return stop, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.streams--
		if s.stream == stop {
			s.stream = nil
		}
		s.lastSeen = time.Now()
	}
}

// deadline is when the session ends at the latest: its lifetime, or the
// expiry of the latest token seen on it.
func (s *session) deadline(lifetime time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.created.Add(lifetime)
	if !s.expires.IsZero() && s.expires.Before(d) {
		d = s.expires
	}
	return d
}

func (s *session) subscribe(uri string, max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.subs[uri] && len(s.subs) >= max {
		return false
	}
	s.subs[uri] = true
	return true
}

func (s *session) unsubscribe(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, uri)
}

func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// streamCounter bounds the open event streams, in all and per principal.
type streamCounter struct {
	max, perOwner int

	mu      sync.Mutex
	total   int
	byOwner map[string]int
	drained chan struct{} // closed when total drops to zero; nil: nobody waits
}

func newStreamCounter(max, perOwner int) *streamCounter {
	return &streamCounter{max: max, perOwner: perOwner, byOwner: map[string]int{}}
}

// acquire counts a new stream of owner, or returns errStreamsCaller or
// errStreamsFull. The caller releases what it acquired.
func (c *streamCounter) acquire(owner string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.byOwner[owner] >= c.perOwner:
		return errStreamsCaller
	case c.total >= c.max:
		return errStreamsFull
	}
	c.total++
	c.byOwner[owner]++
	return nil
}

func (c *streamCounter) release(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byOwner[owner]--; c.byOwner[owner] <= 0 {
		delete(c.byOwner, owner)
	}
	if c.total == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// wait returns nil once no stream is open, or ctx's error.
func (c *streamCounter) wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.total == 0 {
			c.mu.Unlock()
			return nil
		}
		if c.drained == nil {
			c.drained = make(chan struct{})
		}
		drained := c.drained
		c.mu.Unlock()
		select {
		case <-drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// open returns the number of open streams in all and of owner.
func (c *streamCounter) open(owner string) (total, own int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.byOwner[owner]
}

package mcphttp

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/authn"
)

// Legacy session mode (Options.Notifications set): initialize mints an
// Mcp-Session-Id bound to the principal that created it. Sessions only
// carry what notifications need (resource subscriptions and the GET
// stream); they never authenticate anything: every request is still
// authenticated on its own, and a session is found only with the token of
// the principal that created it.

const (
	// DefaultSessionIdleTimeout is how long a session without requests or
	// an open stream lives when Options.SessionIdleTimeout is zero.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the sessions of one endpoint when
	// Options.MaxSessions is zero.
	DefaultMaxSessions = 10000
	// maxSubscriptions bounds the resource subscriptions of one session.
	maxSubscriptions = 1000
)

type session struct {
	id    string
	owner string // ownerKey of the principal that created it

	mu       sync.Mutex
	lastSeen time.Time
	subs     map[string]bool // subscribed resource URIs
	stream   chan struct{}   // closed to end the current GET stream
	streams  int             // open GET streams (0 or 1, briefly 2 on a reconnect)
	ended    bool
}

// ownerKey identifies a principal for session binding: the same subject
// through another client, or for another audience, is someone else.
func ownerKey(p *authn.Principal) string {
	if p == nil {
		return ""
	}
	return p.Audience + "\x00" + p.ClientID + "\x00" + p.Subject
}

type sessionStore struct {
	idle time.Duration
	max  int
	now  func() time.Time

	mu   sync.Mutex
	byID map[string]*session
}

func newSessionStore(idle time.Duration, max int) *sessionStore {
	if idle <= 0 {
		idle = DefaultSessionIdleTimeout
	}
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionStore{idle: idle, max: max, now: time.Now, byID: map[string]*session{}}
}

// create mints a session for caller. ok is false when the store is full of
// live sessions.
func (st *sessionStore) create(caller *authn.Principal) (*session, bool) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand never fails (Go 1.24+)
	s := &session{id: base64.RawURLEncoding.EncodeToString(raw[:]), owner: ownerKey(caller), subs: map[string]bool{}}
	now := st.now()
	s.lastSeen = now
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.byID) >= st.max {
		st.sweepLocked(now)
		if len(st.byID) >= st.max {
			return nil, false
		}
	}
	st.byID[s.id] = s
	return s, true
}

// get returns the live session id of caller, or nil: an unknown, expired
// or ended session, or one created by another principal, is not found.
func (st *sessionStore) get(id string, caller *authn.Principal) *session {
	st.mu.Lock()
	s := st.byID[id]
	st.mu.Unlock()
	if s == nil || s.owner != ownerKey(caller) {
		return nil
	}
	now := st.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || (s.streams == 0 && now.Sub(s.lastSeen) > st.idle) {
		return nil
	}
	s.lastSeen = now
	return s
}

// remove ends a session and its stream.
func (st *sessionStore) remove(s *session) {
	st.mu.Lock()
	delete(st.byID, s.id)
	st.mu.Unlock()
	s.end()
}

// sweepLocked drops expired sessions.
func (st *sessionStore) sweepLocked(now time.Time) {
	for id, s := range st.byID {
		s.mu.Lock()
		expired := s.ended || (s.streams == 0 && now.Sub(s.lastSeen) > st.idle)
		s.mu.Unlock()
		if expired {
			delete(st.byID, id)
			s.end()
		}
	}
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

func (s *session) subscribe(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.subs[uri] && len(s.subs) >= maxSubscriptions {
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

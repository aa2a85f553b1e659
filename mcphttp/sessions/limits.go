package sessions

import (
	"errors"
	"time"
)

// Defaults of [Limits] and [Options].
const (
	DefaultIdleTimeout             = 30 * time.Minute
	DefaultLifetime                = 24 * time.Hour
	DefaultMaxSessions             = 10000
	DefaultMaxSessionsPerPrincipal = 8
	DefaultMaxSubscriptions        = 64
	DefaultMaxStreams              = 10000
	DefaultMaxStreamsPerPrincipal  = 8
	// DefaultKeepAlive is the interval of SSE keep-alive comments when
	// Options.KeepAlive is zero.
	DefaultKeepAlive = 25 * time.Second
)

// Limits bound legacy sessions and event streams. The zero value means
// every default.
//
// IdleTimeout, Lifetime, MaxSessions, MaxSessionsPerPrincipal and
// MaxSubscriptions bound what a [MemoryStore] holds (a store of another
// kind is configured on its own); MaxStreams and MaxStreamsPerPrincipal
// bound the streams open in this process, whatever the store.
type Limits struct {
	// IdleTimeout ends a session without requests (an open stream keeps
	// it alive). Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Lifetime ends every session this long after it began, open stream
	// or not. Zero means DefaultLifetime.
	Lifetime time.Duration
	// MaxSessions bounds the sessions held. When they are all live,
	// initialize is answered without a session (the client can still use
	// every method but subscriptions). Zero means DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the sessions of one principal; a new
	// one ends that principal's oldest. Zero means
	// DefaultMaxSessionsPerPrincipal.
	MaxSessionsPerPrincipal int
	// MaxSubscriptions bounds the resources/subscribe URIs of one session.
	// Zero means DefaultMaxSubscriptions.
	MaxSubscriptions int
	// MaxStreams bounds the open event streams (GET streams and
	// subscriptions/listen) of the process: one more gets 503 with
	// Retry-After. Zero means DefaultMaxStreams.
	MaxStreams int
	// MaxStreamsPerPrincipal bounds the open event streams of one
	// principal in the process: one more gets 429 with Retry-After. Zero
	// means DefaultMaxStreamsPerPrincipal.
	MaxStreamsPerPrincipal int
}

var errNegative = errors.New("sessions: limits and KeepAlive must not be negative")

// resolve returns l with its defaults, or an error for a negative field.
func (l Limits) resolve() (Limits, error) {
	if l.IdleTimeout < 0 || l.Lifetime < 0 || l.MaxSessions < 0 || l.MaxSessionsPerPrincipal < 0 ||
		l.MaxSubscriptions < 0 || l.MaxStreams < 0 || l.MaxStreamsPerPrincipal < 0 {
		return l, errNegative
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.Lifetime == 0 {
		l.Lifetime = DefaultLifetime
	}
	def(&l.MaxSessions, DefaultMaxSessions)
	def(&l.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal)
	def(&l.MaxSubscriptions, DefaultMaxSubscriptions)
	def(&l.MaxStreams, DefaultMaxStreams)
	def(&l.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal)
	return l, nil
}

package sessions

import (
	"context"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// The store: what the instances of a fleet must agree on about legacy
// sessions. An open stream is a connection, and stays with the process
// that holds it; what a request on any instance needs to know — whether a
// session exists, whose it is, until when, and which URIs it subscribed
// to — is in the store. Every method is one operation on the store, so
// that an implementation on a shared engine needs one round trip for each
// (a script, or a pipeline): the part asks once per request.

// Errors of a [Store]. Anything else a store returns is a failure of the
// store itself (an engine that cannot be reached), which the part logs
// and never shows to a client; see [Options.Store] for what it does then.
var (
	// ErrNotFound: the session is unknown, ended, expired, or bound to
	// another principal. Clients cannot tell these apart (404).
	ErrNotFound = errors.New("sessions: session not found")
	// ErrFull: the store holds as many live sessions as it may; the
	// initialize is answered without a session.
	ErrFull = errors.New("sessions: no room for another session")
	// ErrTooManySubscriptions: the session holds as many subscribed URIs
	// as it may.
	ErrTooManySubscriptions = errors.New("sessions: too many subscriptions")
)

// Session is what a [SessionStore] reports of a live session.
type Session struct {
	// Deadline is when the session ends at the latest: its lifetime after
	// it began, or the expiry of the latest credential seen on it,
	// whichever comes first.
	Deadline time.Time
	// IdleDeadline is when it ends unless it is used again: a request
	// naming it, or its open stream's refresh (which the part schedules
	// well before IdleDeadline).
	IdleDeadline time.Time
}

// SessionStore keeps legacy sessions. A session is bound to the principal
// that created it, by [principal.Principal.SessionKey] (issuer, subject,
// client, audience): a lookup with anyone else's credentials finds
// nothing. Sessions never authenticate anything; they only carry what
// notifications need. Implementations must be safe for concurrent use and
// must bound what one principal can hold: the part calls them with
// authenticated callers only (never nil), but with any id a client sends.
type SessionStore interface {
	// Create stores a new session id (the part mints it: 32 random bytes,
	// unpadded base64url) bound to caller, beginning now. Each principal
	// holds a bounded number of sessions: to make room, Create ends that
	// principal's oldest ones. It returns the ids of the sessions it
	// ended (so that their streams end too), and ErrFull, storing nothing,
	// when the store holds as many live sessions as it may.
	Create(ctx context.Context, id string, caller *principal.Principal) (ended []string, err error)
	// Find returns the live session id bound to caller and records the
	// use: the idle timer starts again, and a credential of caller's that
	// expires later than any seen on the session carries it on (never
	// beyond its lifetime). It returns ErrNotFound for a session that is
	// unknown, ended, expired, or bound to another principal.
	Find(ctx context.Context, id string, caller *principal.Principal) (Session, error)
	// End ends the session id bound to caller, with its subscriptions. It
	// returns ErrNotFound as Find does.
	End(ctx context.Context, id string, caller *principal.Principal) error
}

// SubscriptionStore keeps the resources/subscribe URIs of legacy
// sessions. A subscription made through one instance is seen by the
// stream of the session on another: the stream asks Subscribed for each
// update it receives.
type SubscriptionStore interface {
	// Subscribe adds uri to the subscriptions of the session id bound to
	// caller, and records the use as Find does: one operation, so that a
	// subscribe costs one round trip. It returns ErrNotFound as Find does,
	// and ErrTooManySubscriptions when the session holds as many URIs as
	// it may (a URI it holds already is no new one).
	Subscribe(ctx context.Context, id string, caller *principal.Principal, uri string) error
	// Unsubscribe removes uri from the subscriptions of the session id
	// bound to caller (a URI it does not hold is no error), and records
	// the use as Find does. It returns ErrNotFound as Find does.
	Unsubscribe(ctx context.Context, id string, caller *principal.Principal, uri string) error
	// Subscribed reports whether the session id holds uri. The session's
	// stream asks it for every resources/updated event it receives.
	Subscribed(ctx context.Context, id, uri string) (bool, error)
}

// Store is a [SessionStore] and a [SubscriptionStore] on one engine:
// subscriptions live and end with their session, and Subscribe checks the
// session in the same operation.
type Store interface {
	SessionStore
	SubscriptionStore
}

// SubscriptionLister is a [SubscriptionStore] that lists a session's
// URIs. A GET stream that cannot resume where its client left off (see
// the package documentation: Last-Event-ID) asks it once, to send
// notifications/resources/updated for each URI the session subscribed to
// and the caller may still read, and a stream that resumes asks it once
// for the updates it replays. Without it, such a stream only says
// list_changed. [MemoryStore] and redisstore's implement it.
type SubscriptionLister interface {
	// Subscriptions returns the URIs of the live session id, in no
	// particular order; none for a session that is unknown or ended.
	Subscriptions(ctx context.Context, id string) ([]string, error)
}

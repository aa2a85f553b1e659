package notify

import "context"

// EventLog keeps the recent events of each key (a principal's identity
// key, as [Event.Subject]), so that a stream that reconnects can be given
// what it missed: the legacy era's Last-Event-ID. The [Hub] appends every
// event it publishes, on the publishing instance, before it hands the
// event to the broker, so every instance delivers it with the same
// [Event.ID]; a log shared by a fleet (redisstore.EventLog) lets a stream
// resume on any instance. The default is a [MemoryLog] of the process.
//
// A log is bounded: per key a number of events and an age, beyond which
// Since answers ok false and the stream starts over (the client lists
// again). Implementations must be safe for concurrent use.
type EventLog interface {
	// Append records e under key and returns its id: 1–[MaxIDLen] bytes
	// of printable ASCII without space (0x21–0x7E), unique among key's
	// events (another key's may be equal: Since is always asked about one
	// key, and streams tell their principal's ids apart themselves).
	// e.ID is ignored. An error means e was not recorded; the hub
	// logs it and delivers e without an id.
	Append(ctx context.Context, key string, e Event) (id string, err error)
	// Since returns, oldest first, the events of key recorded after the
	// one with the given id, each with its ID set. ok is false when id
	// cannot tell what was missed: it is malformed, unknown to key's
	// events, or older than what the log retains. id comes from a client
	// (scoped to key by the caller): only key's events may come back,
	// whatever it holds.
	Since(ctx context.Context, key, id string) (events []Event, ok bool, err error)
}

// MaxIDLen bounds the ids of an [EventLog].
const MaxIDLen = 64

// ValidID reports whether id has the form of an [EventLog]'s ids.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

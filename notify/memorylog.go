package notify

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of [MemoryLogOptions] (and of redisstore's log).
const (
	DefaultLogEvents = 64
	DefaultLogAge    = 30 * time.Minute
	DefaultLogKeys   = 4096
)

// MemoryLogOptions configures a [MemoryLog]. The zero value is valid.
type MemoryLogOptions struct {
	// Events is how many events of one key the log keeps (the oldest go
	// first). Zero means DefaultLogEvents.
	Events int
	// Age is how long it keeps an event. Zero means DefaultLogAge.
	Age time.Duration
	// Keys bounds the keys it keeps events of: to make room, the key
	// whose last event is the oldest is forgotten. Zero means
	// DefaultLogKeys.
	Keys int
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// MemoryLog is the default [EventLog]: the events of the process, per key
// the last Events of them no older than Age, for at most Keys keys (56
// bytes an event, and its URI). Its ids name the log (a random epoch
// drawn by NewMemoryLog) and the event, so an id of another process, or
// of this one before it restarted, is unknown (Since answers ok false).
// It is safe for concurrent use.
type MemoryLog struct {
	epoch string
	opts  MemoryLogOptions

	mu   sync.Mutex
	seq  uint64
	keys map[string]*list.Element // of *memKey
	lru  list.List                // front: the key appended to last
}

type memKey struct {
	key    string
	events []memEvent // oldest first, seq increasing
}

type memEvent struct {
	seq  uint64
	at   time.Time
	kind Kind
	uri  string
}

var _ EventLog = (*MemoryLog)(nil)

// NewMemoryLog returns an empty log. Negative options are taken as zero.
func NewMemoryLog(opts MemoryLogOptions) *MemoryLog {
	if opts.Events <= 0 {
		opts.Events = DefaultLogEvents
	}
	if opts.Age <= 0 {
		opts.Age = DefaultLogAge
	}
	if opts.Keys <= 0 {
		opts.Keys = DefaultLogKeys
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var raw [8]byte
	_, _ = rand.Read(raw[:]) // crypto/rand never fails (Go 1.24+)
	return &MemoryLog{epoch: base64.RawURLEncoding.EncodeToString(raw[:]), opts: opts, keys: map[string]*list.Element{}}
}

var (
	errNoKey      = errors.New("notify: empty key")
	errLogNotMade = errors.New("notify: a MemoryLog not made by notify.NewMemoryLog (use NewMemoryLog)")
)

// Append records e under key (see [EventLog.Append]); it fails only for
// an empty key, and on a nil or zero MemoryLog (not made by
// NewMemoryLog).
func (l *MemoryLog) Append(_ context.Context, key string, e Event) (string, error) {
	if l == nil || l.opts.Now == nil {
		return "", errLogNotMade
	}
	if key == "" {
		return "", errNoKey
	}
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	el := l.keys[key]
	if el == nil {
		el = l.lru.PushFront(&memKey{key: key})
		l.keys[key] = el
	} else {
		l.lru.MoveToFront(el)
	}
	k := el.Value.(*memKey)
	if len(k.events) == l.opts.Events {
		k.events = append(k.events[:0], k.events[1:]...)
	}
	k.events = append(k.events, memEvent{seq: l.seq, at: now, kind: e.Kind, uri: e.URI})
	l.sweepLocked(now)
	return l.epoch + "-" + strconv.FormatUint(l.seq, 10), nil
}

// sweepLocked forgets the keys beyond the bound and, from the least
// recently appended, those whose events are all too old.
func (l *MemoryLog) sweepLocked(now time.Time) {
	for el := l.lru.Back(); el != nil; el = l.lru.Back() {
		k := el.Value.(*memKey)
		if len(l.keys) <= l.opts.Keys && !l.expired(k.events[len(k.events)-1], now) {
			return
		}
		l.lru.Remove(el)
		delete(l.keys, k.key)
	}
}

func (l *MemoryLog) expired(e memEvent, now time.Time) bool {
	return now.Sub(e.at) >= l.opts.Age
}

// Since returns key's events after id (see [EventLog.Since]): ok only
// when id names an event of key's that the log still holds. It fails only
// on a nil or zero MemoryLog (not made by NewMemoryLog).
func (l *MemoryLog) Since(_ context.Context, key, id string) ([]Event, bool, error) {
	if l == nil || l.opts.Now == nil {
		return nil, false, errLogNotMade
	}
	seq, ok := l.parse(id)
	if !ok {
		return nil, false, nil
	}
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.keys[key]
	if el == nil {
		return nil, false, nil
	}
	k := el.Value.(*memKey)
	evs := k.events
	i := sort.Search(len(evs), func(i int) bool { return evs[i].seq >= seq })
	if i == len(evs) || evs[i].seq != seq || l.expired(evs[i], now) {
		return nil, false, nil // not key's, dropped, or too old
	}
	var out []Event
	for _, e := range evs[i+1:] {
		if l.expired(e, now) {
			continue // older events that a clock step back made look younger
		}
		out = append(out, Event{Subject: key, Kind: e.kind, URI: e.uri, ID: l.epoch + "-" + strconv.FormatUint(e.seq, 10)})
	}
	return out, true, nil
}

// parse returns the sequence number of an id of this log's.
func (l *MemoryLog) parse(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, l.epoch+"-")
	if !ok || rest == "" || rest[0] == '0' || len(rest) > 20 {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest, 10, 64)
	return seq, err == nil
}

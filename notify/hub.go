package notify

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
)

// Kind is the type of an event.
type Kind uint8

const (
	// ListChanged: the set of resources the subject may list changed
	// (notifications/resources/list_changed).
	ListChanged Kind = iota + 1
	// ResourceUpdated: the resource URI changed
	// (notifications/resources/updated, for streams subscribed to URI).
	ResourceUpdated
	// ElicitationComplete: the URL-mode elicitation whose id is URI was
	// completed (notifications/elicitation/complete, on the subject's
	// legacy sessions' streams).
	ElicitationComplete
	// Missed: events of Subject (of every subject, when Subject is empty)
	// may have been lost on their way to this instance: a [Broker]'s
	// listener lost its connection and the log cannot tell what was
	// published meanwhile. Only a Broker's listener delivers it, to its
	// own hub (it never crosses the wire, and Publish drops it). A stream
	// that can resume ends so that its client resumes and the log tells
	// it what it missed (the legacy GET streams: with an SSE retry field
	// and Last-Event-ID); one that cannot is told that everything it
	// follows may have changed (the subscriptions/listen streams).
	Missed
)

// Event is one change, addressed to one principal.
type Event struct {
	// Subject is the principal whose streams receive the event: its
	// identity key, principal.Principal.Key (the bare subject with one trusted
	// issuer, principal.SubjectKey(issuer, subject) with several), which is
	// what the transport subscribes its streams with.
	Subject string
	Kind    Kind
	// URI is the resource of a ResourceUpdated event, the elicitation id
	// of an ElicitationComplete one.
	URI string
	// ID is the event's id in the hub's [EventLog], set by the hub that
	// published it (brokers carry it to the other instances); empty when
	// the log could not record the event. Streams that resume with
	// Last-Event-ID are given what they missed by it.
	ID string
}

// valid reports whether e can be delivered.
func (e Event) valid() bool {
	switch e.Kind {
	case ListChanged:
		return e.Subject != ""
	case ResourceUpdated:
		return e.Subject != "" && e.URI != "" && e.URI != markURI
	case ElicitationComplete:
		return e.Subject != "" && e.URI != "" && len(e.URI) <= maxElicitationID
	}
	return false
}

// maxElicitationID bounds the id of an ElicitationComplete event.
const maxElicitationID = 256

// validMissed reports whether e is a Missed a broker may deliver: of one
// subject, or of all (an empty Subject), never with a URI.
func (e Event) validMissed() bool { return e.Kind == Missed && e.URI == "" }

// markURI is the URI of the log entries [Hub.Mark] records: no
// resource's (a URI holds no angle brackets or spaces), never delivered,
// and left out of what Since returns.
const markURI = "<stream start>"

// Broker carries events between the instances of a fleet. Implementations
// must be safe for concurrent use.
type Broker interface {
	// Publish sends e to every instance, this one included.
	Publish(ctx context.Context, e Event) error
	// Listen calls deliver for every event published by any instance until
	// ctx is done or the broker fails. It is called once per Hub, from its
	// own goroutine.
	Listen(ctx context.Context, deliver func(Event)) error
}

// DefaultQueueSize is the per-subscription queue length when
// Options.QueueSize is zero.
const DefaultQueueSize = 64

// Options configures a [Hub]. The zero value is valid. An interface
// field holding a nil pointer (a nil *redisstore.Broker as the Broker, a
// nil *MemoryLog as the Log) is a mistake the hub reports: see [Hub.Err].
type Options struct {
	// Broker carries events to the other instances of a fleet. Nil means
	// in-process delivery only.
	Broker Broker
	// QueueSize bounds each subscription's queue. Zero means
	// DefaultQueueSize.
	QueueSize int
	// Logger receives broker and log failures. Nil means slog.Default().
	Logger *slog.Logger
	// Log keeps the recent events of each key, for streams that resume
	// (see [EventLog]); share one between the instances of a fleet
	// (redisstore.EventLog) so that a stream resumes on any of them. Nil
	// means a [MemoryLog] with its defaults, which is the process's own.
	Log EventLog
}

// Hub routes events to the subscriptions of their subject. It is safe for
// concurrent use.
type Hub struct {
	broker Broker
	elog   EventLog
	queue  int
	log    *slog.Logger

	mu     sync.RWMutex
	subs   map[string]map[*Subscription]struct{}
	closed atomic.Bool // written under mu

	// Events to record or send again (see Publish), and the loop that
	// does, which closing stops.
	pmu      sync.Mutex
	pending  []pending
	retrying bool
	closing  chan struct{}
	ctx      context.Context // of the retries: cancelled by Close
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	stop     context.CancelFunc
	listener chan struct{} // closed when the broker listener returned

	err  error // the options' mistake (see Err); nil for a sound hub
	made bool  // made by New
}

// New returns a Hub. With a Broker it starts listening to it; Close stops.
//
// New never fails and never panics. Options it cannot use — a Broker or
// Log that is an interface holding a nil pointer (a nil
// *redisstore.Broker, a nil *MemoryLog) — are logged at ERROR and
// reported by [Hub.Err], which the kit's consumers of a hub
// (sessions.New, an endpoint's sessions part) check, so that such a hub
// is refused when the endpoint is built rather than failing on a
// request. Until then it behaves as if the field were nil: in-process
// delivery, a MemoryLog. Check Err after New where no such consumer
// does.
func New(opts Options) *Hub {
	h := &Hub{broker: opts.Broker, elog: opts.Log, queue: opts.QueueSize, log: opts.Logger, subs: map[string]map[*Subscription]struct{}{},
		made: true, closing: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if h.log == nil {
		h.log = slog.Default()
	}
	if err := nilness.Refuse("notify", "Options.Broker", opts.Broker); err != nil {
		h.err, h.broker = err, nil
	}
	if err := nilness.Refuse("notify", "Options.Log", opts.Log); err != nil {
		h.err, h.elog = errors.Join(h.err, err), nil
	}
	if h.err != nil {
		h.log.Error("notify: the hub's options are unusable; it delivers in this process only", "err", h.err)
	}
	if h.elog == nil {
		h.elog = NewMemoryLog(MemoryLogOptions{})
	}
	if h.queue <= 0 {
		h.queue = DefaultQueueSize
	}
	if h.broker != nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop, h.listener = cancel, make(chan struct{})
		go func() {
			defer close(h.listener)
			if err := h.broker.Listen(ctx, h.deliver); err != nil && !errors.Is(err, context.Canceled) {
				h.log.Error("notify: broker listener stopped", "err", err)
			}
		}()
	}
	return h
}

// errNotMade is the Err of a Hub not made by New.
var errNotMade = errors.New("notify: a Hub not made by notify.New (use notify.New)")

// Err reports why the hub cannot do what its options asked (a Broker or
// Log holding a nil pointer: see [New]), or that it was not made by New
// (a nil or zero Hub); nil for a hub that works as configured.
func (h *Hub) Err() error {
	if h == nil || !h.made {
		return errNotMade
	}
	return h.err
}

// usable reports whether h was made by New: the methods of a nil or zero
// Hub (misuse, reported by Err) do nothing, and its subscriptions have
// ended, rather than panic.
func (h *Hub) usable() bool { return h != nil && h.made }

// Close ends every subscription and stops listening to the broker.
func (h *Hub) Close() {
	if !h.usable() {
		return
	}
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		return
	}
	h.pmu.Lock()
	h.closed.Store(true)
	h.pmu.Unlock()
	close(h.closing)
	h.cancel()
	all := h.subs
	h.subs = nil
	h.mu.Unlock()
	for _, set := range all {
		for s := range set {
			s.end(false)
		}
	}
	if h.stop != nil {
		h.stop()
		<-h.listener
	}
	h.wg.Wait()
}

// ListChanged tells subject's streams that their resource list changed.
func (h *Hub) ListChanged(ctx context.Context, subject string) {
	h.Publish(ctx, Event{Subject: subject, Kind: ListChanged})
}

// ResourceUpdated tells subject's streams subscribed to uri that it changed.
// Call it once per principal who may read the resource.
func (h *Hub) ResourceUpdated(ctx context.Context, subject, uri string) {
	h.Publish(ctx, Event{Subject: subject, Kind: ResourceUpdated, URI: uri})
}

// ElicitationComplete tells subject's streams that the URL-mode
// elicitation id was completed (the user finished on the page it named).
func (h *Hub) ElicitationComplete(ctx context.Context, subject, id string) {
	h.Publish(ctx, Event{Subject: subject, Kind: ElicitationComplete, URI: id})
}

// Publish records e in the hub's [EventLog], which gives it its ID, and
// delivers it to its subject's subscriptions, on every instance when a
// Broker is configured. Events without a subject (or a URI, for
// ResourceUpdated), and Missed, are dropped: nothing is ever broadcast.
//
// Nothing is lost without a sign. When the log cannot record e or the
// broker cannot send it (Redis down, the node holding its key stalled),
// the failure is logged, e is delivered at once to this instance's
// subscriptions (without an id if the log failed), and the hub tries
// again in the background, with backoff, until the log records it and
// the broker sends it: the other instances then deliver it with its id,
// live or from the log when their listener catches up. At most
// 4096 events wait so (identical ones wait as one); an event past
// that, or still waiting when the hub closes, is logged as lost.
func (h *Hub) Publish(ctx context.Context, e Event) {
	if !h.usable() {
		return // a nil or zero Hub (see Err): nowhere to deliver
	}
	if !e.valid() {
		return
	}
	e.ID = ""
	logged := h.record(ctx, &e)
	if h.broker == nil {
		h.deliver(e)
		return
	}
	if err := h.broker.Publish(ctx, e); err != nil {
		h.log.Error("notify: publishing an event failed; it is delivered here and sent again later", "kind", int(e.Kind), "err", err)
		h.deliver(e) // this instance's streams need not wait
		// Recorded again when it is sent, with a newer id: a listener
		// that was cut off meanwhile catches up from the last id it
		// delivered, and would skip an older one arriving late.
		e.ID = ""
		h.later(e, true)
		return
	}
	if !logged {
		h.later(e, false) // delivered, but absent from the log a stream resumes from
	}
}

// record appends e to the log and sets its ID; false when it failed.
func (h *Hub) record(ctx context.Context, e *Event) bool {
	id, err := h.elog.Append(ctx, e.Subject, Event{Subject: e.Subject, Kind: e.Kind, URI: e.URI})
	switch {
	case err != nil:
		h.log.Error("notify: recording an event failed; it goes out without an id and is recorded later", "kind", int(e.Kind), "err", err)
		return false
	case !ValidID(id):
		h.log.Error("notify: the event log returned an invalid id; the event goes out without one", "kind", int(e.Kind))
		return false
	}
	e.ID = id
	return true
}

// maxPending bounds the events a Hub keeps to record or send again
// after its log or broker failed (see [Hub.Publish]).
const maxPending = 4096

// Backoff of the hub's retries of pending events.
const (
	pendingMinWait = 100 * time.Millisecond
	pendingMaxWait = 5 * time.Second
	pendingTimeout = 5 * time.Second // one attempt's
)

// pending is an event waiting to be recorded (ID "") and, if publish,
// sent through the broker.
type pending struct {
	e       Event
	publish bool
}

// later queues e for the retry loop, starting it if need be.
func (h *Hub) later(e Event, publish bool) {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	if h.closed.Load() {
		h.lost(1)
		return
	}
	for i := range h.pending { // identical events wait as one
		if p := &h.pending[i]; p.e.ID == "" && e.ID == "" && p.e.Subject == e.Subject && p.e.Kind == e.Kind && p.e.URI == e.URI {
			p.publish = p.publish || publish
			return
		}
	}
	if len(h.pending) >= maxPending {
		h.lost(1)
		return
	}
	h.pending = append(h.pending, pending{e: e, publish: publish})
	if !h.retrying {
		h.retrying = true
		h.wg.Add(1)
		go h.retry()
	}
}

// lost logs events that are given up: no instance delivers them.
func (h *Hub) lost(n int) {
	h.log.Error("notify: events could not be recorded or sent and are lost", "events", n)
}

// retry records and sends the pending events, oldest first, with backoff
// while the log or the broker fails, until none is left or the hub
// closes.
func (h *Hub) retry() {
	defer h.wg.Done()
	wait := pendingMinWait
	for {
		t := time.NewTimer(wait)
		select {
		case <-h.closing:
			t.Stop()
			h.pmu.Lock()
			n := len(h.pending)
			h.pending, h.retrying = nil, false
			h.pmu.Unlock()
			if n > 0 {
				h.lost(n)
			}
			return
		case <-t.C:
		}
		for {
			h.pmu.Lock()
			if len(h.pending) == 0 {
				h.retrying = false
				h.pmu.Unlock()
				return
			}
			p := h.pending[0]
			h.pmu.Unlock()
			if !h.resend(&p) {
				h.pmu.Lock()
				if len(h.pending) > 0 {
					h.pending[0] = p // recorded, maybe: keep its id
				}
				h.pmu.Unlock()
				break
			}
			wait = pendingMinWait
			h.pmu.Lock()
			h.pending = h.pending[1:]
			h.pmu.Unlock()
		}
		wait = min(wait*2, pendingMaxWait)
	}
}

// resend records p's event if it has no id yet and sends it if it must;
// false when either failed.
func (h *Hub) resend(p *pending) bool {
	ctx, cancel := context.WithTimeout(h.ctx, pendingTimeout)
	defer cancel()
	if p.e.ID == "" {
		id, err := h.elog.Append(ctx, p.e.Subject, Event{Subject: p.e.Subject, Kind: p.e.Kind, URI: p.e.URI})
		if err != nil || !ValidID(id) {
			return false
		}
		p.e.ID = id
	}
	if p.publish && h.broker != nil {
		if err := h.broker.Publish(ctx, p.e); err != nil {
			return false
		}
	}
	h.log.Info("notify: an event that had failed was recorded and sent", "kind", int(p.e.Kind))
	return true
}

// deliver hands e to this instance's subscriptions of e.Subject; a
// Missed, to those of its subject (of every subject, when it has none).
func (h *Hub) deliver(e Event) {
	if e.validMissed() {
		h.deliverMissed(e.Subject)
		return
	}
	if !e.valid() {
		return
	}
	if !ValidID(e.ID) {
		e.ID = "" // a broker's message with an id no log gives: delivered without it
	}
	h.mu.RLock()
	var full []*Subscription
	for s := range h.subs[e.Subject] {
		select {
		case s.ch <- e:
		default:
			full = append(full, s)
		}
	}
	h.mu.RUnlock()
	for _, s := range full {
		s.end(true) // a slow consumer: end it rather than grow memory
	}
}

// deliverMissed hands a Missed to the subscriptions of subject, or of
// every subject when it is "".
func (h *Hub) deliverMissed(subject string) {
	h.mu.RLock()
	var full []*Subscription
	for key, set := range h.subs {
		if subject != "" && key != subject {
			continue
		}
		for s := range set {
			select {
			case s.ch <- Event{Subject: key, Kind: Missed}:
			default:
				full = append(full, s)
			}
		}
	}
	h.mu.RUnlock()
	for _, s := range full {
		s.end(true)
	}
}

// Since returns the events of key published after the one whose ID is id,
// oldest first, from the hub's [EventLog] (see [EventLog.Since]): ok is
// false when id cannot tell what was missed, and then the stream starts
// over. The caller scopes id to key — the principal of the stream — so
// that a forged id yields nothing of anyone else's. Every event returned
// is key's and valid.
func (h *Hub) Since(ctx context.Context, key, id string) ([]Event, bool, error) {
	if !h.usable() {
		return nil, false, errNotMade
	}
	if key == "" || !ValidID(id) {
		return nil, false, nil
	}
	evs, ok, err := h.elog.Since(ctx, key, id)
	if err != nil || !ok {
		return nil, false, err
	}
	out := evs[:0]
	for _, e := range evs {
		e.Subject = key
		if e.valid() && ValidID(e.ID) {
			out = append(out, e)
		}
	}
	return out, true, nil
}

// Mark records in the hub's [EventLog] a point in key's events that is
// no event, and returns its id: a stream that starts gives it to its
// client before anything else (the legacy era's priming event), so that
// Since(key, id) tells what the stream missed however early it was cut.
// Since never returns the mark itself, nor any other mark. A mark takes
// one of key's places in the log (its bound in events). An error means
// nothing was recorded.
func (h *Hub) Mark(ctx context.Context, key string) (string, error) {
	if !h.usable() {
		return "", errNotMade
	}
	if key == "" {
		return "", errNoKey
	}
	id, err := h.elog.Append(ctx, key, Event{Subject: key, Kind: ResourceUpdated, URI: markURI})
	if err != nil {
		return "", err
	}
	if !ValidID(id) {
		return "", errInvalidLogID
	}
	return id, nil
}

var errInvalidLogID = errors.New("notify: the event log returned an invalid id")

// Subscribe opens a subscription to subject's events. The caller must Close
// it. Subscribing to the empty subject (an anonymous caller) yields a
// subscription that never receives anything.
func (h *Hub) Subscribe(subject string) *Subscription {
	if !h.usable() { // a nil or zero Hub (see Err): a subscription that has ended
		s := &Subscription{hub: nil, subject: subject, ch: make(chan Event), done: make(chan struct{})}
		s.once.Do(func() { close(s.done) })
		return s
	}
	s := &Subscription{hub: h, subject: subject, ch: make(chan Event, h.queue), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		s.closeLocked()
		return s
	}
	set := h.subs[subject]
	if set == nil {
		set = map[*Subscription]struct{}{}
		h.subs[subject] = set
	}
	set[s] = struct{}{}
	return s
}

// Subscribers returns the number of open subscriptions of subject on this
// instance.
func (h *Hub) Subscribers(subject string) int {
	if !h.usable() {
		return 0
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs[subject])
}

// Subscription receives one subject's events.
type Subscription struct {
	hub     *Hub
	subject string
	ch      chan Event
	done    chan struct{}
	once    sync.Once
	dropped atomic.Bool
}

// Events returns the events. It is never closed; Done is.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Done is closed when the subscription ends: Close, the Hub's Close, or a
// full queue (see Dropped).
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Dropped reports whether the subscription ended because its consumer fell
// behind and its queue filled up.
func (s *Subscription) Dropped() bool { return s.dropped.Load() }

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() { s.end(false) }

func (s *Subscription) end(dropped bool) {
	s.once.Do(func() {
		if dropped {
			s.dropped.Store(true)
		}
		s.hub.mu.Lock()
		if set := s.hub.subs[s.subject]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(s.hub.subs, s.subject)
			}
		}
		s.hub.mu.Unlock()
		close(s.done)
	})
}

// closeLocked ends a subscription that was never registered.
func (s *Subscription) closeLocked() {
	s.once.Do(func() { close(s.done) })
}

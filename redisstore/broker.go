package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/notify"
)

// Defaults of [BrokerOptions].
const (
	DefaultChannel     = "mcpkit:notify"
	DefaultMinBackoff  = 100 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
	DefaultHealthCheck = 15 * time.Second
)

// BrokerOptions configures a [Broker]. The zero value is valid.
type BrokerOptions struct {
	// Channel is the pub/sub channel shared by the instances of one
	// application: 1–200 printable ASCII characters. Empty means
	// DefaultChannel.
	Channel string
	// Logger receives connection losses and malformed messages (their
	// size, never their content). Nil means slog.Default().
	Logger *slog.Logger
	// MinBackoff is the first wait before subscribing again after a lost
	// connection or a failed attempt; each further failure doubles it, up
	// to MaxBackoff. Zero means DefaultMinBackoff and DefaultMaxBackoff
	// (or MinBackoff, if larger); MaxBackoff must not be below MinBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Log, when set, is the hubs' event log (on the same Redis): a
	// listener that subscribes again after it lost its connection (a
	// restart, a failover, a slot moved) first delivers what the log
	// holds after the last event it delivered of each subject it
	// delivered one of lately, and after the start of each stream that
	// started on this instance (notify.Hub.Mark, which legacy GET and
	// subscriptions/listen streams call as they open: give the
	// instance's Hub this same EventLog as its Log), so that the events
	// published while it was not listening are not lost for them; an
	// event delivered so is not delivered again when its message
	// arrives. A subject whose events the log cannot tell (trimmed or
	// expired meanwhile, Redis restarted empty, the log unreachable) gets
	// a notify.Missed: its legacy streams end with an SSE retry field and
	// resume with Last-Event-ID, its listen streams are told to list and
	// read again. Nil: every stream of the instance gets a notify.Missed
	// each time a listener subscribes again.
	Log *EventLog

	// HealthCheck is how long the listener waits for a message before it
	// pings Redis on its connection; without an answer within as long
	// again, the connection is taken as lost (a network that drops
	// packets closes nothing). Zero means DefaultHealthCheck.
	HealthCheck time.Duration
}

// BrokerStats counts what the listeners of a Broker did.
type BrokerStats struct {
	// Connects counts the subscriptions confirmed by Redis (the first one
	// and every one after a lost connection), each once its catch-up is
	// done.
	Connects uint64
	// Delivered counts the events handed to the hub.
	Delivered uint64
	// Malformed counts the messages ignored because they were not a
	// valid event.
	Malformed uint64
	// CaughtUp counts the events delivered from the log after a
	// listener subscribed again (BrokerOptions.Log).
	CaughtUp uint64
}

// Broker is a [notify.Broker] over Redis pub/sub: the hubs of every
// instance that uses one channel receive every event any of them
// publishes. It is safe for concurrent use.
type Broker struct {
	client   redis.UniversalClient
	channel  string
	log      *slog.Logger
	min, max time.Duration
	health   time.Duration
	gates    gates
	// shards are the channels of a cluster client, one per family of
	// subjects, each on a slot of its own (sharded pub/sub: SPUBLISH,
	// SSUBSCRIBE); nil for any other client: one channel (PUBLISH).
	shards []string
	elog   *EventLog
	seen   seenIDs

	connects, delivered, malformed, caught atomic.Uint64
}

var _ notify.Broker = (*Broker)(nil)

// NewBroker returns a Broker publishing and listening through client. It
// does not connect. Close the hub that uses it before the client.
func NewBroker(client redis.UniversalClient, o BrokerOptions) (*Broker, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if o.Log != nil && o.Log.client == nil {
		return nil, fmt.Errorf("redisstore: BrokerOptions.Log: %w", errLogNotMade)
	}
	if o.Channel == "" {
		o.Channel = DefaultChannel
	}
	if !validChannel(o.Channel) {
		return nil, errors.New("redisstore: BrokerOptions.Channel must be 1–200 printable ASCII characters")
	}
	if o.MinBackoff < 0 || o.MaxBackoff < 0 || o.HealthCheck < 0 {
		return nil, errors.New("redisstore: negative BrokerOptions duration")
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.MaxBackoff < o.MinBackoff {
		return nil, errors.New("redisstore: BrokerOptions.MaxBackoff below MinBackoff")
	}
	if o.HealthCheck == 0 {
		o.HealthCheck = DefaultHealthCheck
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	b := &Broker{client: client, channel: o.Channel, log: o.Logger, min: o.MinBackoff, max: o.MaxBackoff, health: o.HealthCheck, elog: o.Log}
	if o.Log != nil {
		o.Log.onStart(b.seen.started(o.Log))
	}
	if _, ok := client.(*redis.ClusterClient); ok {
		if strings.ContainsRune(o.Channel, '{') {
			b.shards = []string{o.Channel} // the channel's own hash tag: one shard
		} else {
			for _, t := range familyTags(brokerShards) {
				b.shards = append(b.shards, o.Channel+t)
			}
		}
	}
	return b, nil
}

// brokerShards is the number of channels of a Broker on a cluster client.
const brokerShards = 8

// validChannel reports whether name is 1–200 printable ASCII characters
// (no space): a name an operator can read and type in redis-cli.
func validChannel(name string) bool {
	if name == "" || len(name) > 200 || !utf8.ValidString(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] > '~' {
			return false
		}
	}
	return true
}

// Channel returns the channel the Broker publishes and listens on.
func (b *Broker) Channel() string { return b.channel }

// Stats returns the counters of the Broker's listeners.
func (b *Broker) Stats() BrokerStats {
	return BrokerStats{Connects: b.connects.Load(), Delivered: b.delivered.Load(), Malformed: b.malformed.Load(), CaughtUp: b.caught.Load()}
}

// Publish sends e to every listening instance, this one included (one
// PUBLISH). It fails with ErrInvalidEvent or ErrPayloadTooLarge before
// touching Redis, with ErrUnavailable for a while after Redis could not be
// reached, and with the client's error when the message was not sent.
func (b *Broker) Publish(ctx context.Context, e notify.Event) error {
	if b == nil || b.client == nil {
		return errBrokerNotMade
	}
	var buf [256]byte
	payload, err := appendPayload(buf[:0], e)
	if err != nil {
		return err
	}
	verb, ch := "PUBLISH", b.channel
	if b.shards != nil {
		verb, ch = "SPUBLISH", b.shards[family(e.Subject, len(b.shards))]
	}
	g := b.gates.For(ctx, b.client, ch)
	if !g.allow() {
		return ErrUnavailable
	}
	err = do(ctx, b.client, verb, ch, payload).Err()
	g.done(ctx, err)
	if err != nil {
		return fmt.Errorf("redisstore: publish: %w", err)
	}
	return nil
}

// Listen delivers every valid event received on the channel until ctx
// ends, then returns ctx's error: it never returns before (the hub listens
// once, and a listener that returned would leave the instance deaf). It
// holds one subscribed connection and replaces it, with capped exponential
// backoff and jitter, whenever it is lost; messages published meanwhile
// are lost for this instance (pub/sub keeps nothing).
//
// On a cluster client it listens on each shard's channel, each with its
// own connection to the master of the channel's slot. A nil Broker, or
// one not made by NewBroker, returns an error at once.
func (b *Broker) Listen(ctx context.Context, deliver func(notify.Event)) error {
	if b == nil || b.client == nil {
		return errBrokerNotMade
	}
	if b.shards == nil {
		return b.listen(ctx, b.channel, false, deliver)
	}
	var mu sync.Mutex // the hub is given one event at a time
	one := func(e notify.Event) {
		mu.Lock()
		defer mu.Unlock()
		deliver(e)
	}
	var wg sync.WaitGroup
	for _, ch := range b.shards {
		wg.Go(func() { _ = b.listen(ctx, ch, true, one) })
	}
	wg.Wait()
	return ctx.Err()
}

func (b *Broker) listen(ctx context.Context, channel string, sharded bool, deliver func(notify.Event)) error {
	wait := b.min
	again := false
	for {
		listened, err := b.listenOnce(ctx, channel, sharded, again, deliver)
		again = again || listened
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			wait = b.min // it worked for a while: start over
		}
		d := wait/2 + rand.N(wait/2+1) // in [wait/2, wait]: a fleet does not reconnect in step
		b.log.Warn("redisstore: broker connection lost; notifications from other instances are missed until it is back",
			"channel", channel, "retry_in", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, b.max)
	}
}

// errShardMoved: Redis ended a sharded subscription.
var errShardMoved = errors.New("redisstore: broker: the channel's shard moved")

// errNoPong: the connection did not answer a ping within HealthCheck.
var errNoPong = errors.New("redisstore: broker: no answer to a ping")

// probeWait is how long a listener that subscribed again to a sharded
// channel waits for its probe to come back before it sends another, and
// probeTries how many it sends before it subscribes again.
const (
	probeWait  = 250 * time.Millisecond
	probeTries = 8
)

// errNoEcho: a sharded subscription did not receive its own probes.
var errNoEcho = errors.New("redisstore: broker: the subscription receives nothing published on the channel's master")

// probeChannel returns the channel of a listener's probes: in channel's
// slot, so that it lives on the same node, and its own.
func probeChannel(channel string) string {
	p := channel + ":probe:" + strconv.FormatUint(rand.Uint64(), 36)
	if slot(p) != slot(channel) {
		// No hash tag in channel: a name of the same slot is not at
		// hand; the probe goes on the channel itself (listeners ignore
		// probes, see received).
		return channel
	}
	return p
}

// probeScript publishes a probe (ARGV: the channel, the payload; KEYS:
// the channel, for routing). A script that may write, so that only the
// slot's master runs it: a replica answers MOVED, which the client
// follows. A plain SPUBLISH is served by a replica of the slot too, and
// there the probe would come back at once, from a node that may not yet
// receive what the master publishes.
var probeScript = newScript(`#!lua
return redis.call('SPUBLISH', ARGV[1], ARGV[2])
`)

// probePayload is a probe message's: not an event (listeners skip it
// without counting it malformed), with a token of its listener.
func probePayload(token string) string { return `{"probe":"` + token + `"}` }

// listenOnce runs one subscription: subscribe, deliver until an error.
// listened reports whether Redis confirmed the subscription.
//
// A sharded subscription made again (again) may land on a node that
// does not yet receive what the slot's master publishes: after a manual
// failover the client's slot map still names the old master, now a
// replica whose link to the new one is not up. Before the catch-up, the
// listener publishes a probe on the slot's master (probeScript) on a
// channel of the same slot and waits for it to come
// back on its own subscription: from then on it receives every event,
// so the catch-up misses none. Without its probe back (probeTries) it
// subscribes again with a fresh slot map. It catches up a second time
// recheckAfter later: an event sent during the move to a node that did
// not pass it on is in the log by then.
func (b *Broker) listenOnce(ctx context.Context, channel string, sharded, again bool, deliver func(notify.Event)) (listened bool, err error) {
	var ps *redis.PubSub
	if sharded {
		ps = b.client.SSubscribe(ctx)
	} else {
		ps = b.client.Subscribe(ctx)
	}
	// A read blocks until a message or the health check's deadline: close
	// the connection when ctx ends, so that Listen returns at once.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer func() {
		if stop() {
			_ = ps.Close()
		}
	}()
	subscribe, kind := ps.Subscribe, "subscribe"
	if sharded {
		subscribe, kind = ps.SSubscribe, "ssubscribe"
	}
	channels := []string{channel}
	probe, token, probes := "", "", 0 // probe: the probe's channel while one is awaited
	if sharded && again {
		probe, token = probeChannel(channel), strconv.FormatUint(rand.Uint64(), 36)
		if probe != channel {
			channels = append(channels, probe)
		}
	}
	if err := subscribe(ctx, channels...); err != nil {
		return false, err
	}
	confirmed := false
	sendProbe := func() error {
		probes++
		if probes > probeTries {
			if cc, ok := b.client.(*redis.ClusterClient); ok {
				cc.ReloadState(ctx)
			}
			return errNoEcho
		}
		return probeScript.run(ctx, b.client, []string{probe}, probe, probePayload(token)).Err()
	}
	var recheck time.Time // when to catch up a second time (zero: no)
	// Messages that arrive before the probe wait for the catch-up (which
	// starts from the last event delivered before the cut): delivered
	// first, they would make it skip what was published before them.
	var held []*redis.Message
	// live: the subscription receives what the master publishes.
	live := func() {
		listened = true
		if again {
			b.catchUp(ctx, channel, deliver)
			recheck = time.Now().Add(recheckAfter)
		}
		// Counted once caught up: what is published after the count is
		// seen is delivered live.
		b.connects.Add(1)
		if again { // this channel's own first subscription is no "again" (a cluster listens on several)
			b.log.Info("redisstore: broker listening again", "channel", channel)
		}
		for _, m := range held {
			b.received(m, channel, deliver)
		}
		held = nil
	}
	pinged := false
	for {
		wait := b.health
		if probe != "" && confirmed {
			wait = probeWait
		}
		if !recheck.IsZero() {
			if d := time.Until(recheck); d <= 0 {
				// A second catch-up, once the shard's nodes have
				// settled: what was sent during the move to a node that
				// did not pass it on is in the log.
				recheck = time.Time{}
				b.catchUp(ctx, channel, deliver)
				continue
			} else if d < wait {
				wait = d
			}
		}
		msg, err := ps.ReceiveTimeout(ctx, wait)
		if err != nil {
			if !recheck.IsZero() && time.Until(recheck) <= 0 {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return listened, err
			}
			if probe != "" && confirmed {
				if err := sendProbe(); err != nil {
					return listened, err
				}
				continue
			}
			if pinged {
				return listened, errNoPong
			}
			if err := ps.Ping(ctx); err != nil {
				return listened, err
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			switch {
			case m.Kind == kind && m.Channel == channel && !confirmed:
				confirmed = true
				if probe == "" {
					live()
				} else if err := sendProbe(); err != nil {
					return listened, err
				}
			case m.Kind == "sunsubscribe" && (m.Channel == channel || m.Channel == probe):
				// The channel's slot moved (a failover, a resharding):
				// subscribe again where it lives now.
				if cc, ok := b.client.(*redis.ClusterClient); ok {
					cc.ReloadState(ctx)
				}
				return listened, errShardMoved
			}
		case *redis.Message:
			if probe != "" && m.Channel == probe && m.Payload == probePayload(token) {
				probe = "" // back: the subscription is live
				live()
				continue
			}
			if probe != "" && len(held) < maxHeld {
				held = append(held, m)
				continue
			}
			b.received(m, channel, deliver)
		}
	}
}

// recheckAfter is when a listener that subscribed again catches up a
// second time (see listenOnce).
const recheckAfter = 3 * time.Second

// maxHeld bounds the messages a listener holds while it waits for its
// probe.
const maxHeld = 1 << 14

// received delivers the event of a message on channel, unless it is of
// another channel, malformed, or delivered already by a catch-up.
func (b *Broker) received(m *redis.Message, channel string, deliver func(notify.Event)) {
	if m.Channel != channel || strings.HasPrefix(m.Payload, `{"probe":`) {
		return // another channel's (a probe's), or another listener's probe
	}
	e, ok := decodePayload([]byte(m.Payload))
	if !ok {
		b.malformed.Add(1)
		b.log.Warn("redisstore: broker ignored a malformed message", "channel", channel, "bytes", len(m.Payload))
		return
	}
	if !b.seen.live(e, b.elog) {
		return // delivered already, by a catch-up
	}
	b.delivered.Add(1)
	deliver(e)
}

// channelOf returns the channel of subject's events.
func (b *Broker) channelOf(subject string) string {
	if b.shards == nil {
		return b.channel
	}
	return b.shards[family(subject, len(b.shards))]
}

// catchUp delivers, for each subject of channel that the listener
// delivered an event of lately (or that had a stream start here), what
// the log holds after it; a subject whose events the log cannot tell
// (trimmed, expired, Redis restarted empty, the log unreachable) gets a
// notify.Missed, which ends or restarts its streams. Without a log every
// stream of the instance gets one: what was published meanwhile is not
// known.
func (b *Broker) catchUp(ctx context.Context, channel string, deliver func(notify.Event)) {
	if b.elog == nil {
		b.caught.Add(1)
		deliver(notify.Event{Kind: notify.Missed})
		return
	}
	failed := false
	for subject, id := range b.seen.of(func(s string) bool { return b.channelOf(s) == channel }) {
		var evs []notify.Event
		ok, err := false, error(nil)
		if !failed {
			evs, ok, err = b.elog.Since(ctx, subject, id)
		}
		if err != nil && !failed {
			failed = true
			b.log.Warn("redisstore: broker could not read the events missed; the streams of the channel's subjects end so that their clients resume",
				"channel", channel)
		}
		if !ok { // the log cannot tell what was missed
			b.caught.Add(1)
			deliver(notify.Event{Subject: subject, Kind: notify.Missed})
			continue
		}
		for _, e := range evs {
			if e.URI == streamStartURI { // another stream's start: no event
				continue
			}
			if b.seen.caughtUp(e, b.elog) {
				b.caught.Add(1)
				deliver(e)
			}
		}
	}
}

// seenIDs is, for each subject, where a listener catches up from — an
// id it delivered at least recentWindow ago (or maxRecent deliveries
// ago) — and the ids it delivered since, which the catch-up skips:
// messages may arrive out of their ids' order (several publishers, a
// publisher's slot map that lags during a failover), so the latest id
// delivered is no safe place to start. Also the ids a catch-up
// delivered, so that their messages, arriving after, are not delivered
// again. At most maxSeen subjects (when full, those past the log's Age
// go, then, if need be, all) and maxSeen caught ids (then forgotten).
type seenIDs struct {
	mu     sync.Mutex
	m      map[string]*track
	caught map[string]struct{} // subject + " " + id
}

// track is one subject's place: floor, the latest id that left recent,
// and recent, the ids delivered lately (oldest first) with when.
type track struct {
	floor  string
	recent []recentID
}

type recentID struct {
	id string
	at int64 // unix ms
}

const (
	maxSeen      = 1 << 16
	maxRecent    = 64
	recentWindow = 10 * time.Second
)

// live records the id of e, received as a message, and reports whether
// to deliver it: not when a catch-up delivered it. Without a log nothing
// is recorded.
func (s *seenIDs) live(e notify.Event, elog *EventLog) bool {
	if elog == nil || e.ID == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := e.Subject + " " + e.ID
	if _, ok := s.caught[k]; ok {
		delete(s.caught, k)
		return false
	}
	s.record(e, elog)
	return true
}

// caughtUp records e, read from the log, and reports whether to deliver
// it: not when its message was delivered lately.
func (s *seenIDs) caughtUp(e notify.Event, elog *EventLog) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.m[e.Subject]; t != nil && (e.ID == t.floor || t.delivered(e.ID)) {
		return false
	}
	if s.caught == nil || len(s.caught) >= maxSeen {
		s.caught = make(map[string]struct{})
	}
	s.caught[e.Subject+" "+e.ID] = struct{}{}
	s.record(e, elog)
	return true
}

// delivered reports whether id is among t's recent ids.
func (t *track) delivered(id string) bool {
	for _, r := range t.recent {
		if r.id == id {
			return true
		}
	}
	return false
}

// started returns the hook that records the start of a stream on this
// instance (notify.Hub.Mark, appended through elog) as if delivered: a
// listener cut off later catches that subject up from there, though it
// delivered none of its events yet.
func (s *seenIDs) started(elog *EventLog) func(key, id string) {
	return func(key, id string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.record(notify.Event{Subject: key, ID: id}, elog)
	}
}

// record adds e's id to its subject's recent ids, moving those past
// recentWindow, or beyond maxRecent, to the floor.
func (s *seenIDs) record(e notify.Event, elog *EventLog) {
	t := s.m[e.Subject]
	if t == nil {
		if s.m == nil || len(s.m) >= maxSeen {
			s.prune(elog.age)
		}
		t = &track{}
		s.m[e.Subject] = t
	}
	if t.delivered(e.ID) {
		return
	}
	now := time.Now().UnixMilli()
	t.recent = append(t.recent, recentID{id: e.ID, at: now})
	cut := now - recentWindow.Milliseconds()
	n := 0
	for n < len(t.recent) && (len(t.recent)-n > maxRecent || t.recent[n].at < cut) {
		t.floor = t.recent[n].id
		n++
	}
	if n > 0 {
		t.recent = append(t.recent[:0], t.recent[n:]...)
	}
}

// from returns where t's catch-up starts: the oldest of its floor and
// recent ids.
func (t *track) from() string {
	id := t.floor
	for _, r := range t.recent {
		if id == "" || streamIDAfter(id, r.id) {
			id = r.id
		}
	}
	return id
}

// latest returns t's newest id.
func (t *track) latest() string {
	id := t.floor
	for _, r := range t.recent {
		if id == "" || streamIDAfter(r.id, id) {
			id = r.id
		}
	}
	return id
}

// prune drops the subjects whose last event is older than age (all of
// them if that leaves the map full).
func (s *seenIDs) prune(age time.Duration) {
	if s.m == nil {
		s.m = make(map[string]*track)
		return
	}
	cut := time.Now().Add(-age).UnixMilli()
	for k, t := range s.m {
		if ms, _, _ := strings.Cut(t.latest(), "-"); parseUint(ms) < uint64(max(cut, 0)) {
			delete(s.m, k)
		}
	}
	if len(s.m) >= maxSeen {
		clear(s.m)
	}
}

// of returns where to catch up each subject that keep says to.
func (s *seenIDs) of(keep func(string) bool) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, t := range s.m {
		if keep(k) {
			out[k] = t.from()
		}
	}
	return out
}

// streamIDAfter reports whether stream id a comes after b (both "ms-seq").
func streamIDAfter(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	if x, y := parseUint(am), parseUint(bm); x != y {
		return x > y
	}
	return parseUint(as) > parseUint(bs)
}

func parseUint(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
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
	// HealthCheck is how long the listener waits for a message before it
	// pings Redis on its connection; without an answer within as long
	// again, the connection is taken as lost (a network that drops
	// packets closes nothing). Zero means DefaultHealthCheck.
	HealthCheck time.Duration
}

// BrokerStats counts what the listeners of a Broker did.
type BrokerStats struct {
	// Connects counts the subscriptions confirmed by Redis (the first one
	// and every one after a lost connection).
	Connects uint64
	// Delivered counts the events handed to the hub.
	Delivered uint64
	// Malformed counts the messages ignored because they were not a
	// valid event.
	Malformed uint64
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
	gate     gate

	connects, delivered, malformed atomic.Uint64
}

var _ notify.Broker = (*Broker)(nil)

// NewBroker returns a Broker publishing and listening through client. It
// does not connect. Close the hub that uses it before the client.
func NewBroker(client redis.UniversalClient, o BrokerOptions) (*Broker, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil client")
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
	return &Broker{client: client, channel: o.Channel, log: o.Logger, min: o.MinBackoff, max: o.MaxBackoff, health: o.HealthCheck}, nil
}

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
	return BrokerStats{Connects: b.connects.Load(), Delivered: b.delivered.Load(), Malformed: b.malformed.Load()}
}

// Publish sends e to every listening instance, this one included (one
// PUBLISH). It fails with ErrInvalidEvent or ErrPayloadTooLarge before
// touching Redis, with ErrUnavailable for a while after Redis could not be
// reached, and with the client's error when the message was not sent.
func (b *Broker) Publish(ctx context.Context, e notify.Event) error {
	var buf [256]byte
	payload, err := appendPayload(buf[:0], e)
	if err != nil {
		return err
	}
	if !b.gate.allow() {
		return ErrUnavailable
	}
	err = b.client.Publish(ctx, b.channel, payload).Err()
	b.gate.done(ctx, err)
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
func (b *Broker) Listen(ctx context.Context, deliver func(notify.Event)) error {
	wait := b.min
	for {
		listened, err := b.listenOnce(ctx, deliver)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			wait = b.min // it worked for a while: start over
		}
		d := wait/2 + rand.N(wait/2+1) // in [wait/2, wait]: a fleet does not reconnect in step
		b.log.Warn("redisstore: broker connection lost; notifications from other instances are missed until it is back",
			"channel", b.channel, "retry_in", d, "err", err)
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

// errNoPong: the connection did not answer a ping within HealthCheck.
var errNoPong = errors.New("redisstore: broker: no answer to a ping")

// listenOnce runs one subscription: subscribe, deliver until an error.
// listened reports whether Redis confirmed the subscription.
func (b *Broker) listenOnce(ctx context.Context, deliver func(notify.Event)) (listened bool, err error) {
	ps := b.client.Subscribe(ctx)
	// A read blocks until a message or the health check's deadline: close
	// the connection when ctx ends, so that Listen returns at once.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer func() {
		if stop() {
			_ = ps.Close()
		}
	}()
	if err := ps.Subscribe(ctx, b.channel); err != nil {
		return false, err
	}
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, b.health)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return listened, err
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
			if m.Kind == "subscribe" && m.Channel == b.channel && !listened {
				listened = true
				if b.connects.Add(1) > 1 {
					b.log.Info("redisstore: broker listening again", "channel", b.channel)
				}
			}
		case *redis.Message:
			if m.Channel != b.channel {
				continue
			}
			e, ok := decodePayload([]byte(m.Payload))
			if !ok {
				b.malformed.Add(1)
				b.log.Warn("redisstore: broker ignored a malformed message", "channel", b.channel, "bytes", len(m.Payload))
				continue
			}
			b.delivered.Add(1)
			deliver(e)
		}
	}
}

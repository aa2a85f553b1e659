package pgnotify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpkit/mcpkit/notify"
)

// DefaultChannel is the channel when Options.Channel is empty.
const DefaultChannel = "mcpkit_notify"

// Defaults of the reconnection backoff.
const (
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// closeTimeout bounds the goodbye on a listener connection.
const closeTimeout = 5 * time.Second

// Options configures a Broker. The zero value is valid.
type Options struct {
	// Channel is the LISTEN/NOTIFY channel shared by the instances of one
	// application: 1–63 characters of [a-z0-9_], not starting with a
	// digit (see ValidChannel). Empty means DefaultChannel.
	Channel string
	// Logger receives connection losses and malformed notifications
	// (their size, never their content). Nil means slog.Default().
	Logger *slog.Logger
	// MinBackoff is the first wait before reconnecting after a connection
	// loss or a failed attempt; each further failure doubles it, up to
	// MaxBackoff. Zero means DefaultMinBackoff and DefaultMaxBackoff (or
	// MinBackoff, if larger); MaxBackoff must not be below MinBackoff.
	MinBackoff, MaxBackoff time.Duration
}

// Stats counts what the listeners of a Broker did.
type Stats struct {
	// Connects counts the connections that started listening (the first
	// one and every reconnection).
	Connects uint64
	// Delivered counts the events handed to the hub.
	Delivered uint64
	// Malformed counts the notifications ignored because their payload
	// was not a valid event.
	Malformed uint64
}

// Broker is a notify.Broker over PostgreSQL LISTEN/NOTIFY. It is safe for
// concurrent use.
type Broker struct {
	pool     *pgxpool.Pool
	channel  string
	listen   string // the LISTEN statement, channel quoted
	log      *slog.Logger
	min, max time.Duration

	connects, delivered, malformed atomic.Uint64
}

var _ notify.Broker = (*Broker)(nil)

// New returns a Broker publishing and listening through pool. It does not
// connect; the pool does on first use. Close the hub that uses the Broker
// before the pool.
func New(pool *pgxpool.Pool, opts Options) (*Broker, error) {
	if pool == nil {
		return nil, errors.New("pgnotify: nil pool")
	}
	if opts.Channel == "" {
		opts.Channel = DefaultChannel
	}
	if !ValidChannel(opts.Channel) {
		return nil, errors.New("pgnotify: channel must be 1–63 characters of [a-z0-9_], not starting with a digit")
	}
	if opts.MinBackoff < 0 || opts.MaxBackoff < 0 {
		return nil, errors.New("pgnotify: negative backoff")
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.MaxBackoff < opts.MinBackoff {
		return nil, errors.New("pgnotify: MaxBackoff below MinBackoff")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Broker{
		pool: pool, channel: opts.Channel, listen: "LISTEN " + pgx.Identifier{opts.Channel}.Sanitize(),
		log: opts.Logger, min: opts.MinBackoff, max: opts.MaxBackoff,
	}, nil
}

// ValidChannel reports whether name is a channel New accepts: an unquoted
// PostgreSQL identifier of 1–63 characters of [a-z0-9_], not starting with
// a digit, so that LISTEN and pg_notify name the same channel.
func ValidChannel(name string) bool {
	if name == "" || len(name) > 63 || '0' <= name[0] && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Channel returns the channel the Broker publishes and listens on.
func (b *Broker) Channel() string { return b.channel }

// Stats returns the counters of the Broker's listeners.
func (b *Broker) Stats() Stats {
	return Stats{Connects: b.connects.Load(), Delivered: b.delivered.Load(), Malformed: b.malformed.Load()}
}

// Publish sends e to every listening instance, this one included. It fails
// with ErrInvalidEvent or ErrPayloadTooLarge before touching the database,
// and with the pool's error when the notification could not be sent.
func (b *Broker) Publish(ctx context.Context, e notify.Event) error {
	payload, err := encodePayload(e)
	if err != nil {
		return err
	}
	if _, err := b.pool.Exec(ctx, "SELECT pg_notify($1, $2)", b.channel, string(payload)); err != nil {
		return fmt.Errorf("pgnotify: publish: %w", err)
	}
	return nil
}

// Listen delivers every valid event received on the channel until ctx
// ends, then returns ctx's error. It holds one dedicated connection and
// replaces it, with capped exponential backoff, whenever it is lost;
// events sent meanwhile are not delivered, and once it listens again it
// delivers a notify.Missed for every subject (see the package
// documentation).
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
		// Jitter in [wait/2, wait]: a fleet does not reconnect in step.
		d := wait/2 + rand.N(wait/2+1)
		b.log.Warn("pgnotify: listener connection lost; notifications from other instances are missed until it is back",
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

// listenOnce runs one connection: connect, LISTEN, deliver until an error.
// listened reports whether LISTEN succeeded.
func (b *Broker) listenOnce(ctx context.Context, deliver func(notify.Event)) (listened bool, err error) {
	pc, err := b.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// The connection leaves the pool for good: a connection in LISTEN
	// mode must not serve other queries, nor be reused after it.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, b.listen); err != nil {
		return false, err
	}
	n := b.connects.Add(1)
	if n > 1 {
		b.log.Info("pgnotify: listening again", "channel", b.channel)
		// What was sent while it was not listening is not known: every
		// stream of the instance is told (legacy streams end with retry
		// and resume from the hub's event log, listen streams are told
		// to list and read again).
		deliver(notify.Event{Kind: notify.Missed})
	}
	for {
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if msg.Channel != b.channel {
			continue
		}
		e, ok := decodePayload(msg.Payload)
		if !ok {
			b.malformed.Add(1)
			b.log.Warn("pgnotify: ignored a malformed notification", "channel", b.channel, "bytes", len(msg.Payload))
			continue
		}
		b.delivered.Add(1)
		deliver(e)
	}
}

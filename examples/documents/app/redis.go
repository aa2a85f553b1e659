package app

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
)

// The Redis client's settings (see the redisstore package doc): short
// timeouts, so that a Redis out of reach costs a request a bounded wait
// (the stores' gates then fail at once until a probe answers), and no
// retries, so that no store call runs twice.
const (
	redisDialTimeout = time.Second
	redisIOTimeout   = 500 * time.Millisecond
	redisPingTimeout = 2 * time.Second
)

// sharedState holds what the instances of a fleet share through Redis
// (-redis): the client and the stores on it.
type sharedState struct {
	client   *redis.Client
	addr     string // host:port/db, for logs: never the password
	replay   *redisstore.ReplayStore
	rates    *redisstore.RateStore
	sessions *redisstore.SessionStore
	broker   *redisstore.Broker // nil when PostgreSQL carries notifications
	events   *redisstore.EventLog
}

// checkRedisURL returns what is wrong with a -redis value, or "".
func checkRedisURL(raw string) string {
	if raw == "" {
		return ""
	}
	if _, err := redis.ParseURL(raw); err != nil {
		return "must be a redis:// or rediss:// URL: redis://[:PASSWORD@]HOST:PORT[/DB]"
	}
	return ""
}

// describeRedis names a Redis for logs without credentials.
func describeRedis(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "redis"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// openRedis connects the stores to the Redis of -redis, if any. Sessions,
// the DPoP replay memory, the rate-limit buckets and the notification
// hub's event log (from which a legacy stream that reconnects to any
// instance with Last-Event-ID is given what it missed) go there; change
// notifications too unless the database is PostgreSQL, whose
// LISTEN/NOTIFY carries them then, with their event ids (see
// openNotifications). A Redis out of
// reach at start is logged, not fatal: the server starts as it runs
// during an outage (see Config.Redis) and the stores come back by
// themselves when Redis answers, so the instances of a fleet do not
// depend on the order they and Redis start in.
func (a *App) openRedis(ctx context.Context) error {
	if a.cfg.Redis == "" {
		return nil
	}
	opt, err := redis.ParseURL(a.cfg.Redis)
	if err != nil { // Validate checked it
		return &ConfigError{Flag: "redis", Problem: "must be a redis:// or rediss:// URL"}
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
	opt.MaxRetries = -1 // a retried script whose answer was lost would refuse a fresh proof or charge a bucket twice
	opt.DialerRetries = 1
	s := &sharedState{client: redis.NewClient(opt), addr: describeRedis(a.cfg.Redis)}
	a.redis = s
	if s.replay, err = redisstore.NewReplayStore(s.client, redisstore.ReplayOptions{Logger: a.log}); err != nil {
		return fmt.Errorf("redis (-redis): %w", err)
	}
	if s.rates, err = redisstore.NewRateStore(s.client, redisstore.RateOptions{}); err != nil {
		return fmt.Errorf("redis (-redis): %w", err)
	}
	if s.sessions, err = redisstore.NewSessionStore(s.client, redisstore.SessionOptions{}); err != nil {
		return fmt.Errorf("redis (-redis): %w", err)
	}
	if s.events, err = redisstore.NewEventLog(s.client, redisstore.EventLogOptions{}); err != nil {
		return fmt.Errorf("redis (-redis): %w", err)
	}
	if !isPostgres(a.cfg.DB) {
		if s.broker, err = redisstore.NewBroker(s.client, redisstore.BrokerOptions{Logger: a.log}); err != nil {
			return fmt.Errorf("redis (-redis): %w", err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	if err := s.client.Ping(pctx).Err(); err != nil {
		a.log.Warn("redis: not reachable at start; serving as during an outage until it answers (DPoP proofs refused, rate limits not applied, initialize without a session)",
			"redis", s.addr)
	}
	return nil
}

// close closes the client; the hub, whose broker listens on it, must be
// closed first.
func (s *sharedState) close() error {
	if s == nil {
		return nil
	}
	return s.client.Close()
}

// replayStore returns the DPoP replay memory: Redis with -redis, else nil
// (the Authenticator's own, per process). With Redis, a proof accepted by
// one instance is refused by every other; while Redis cannot answer,
// proofs are refused with 503 and Retry-After (fail closed: never a
// proof accepted unremembered).
func (a *App) replayStore() dpop.ReplayStore {
	if a.redis == nil {
		return nil
	}
	return a.redis.replay
}

// sessionStore returns the store of legacy sessions: Redis with -redis,
// else nil (the sessions part's own, per process). With Redis, a session
// minted by one instance is found by every other; while Redis cannot
// answer, initialize is answered without a session, a request naming a
// session is served without one, and resources/subscribe and new GET
// streams fail (see sessions.Options.Store).
func (a *App) sessionStore() sessions.Store {
	if a.redis == nil {
		return nil
	}
	return a.redis.sessions
}

// eventLog returns the hub's event log: Redis with -redis, so that a
// legacy stream resumes with Last-Event-ID on any instance; else nil (the
// hub's own notify.MemoryLog, per process: a stream resumes on the
// instance it left, and restarts with list_changed after a restart).
// While Redis cannot answer, events are delivered live without an id, and
// a stream that reconnects then restarts with list_changed.
func (a *App) eventLog() notify.EventLog {
	if a.redis == nil {
		return nil
	}
	return a.redis.events
}

// describeShared names, for the log, where the state the instances of a
// fleet must share is kept.
func (a *App) describeShared() string {
	if a.redis == nil {
		return "in-process (sessions, DPoP replay memory, rate limits and event log per instance)"
	}
	return "redis " + a.redis.addr
}

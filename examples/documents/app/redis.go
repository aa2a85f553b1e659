package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
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
	client   redis.UniversalClient // a *redis.ClusterClient for a cluster URL
	addr     string                // host:port/db, for logs: never the password
	replay   *redisstore.ReplayStore
	rates    *redisstore.RateStore
	sessions *redisstore.SessionStore
	broker   *redisstore.Broker // nil when PostgreSQL carries notifications
	events   *redisstore.EventLog

	// The start-up check run again while Redis was out of reach at
	// start (recheckRedis): stopCheck ends it, checked is closed when it
	// has returned. Both nil when the check passed at start.
	stopCheck context.CancelFunc
	checked   chan struct{}
}

// checkRedisURL returns what is wrong with a -redis value, or "".
func checkRedisURL(raw string) string {
	if raw == "" {
		return ""
	}
	_, _, err := parseRedisURL(raw)
	if err != nil {
		return err.Error()
	}
	return ""
}

// redisURLForms says what -redis takes.
const redisURLForms = "redis://[:PASSWORD@]HOST:PORT[/DB] (rediss:// for TLS), or for Redis Cluster redis://[:PASSWORD@]HOST1:PORT?addr=HOST2:PORT&addr=HOST3:PORT"

// parseRedisURL reads a -redis value: one Redis (redis.ParseURL), or a
// Redis Cluster (redis.ParseClusterURL) when it has addr parameters. A
// comma-separated list of hosts, which go-redis would take for one
// impossible address, and Sentinel's form (master_name), which the
// server does not support, are refused.
func parseRedisURL(raw string) (*redis.Options, *redis.ClusterOptions, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, nil, fmt.Errorf("must be a URL: %s", redisURLForms)
	}
	if strings.Contains(u.Host, ",") || strings.Contains(strings.Join(u.Query()["addr"], ""), ",") {
		return nil, nil, fmt.Errorf("names several hosts with commas, which go-redis cannot honour; for Redis Cluster give the other nodes as addr parameters: %s", redisURLForms)
	}
	q := u.Query()
	if q.Has("master_name") {
		return nil, nil, fmt.Errorf("is a Redis Sentinel URL (master_name), which the server does not support: %s", redisURLForms)
	}
	if q.Has("addr") {
		if u.Path != "" && u.Path != "/" && u.Path != "/0" {
			return nil, nil, fmt.Errorf("names a database, which Redis Cluster does not have: %s", redisURLForms)
		}
		u.Path = ""
		co, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, nil, fmt.Errorf("is not a Redis Cluster URL go-redis reads: %s", redisURLForms)
		}
		return nil, co, nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("must be a URL: %s", redisURLForms)
	}
	return o, nil, nil
}

// describeRedis names a Redis for logs without credentials.
func describeRedis(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "redis"
	}
	d := u.Scheme + "://" + u.Host + u.Path
	if addrs := u.Query()["addr"]; len(addrs) > 0 {
		d += " (cluster, " + strconv.Itoa(len(addrs)+1) + " seed nodes)"
	}
	return d
}

// openRedis connects the stores to the Redis of -redis, if any. Sessions,
// the DPoP replay memory, the rate-limit buckets and the notification
// hub's event log (from which a legacy stream that reconnects to any
// instance with Last-Event-ID is given what it missed) go there; change
// notifications too unless the database is PostgreSQL, whose
// LISTEN/NOTIFY carries them then, with their event ids (see
// openNotifications). A misconfiguration the start-up check finds (a node
// of a cluster named as one Redis, a wrong password, an ACL permission
// missing) is a *ConfigError naming it. A Redis out of reach at start is
// logged, not fatal: the server starts as it runs during an outage (see
// Config.Redis), the stores come back by themselves when Redis answers,
// and the check runs again until it does (recheckRedis), so the instances
// of a fleet do not depend on the order they and Redis start in.
func (a *App) openRedis(ctx context.Context) error {
	if a.cfg.Redis == "" {
		return nil
	}
	s, err := newSharedState(a.cfg.Redis)
	if err != nil { // Validate checked it
		return &ConfigError{Flag: "redis", Problem: err.Error()}
	}
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
		// Log: a listener that lost its connection (a Redis restart, a
		// cluster failover) catches up from the event log.
		if s.broker, err = redisstore.NewBroker(s.client, redisstore.BrokerOptions{Logger: a.log, Log: s.events}); err != nil {
			return fmt.Errorf("redis (-redis): %w", err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	err = redisstore.CheckClient(pctx, s.client)
	if ce := redisMisconfigured(err); ce != nil {
		return ce
	}
	if err != nil {
		a.log.Warn("redis: not reachable at start; serving as during an outage (DPoP proofs refused, rate limits not applied, initialize without a session) and checking again until it answers",
			"redis", s.addr)
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stopCheck = stop
		s.checked = make(chan struct{})
		go a.recheckRedis(rctx, s)
	}
	return nil
}

// redisMisconfigured returns the configuration error that err of
// redisstore.CheckClient names, or nil (none, or Redis out of reach).
func redisMisconfigured(err error) *ConfigError {
	var pe *redisstore.PermissionError
	switch {
	case errors.Is(err, redisstore.ErrClusterNode):
		// A single-node client of a cluster's node would serve a third of
		// the keys: refuse to start rather than run degraded.
		return &ConfigError{Flag: "redis", Problem: "names one node of a Redis Cluster; give the cluster's URL form: " + redisURLForms}
	case errors.Is(err, redisstore.ErrNotACluster):
		return &ConfigError{Flag: "redis", Problem: "has addr parameters (Redis Cluster), but the Redis is not a cluster: give one Redis as redis://HOST:PORT"}
	case errors.Is(err, redisstore.ErrAuth):
		return &ConfigError{Flag: "redis", Problem: "Redis refused the credentials: wrong password or user (redis://USER:PASSWORD@HOST:PORT), or none given where Redis requires one"}
	case errors.As(err, &pe):
		return &ConfigError{Flag: "redis", Problem: "the Redis ACL user may not run " + pe.Command + ", which the stores need: grant +" + pe.Command}
	}
	return nil
}

// Backoff of recheckRedis.
const (
	minRedisRecheck = time.Second
	maxRedisRecheck = 30 * time.Second
)

// recheckRedis runs the start-up check again, with capped exponential
// backoff, until Redis answers it (logged), so that a Redis out of
// reach at start never leaves the server degraded for good without a
// word: a misconfiguration it then finds (a node of a cluster, a wrong
// password, a missing permission) is logged as an error every
// maxRedisRecheck until the server is restarted with a working -redis.
func (a *App) recheckRedis(ctx context.Context, s *sharedState) {
	defer close(s.checked)
	wait := minRedisRecheck
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
		err := redisstore.CheckClient(cctx, s.client)
		cancel()
		if ce := redisMisconfigured(err); ce != nil {
			a.log.Error("redis: misconfigured, found once it answered; the shared stores cannot work until the server is restarted with a working -redis",
				"redis", s.addr, "problem", ce.Problem)
			wait = maxRedisRecheck
			continue
		}
		if err == nil {
			a.log.Info("redis: reachable; the start-up check passed", "redis", s.addr)
			return
		}
		if ctx.Err() != nil {
			return
		}
		wait = min(2*wait, maxRedisRecheck)
		a.log.Warn("redis: still not reachable; checking again", "redis", s.addr, "retry_in", wait)
	}
}

// newSharedState returns the client of the -redis URL raw, with the
// settings the stores need (see the redisstore package doc): short
// timeouts, so that a Redis out of reach costs a request a bounded wait
// (the stores' gates then fail at once until a probe answers), no
// retries, so that no store call runs twice, and on a cluster the layout
// reloaded every second (redisstore.ApplyClusterSettings), so that a
// replica promoted after a master's failure is used within a second.
func newSharedState(raw string) (*sharedState, error) {
	o, co, err := parseRedisURL(raw)
	if err != nil {
		return nil, err
	}
	s := &sharedState{addr: describeRedis(raw)}
	if co != nil {
		redisstore.ApplyClusterSettings(co)
		co.DialTimeout, co.ReadTimeout, co.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
		s.client = redis.NewClusterClient(co)
		return s, nil
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
	o.MaxRetries = -1 // a retried script whose answer was lost would refuse a fresh proof or charge a bucket twice
	o.DialerRetries = 1
	s.client = redis.NewClient(o)
	return s, nil
}

// close closes the client; the hub, whose broker listens on it, must be
// closed first.
func (s *sharedState) close() error {
	if s == nil {
		return nil
	}
	if s.stopCheck != nil {
		s.stopCheck()
		<-s.checked
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

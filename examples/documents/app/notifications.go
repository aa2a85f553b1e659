package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
	"github.com/mcpkit/mcpkit/notify"
)

// notifyPoolConns caps the notification pool: publishes are one short
// statement each, and the listener's connection leaves the pool.
const notifyPoolConns = 4

// openNotifications creates the notification hub. With an SQLite database
// events stay in the process. With PostgreSQL they travel through
// LISTEN/NOTIFY on Config.NotifyChannel (pgnotify), so that the instances
// sharing the database notify each other's streams; the broker gets its
// own small pool (the store's pool does not serve LISTEN connections).
// Either broker carries each event's id in the hub's event log (Redis
// with -redis, else the hub's own), so that every instance delivers an
// event with the same one.
func (a *App) openNotifications(ctx context.Context) error {
	opts := notify.Options{Logger: a.log, Log: a.eventLog()}
	if isPostgres(a.cfg.DB) {
		pcfg, err := pgxpool.ParseConfig(a.cfg.DB)
		if err != nil {
			// pgx's message masks any password.
			return fmt.Errorf("notifications: database (-db): %w", err)
		}
		pcfg.MaxConns = notifyPoolConns
		if a.notifyPool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
			return fmt.Errorf("notifications: database (-db): %w", err)
		}
		a.broker, err = pgnotify.New(a.notifyPool, pgnotify.Options{Channel: a.cfg.NotifyChannel, Logger: a.log})
		if err != nil {
			return &ConfigError{Flag: "notify-channel", Problem: err.Error()}
		}
		opts.Broker = a.broker
	} else if a.redis != nil {
		opts.Broker = a.redis.broker // Redis pub/sub
	}
	a.hub = notify.New(opts)
	return nil
}

// describeNotifications names the notification transport for the log.
func (a *App) describeNotifications() string {
	if a.broker != nil {
		return "postgres LISTEN/NOTIFY channel " + a.broker.Channel()
	}
	if a.redis != nil {
		return "redis pub/sub channel " + a.redis.broker.Channel()
	}
	return "in-process"
}

// isPostgres reports whether dsn names a PostgreSQL database.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

package pgnotify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/notify"
)

// postgresEnv names the DSN of the PostgreSQL server the tests use.
const postgresEnv = "MCPKIT_TEST_POSTGRES_DSN"

// postgresDSN returns the test server's DSN, skipping the test when there
// is none, or failing it under CI=true, where a silently skipped database
// test would be a lie.
func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("%s is not set under CI=true: .ci/run must start PostgreSQL (source .ci/postgres.sh && pg_start)", postgresEnv)
		}
		t.Skipf("PostgreSQL tests skipped: %s is not set. To run them: "+
			"source .ci/postgres.sh && pg_start && go test -race ./examples/documents/pgnotify/; pg_stop", postgresEnv)
	}
	return dsn
}

// newPool opens a pool on the test server, closed when the test ends (after
// the hubs, which are registered later and so cleaned up first).
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), postgresDSN(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// lazyPool is a pool that has never connected (pgxpool connects on first
// use) to an address where nothing listens.
func lazyPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// testChannel is a channel of this test alone: tests running at the same
// time against the same server never hear each other.
func testChannel(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "mcpkit_test_" + hex.EncodeToString(b[:])
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (loggers).
type syncBuffer = logbuf.Buffer

func bufferLogger(b *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// instance is one server of a fleet: its pool, broker and hub.
type instance struct {
	pool   *pgxpool.Pool
	broker *Broker
	hub    *notify.Hub
}

// newInstance starts a hub with a broker on channel, over its own pool,
// and waits until its listener listens.
func newInstance(t testing.TB, channel string, opts Options) *instance {
	t.Helper()
	in := &instance{pool: newPool(t)}
	opts.Channel = channel
	var err error
	in.broker, err = New(in.pool, opts)
	require.NoError(t, err)
	in.hub = notify.New(notify.Options{Broker: in.broker, Logger: opts.Logger})
	t.Cleanup(in.hub.Close) // before the pool's Close
	waitStats(t, in.broker, func(s Stats) bool { return s.Connects >= 1 }, "the listener never listened")
	return in
}

// waitStats polls the broker's counters until ok holds.
func waitStats(t testing.TB, b *Broker, ok func(Stats) bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(b.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (stats %+v)", msg, b.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// next returns the next event of sub, failing the test after 10 s.
// next returns sub's next event without its id (TestCarriesIDs checks
// those).
func next(t testing.TB, sub *notify.Subscription) notify.Event {
	t.Helper()
	e := nextWithID(t, sub)
	e.ID = ""
	return e
}

// nextWithID returns sub's next event.
func nextWithID(t testing.TB, sub *notify.Subscription) notify.Event {
	t.Helper()
	select {
	case e := <-sub.Events():
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return notify.Event{}
	}
}

func listChanged(subject string) notify.Event {
	return notify.Event{Subject: subject, Kind: notify.ListChanged}
}

func updated(subject, uri string) notify.Event {
	return notify.Event{Subject: subject, Kind: notify.ResourceUpdated, URI: uri}
}

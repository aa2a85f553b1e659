package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
)

// postgresEnv names the DSN of a PostgreSQL server the tests may use; each
// test gets a fresh schema in it and drops the schema at the end.
const postgresEnv = "MCPKIT_TEST_POSTGRES_DSN"

// backend opens fresh, empty, migrated stores of one kind.
type backend struct {
	name string
	open func(t testing.TB, opts Options) DB
}

// forEachBackend runs fn once per database: SQLite always, PostgreSQL when
// postgresEnv is set. Without it the PostgreSQL subtest skips, or fails
// under CI=true, where a silently skipped database would be a lie.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range []backend{{"sqlite", openTestSQLite}, {"postgres", openTestPostgres}} {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

func openTestSQLite(t testing.TB, opts Options) DB {
	t.Helper()
	db, err := OpenOptions(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "documents.db"), opts)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// postgresDSN returns the base DSN, skipping (or under CI, failing) the test
// when there is none.
func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("%s is not set under CI=true: .ci/run must start PostgreSQL (source .ci/postgres.sh && pg_start)", postgresEnv)
		}
		t.Skipf("PostgreSQL tests skipped: %s is not set. To run them: "+
			"source .ci/postgres.sh && pg_start && go test -race ./examples/documents/store/; pg_stop", postgresEnv)
	}
	return dsn
}

// openTestPostgres creates a schema with a random name, opens a store whose
// search_path is that schema, and drops the schema when the test ends, so
// concurrent runs against one server never see each other's rows.
func openTestPostgres(t testing.TB, opts Options) DB {
	t.Helper()
	dsn := postgresDSN(t)
	ctx := context.Background()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	schema := "mcpkit_test_" + hex.EncodeToString(rnd[:])

	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err, "connect to %s", postgresEnv)
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close(ctx)
	})

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := OpenOptions(ctx, u.String(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // runs before the DROP (cleanups are LIFO)
	return db
}

// fakeClock is an Options.Now that moves only when told.
type fakeClock = fakeclock.Clock

func newFakeClock() *fakeClock {
	return fakeclock.New(time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC))
}

// walk lists everything subject can see, limit entries at a time, and
// checks each page on the way: at most limit entries, keys strictly
// increasing in byte order and after the cursor.
func walk(t testing.TB, st Store, subject string, limit int) []Entry {
	t.Helper()
	var (
		all   []Entry
		after string
	)
	for page := 0; ; page++ {
		require.Less(t, page, 1_000_000, "walk does not end")
		got, err := st.List(context.Background(), subject, after, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(got), limit)
		for _, e := range got {
			require.Greater(t, e.OrderKey, after, "keys must strictly increase in byte order")
			after = e.OrderKey
		}
		all = append(all, got...)
		if len(got) < limit {
			return all
		}
	}
}

func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// create is Create that must succeed.
func create(t testing.TB, st Store, owner, title string) Document {
	t.Helper()
	d, err := st.Create(context.Background(), NewDocument{Owner: owner, Title: title, MIMEType: "text/plain", Body: title})
	require.NoError(t, err)
	return d
}

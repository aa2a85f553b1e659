package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func createBody(t testing.TB, st Store, owner, title, body string) Document {
	t.Helper()
	d, err := st.Create(context.Background(), NewDocument{Owner: owner, Title: title, MIMEType: "text/plain", Body: body})
	require.NoError(t, err)
	return d
}

func searchIDs(t testing.TB, st Store, subject, query string, limit int) []string {
	t.Helper()
	got, err := st.Search(context.Background(), subject, query, limit)
	require.NoError(t, err, "query %q", query)
	return ids(got)
}

// TestSearch: title and body, every word, prefixes, case; the subject's
// own and shared documents only; deletes, expiry, updates and unshares
// take effect at once — on both backends.
func TestSearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		ctx := context.Background()
		q1 := createBody(t, st, "alice", "Quarterly report Q1", "Revenue grew in the north region.")
		q2 := createBody(t, st, "alice", "Quarterly report Q2", "Costs fell; the café opened.")
		soup := createBody(t, st, "alice", "Recipe", "Lentil soup with cumin.")
		bobs := createBody(t, st, "bob", "Bob's quarterly report", "Bob's secret revenue numbers.")
		shared := createBody(t, st, "bob", "Shared plan", "A quarterly plan bob shares with alice.")
		require.NoError(t, st.Share(ctx, "bob", shared.ID, "alice"))

		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"report", []string{q1.ID, q2.ID}},
			{"REVENUE", []string{q1.ID}},                 // body, any case; bob's revenue is not alice's
			{"quart", []string{q1.ID, q2.ID, shared.ID}}, // a prefix; and what bob shared
			{"quarterly north", []string{q1.ID}},         // every word
			{"café", []string{q2.ID}},
			{"lentil", []string{soup.ID}},
			{"secret", nil}, // only in bob's own document
			{"nothing-like-this", nil},
			// Query syntax of either database is only separators here:
			// FTS5 operators, quotes, column filters, tsquery operators.
			{`"report" OR "secret"`, nil}, // "or" is just a word
			{`report*`, []string{q1.ID, q2.ID}},
			{`title:report`, nil},
			{`NEAR(report secret)`, nil},
			{`report & !secret | (x:*)`, nil},
			{`'; DROP TABLE documents; --`, nil},
			{``, nil},
			{`!!! ??? ***`, nil}, // no word at all: no query
		} {
			got := searchIDs(t, st, "alice", tc.query, 50)
			assert.ElementsMatch(t, tc.want, got, "query %q", tc.query)
		}
		assert.Equal(t, []string{bobs.ID}, searchIDs(t, st, "bob", "secret", 50))
		assert.Len(t, searchIDs(t, st, "alice", "quarterly", 2), 2, "the limit holds")

		require.NoError(t, st.Unshare(ctx, "bob", shared.ID, "alice"))
		assert.NotContains(t, searchIDs(t, st, "alice", "quarterly", 50), shared.ID, "unshared: gone at once")
		require.NoError(t, st.Delete(ctx, "alice", q1.ID))
		assert.Equal(t, []string{q2.ID}, searchIDs(t, st, "alice", "report", 50), "deleted: gone")
		require.NoError(t, st.Update(ctx, "alice", soup.ID, "Tomato soup with basil."))
		assert.Empty(t, searchIDs(t, st, "alice", "lentil", 50), "the old body is no longer found")
		assert.Equal(t, []string{soup.ID}, searchIDs(t, st, "alice", "basil", 50))

		exp, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "Ephemeral", MIMEType: "text/plain", Body: "x", ExpiresAt: clk.Now().Add(time.Hour)})
		require.NoError(t, err)
		assert.Equal(t, []string{exp.ID}, searchIDs(t, st, "alice", "ephemeral", 50))
		clk.Advance(2 * time.Hour)
		assert.Empty(t, searchIDs(t, st, "alice", "ephemeral", 50), "expired: gone")

		for _, bad := range []struct {
			subject string
			limit   int
		}{{"", 10}, {"alice", 0}, {"alice", MaxListLimit + 1}} {
			_, err := st.Search(ctx, bad.subject, "report", bad.limit)
			assert.ErrorIs(t, err, ErrInvalid)
		}
	})
}

// TestSearchRanking: documents with more of the words come first, ties
// in listing order.
func TestSearchRanking(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		var made []string
		for i := range 5 {
			made = append(made, createBody(t, st, "alice", fmt.Sprintf("Note %d", i), "garden").ID)
			clk.Advance(time.Millisecond)
		}
		best := createBody(t, st, "alice", "Garden garden garden", "garden garden garden garden").ID
		got := searchIDs(t, st, "alice", "garden", 50)
		require.Len(t, got, 6)
		assert.Equal(t, best, got[0])
		assert.Equal(t, made, got[1:], "equal ranks in listing order")
	})
}

func TestSearchTerms(t *testing.T) {
	assert.Equal(t, []string{"quarterly", "report", "q1"}, searchTerms("Quarterly-report (Q1)"))
	assert.Equal(t, []string{"café", "naïve"}, searchTerms(`"Café" NAÏVE*`))
	assert.Len(t, searchTerms(strings.Repeat("w ", 20)), MaxSearchTerms)
	long := searchTerms(strings.Repeat("é", 40)) // 80 bytes
	require.Len(t, long, 1)
	assert.Equal(t, strings.Repeat("é", 32), long[0], "cut at a character boundary")
	assert.Empty(t, searchTerms(`"*:&|!() `))
}

// TestSearchBackfill: a database made before the partitioned index (or
// before search) gets the live documents of every reader indexed by
// Migrate, once; the objects of the earlier index are dropped.
func TestSearchBackfill(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		live := createBody(t, st, "alice", "Old report", "from before search")
		gone := createBody(t, st, "alice", "Old deleted report", "x")
		require.NoError(t, st.Share(ctx, "alice", live.ID, "bob"))
		require.NoError(t, st.Delete(ctx, "alice", gone.ID))
		var stmts []string
		switch db := st.(type) {
		case *sqliteStore:
			stmts = []string{"DROP TABLE document_search_fts", "DROP TABLE document_search_rows",
				// The earlier, unpartitioned index, which Migrate drops.
				"CREATE TABLE document_search_ids (fts_rowid INTEGER PRIMARY KEY, doc_id TEXT)",
				"CREATE VIRTUAL TABLE documents_fts USING fts5(title, body, content = '')",
				"CREATE TRIGGER documents_search_insert AFTER INSERT ON documents BEGIN SELECT 1; END"}
			for _, stmt := range stmts {
				_, err := db.db.ExecContext(ctx, stmt)
				require.NoError(t, err, stmt)
			}
		case *postgresStore:
			for _, stmt := range []string{"DROP TABLE document_search",
				`CREATE INDEX documents_search ON documents USING gin (to_tsvector('simple', title))`} {
				_, err := db.pool.Exec(ctx, stmt)
				require.NoError(t, err, stmt)
			}
		}
		require.NoError(t, st.Migrate(ctx))
		require.NoError(t, st.Migrate(ctx), "idempotent")
		assert.Equal(t, []string{live.ID}, searchIDs(t, st, "alice", "report", 10))
		assert.Equal(t, []string{live.ID}, searchIDs(t, st, "bob", "report", 10), "the grantee's entry too")
		newer := createBody(t, st, "alice", "New report", "y")
		assert.ElementsMatch(t, []string{live.ID, newer.ID}, searchIDs(t, st, "alice", "report", 10))
		var left int
		switch db := st.(type) {
		case *sqliteStore:
			require.NoError(t, db.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master
WHERE name IN ('document_search_ids', 'documents_fts', 'documents_search_insert')`).Scan(&left))
		case *postgresStore:
			require.NoError(t, db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = 'documents_search'
AND relnamespace = current_schema()::regnamespace`).Scan(&left))
		}
		assert.Zero(t, left, "the earlier index is gone")
	})
}

// TestSearchUsesIndex: each backend's plan reads the full-text index (the
// query's expression is the index's), not every document.
func TestSearchUsesIndex(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st := openTestSQLite(t, Options{}).(*sqliteStore)
		rows, err := st.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+sqliteSearch, ftsQuery("alice", []string{"report"}), "alice", 0, 10)
		require.NoError(t, err)
		plan := collectPlan(t, rows)
		t.Logf("plan:\n%s", plan)
		assert.Contains(t, plan, "VIRTUAL TABLE INDEX", "the FTS5 index answers MATCH")
		assert.NotContains(t, plan, "SCAN d", "documents are looked up by key, never scanned")
	})
	t.Run("postgres", func(t *testing.T) {
		st := openTestPostgres(t, Options{}).(*postgresStore)
		ctx := context.Background()
		for i := range 4 {
			require.NoError(t, SeedMany(ctx, st, fmt.Sprint("user", i), 2_000))
		}
		var plan []string
		err := st.with(ctx, func(c *pgx.Conn) error {
			if _, err := c.Exec(ctx, "ANALYZE documents; ANALYZE document_access; ANALYZE document_search"); err != nil {
				return err
			}
			// A query for a word in few documents of a subject with many:
			// the GIN index is the way in.
			return nil
		})
		require.NoError(t, err)
		plan = postgresExplain(t, st, "EXPLAIN", "user1", "zzzrare")
		text := strings.Join(plan, "\n")
		t.Logf("plan:\n%s", text)
		assert.Regexp(t, "document_search_words|document_search_pkey", text, "the subject's index entries serve the match")
		assert.NotContains(t, text, "Seq Scan", "nothing is read whole")
	})
}

func collectPlan(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

// FuzzSearch: no query is database syntax — none fails, and none finds a
// document the subject may not see.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"report", `"report" OR secret`, "NEAR(a b)", "title:x", "a & !b | c:*", "'; --", "*", "é\u0301", "\x00"} {
		f.Add(s)
	}
	st := openTestSQLite(f, Options{})
	createBody(f, st, "alice", "Quarterly report", "revenue")
	createBody(f, st, "bob", "Secret report", "bob's revenue")
	f.Fuzz(func(t *testing.T, q string) {
		got, err := st.Search(context.Background(), "alice", q, 10)
		require.NoError(t, err, "query %q", q)
		for _, e := range got {
			assert.NotContains(t, e.Title, "Secret", "query %q found bob's document", q)
		}
	})
}

// BenchmarkSQLiteSearch: a search for a word in a few of 20,000
// documents, beside a first list page of the same subject.
func BenchmarkSQLiteSearch(b *testing.B) {
	st := openTestSQLite(b, Options{}).(*sqliteStore)
	ctx := context.Background()
	require.NoError(b, SeedMany(ctx, st, "alice", 10_000))
	require.NoError(b, SeedMany(ctx, st, "bob", 10_000))
	for range 5 {
		createBody(b, st, "alice", "Zebra notes", "zebra")
	}
	b.Run("list page", func(b *testing.B) {
		for b.Loop() {
			_, err := st.List(ctx, "alice", "", 21)
			require.NoError(b, err)
		}
	})
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			got, err := st.Search(ctx, "alice", "zebra", 20)
			require.NoError(b, err)
			require.Len(b, got, 5)
		}
	})
}

// postgresExplain runs explain (e.g. "EXPLAIN (ANALYZE, FORMAT JSON)") of
// subject's search for query as Search runs it, and returns its lines.
func postgresExplain(t *testing.T, st *postgresStore, explain, subject, query string) []string {
	t.Helper()
	ctx := context.Background()
	var plan []string
	err := st.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, explain+" "+postgresSearch, subject, tsQuery(subject, searchTerms(query)), time.Now(), 50)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	})
	require.NoError(t, err)
	return plan
}

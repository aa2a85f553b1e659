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

// TestSQLiteSearchBackfill: a database made before search existed gets its
// live documents indexed by Migrate, once.
func TestSQLiteSearchBackfill(t *testing.T) {
	st := openTestSQLite(t, Options{}).(*sqliteStore)
	ctx := context.Background()
	live := createBody(t, st, "alice", "Old report", "from before search")
	gone := createBody(t, st, "alice", "Old deleted report", "x")
	require.NoError(t, st.Delete(ctx, "alice", gone.ID))
	for _, stmt := range []string{
		"DROP TRIGGER documents_search_insert", "DROP TRIGGER documents_search_update", "DROP TRIGGER documents_search_delete",
		"DROP TABLE documents_fts", "DROP TABLE document_search_ids",
	} {
		_, err := st.db.ExecContext(ctx, stmt)
		require.NoError(t, err)
	}
	require.NoError(t, st.Migrate(ctx))
	require.NoError(t, st.Migrate(ctx), "idempotent")
	assert.Equal(t, []string{live.ID}, searchIDs(t, st, "alice", "report", 10))
	newer := createBody(t, st, "alice", "New report", "y")
	assert.ElementsMatch(t, []string{live.ID, newer.ID}, searchIDs(t, st, "alice", "report", 10))
}

// TestSearchUsesIndex: each backend's plan reads the full-text index (the
// query's expression is the index's), not every document.
func TestSearchUsesIndex(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st := openTestSQLite(t, Options{}).(*sqliteStore)
		rows, err := st.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+sqliteSearch, "alice", `"report"*`, 0, 10)
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
			if _, err := c.Exec(ctx, "ANALYZE documents; ANALYZE document_access"); err != nil {
				return err
			}
			// A query for a word in few documents of a subject with many:
			// the GIN index is the way in.
			rows, err := c.Query(ctx, "EXPLAIN "+postgresSearch, "user1", "'zzzrare':*", time.Now(), 20)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		require.NoError(t, err)
		text := strings.Join(plan, "\n")
		t.Logf("plan:\n%s", text)
		assert.Contains(t, text, "documents_search", "the GIN index serves the match")
		assert.NotContains(t, text, "Seq Scan on documents")
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

// BenchmarkSQLiteInsertSearchIndex: what the search triggers add to a
// bulk insert (SeedMany of 1,000 documents), against the same database
// with the triggers dropped.
func BenchmarkSQLiteInsertSearchIndex(b *testing.B) {
	for _, indexed := range []bool{false, true} {
		name := "without index"
		if indexed {
			name = "with index"
		}
		b.Run(name, func(b *testing.B) {
			st := openTestSQLite(b, Options{}).(*sqliteStore)
			if !indexed {
				for _, trg := range []string{"documents_search_insert", "documents_search_update", "documents_search_delete"} {
					_, err := st.db.Exec("DROP TRIGGER " + trg)
					require.NoError(b, err)
				}
			}
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				require.NoError(b, SeedMany(ctx, st, fmt.Sprint("user", i), 1000))
			}
		})
	}
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

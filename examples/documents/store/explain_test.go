package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPostgresListUsesIndex: on tables with enough rows, analyzed, the
// listing walks the document_access primary key from the cursor (no
// sequential scan, no sort) and fetches documents by primary key.
func TestPostgresListUsesIndex(t *testing.T) {
	st := openTestPostgres(t, Options{}).(*postgresStore)
	ctx := context.Background()
	for i := range 8 {
		require.NoError(t, SeedMany(ctx, st, fmt.Sprint("user", i), 2_500))
	}
	require.NoError(t, SeedMany(ctx, st, "alice", 10_000))
	page := walk(t, st, "alice", 1000)
	require.Len(t, page, 10_000)
	deep := page[9_000].OrderKey

	var plan []string
	err := st.with(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "ANALYZE documents; ANALYZE document_access"); err != nil {
			return err
		}
		for _, after := range []string{"", deep} {
			rows, err := c.Query(ctx, "EXPLAIN "+postgresList, "alice", after, time.Now(), 51)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan = append(plan, lines...)
		}
		return nil
	})
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	assert.Regexp(t, `Index (Only )?Scan using document_access_pkey on document_access`, text)
	assert.Contains(t, text, "documents_pkey")
	assert.NotContains(t, text, "Seq Scan")
	assert.NotContains(t, text, "Sort")
}

// TestPostgresCollation: the key columns are declared COLLATE "C", whatever
// the database default, and the test server's default really is linguistic
// (else TestByteOrder could not catch a missing COLLATE "C").
func TestPostgresCollation(t *testing.T) {
	st := openTestPostgres(t, Options{}).(*postgresStore)
	ctx := context.Background()
	err := st.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT table_name || '.' || column_name, coalesce(collation_name, '')
FROM information_schema.columns
WHERE table_schema = current_schema() AND column_name IN ('id', 'owner', 'order_key', 'subject', 'doc_id')`)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for rows.Next() {
			var col, coll string
			if err := rows.Scan(&col, &coll); err != nil {
				return err
			}
			got[col] = coll
		}
		if err := rows.Err(); err != nil {
			return err
		}
		assert.Len(t, got, 8) // documents (3), document_access (3), document_search (2)
		for col, coll := range got {
			assert.Equal(t, "C", coll, col)
		}

		var defaultOrder []string
		rows, err = c.Query(ctx, `SELECT x FROM (VALUES ('a-b'), ('aB'), ('a_b'), ('ab')) AS v(x) ORDER BY x`)
		if err != nil {
			return err
		}
		if defaultOrder, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if strings.Join(defaultOrder, " ") == "a-b aB a_b ab" {
			t.Logf("this server's default collation is bytewise; start it with .ci/postgres.sh to test with a linguistic one")
		}
		return nil
	})
	require.NoError(t, err)
}

// TestSQLiteListUsesIndex: SQLite walks the access table's primary key
// from the cursor and looks documents up by primary key: no scan, no
// temporary B-tree for ORDER BY.
func TestSQLiteListUsesIndex(t *testing.T) {
	st := openTestSQLite(t, Options{}).(*sqliteStore)
	ctx := context.Background()
	require.NoError(t, SeedMany(ctx, st, "alice", 1_000)) // enough for ANALYZE to prefer the index
	require.NoError(t, SeedMany(ctx, st, "bob", 1_000))
	_, err := st.db.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)

	rows, err := st.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqliteList, "alice", "", micros(time.Now()), 51)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	require.Len(t, plan, 2)
	assert.Equal(t, "SEARCH a USING PRIMARY KEY (subject=? AND order_key>?)", plan[0])
	assert.Contains(t, plan[1], "SEARCH d USING INDEX sqlite_autoindex_documents_1 (id=?)")
	assert.NotContains(t, text, "TEMP B-TREE")
	assert.NotContains(t, text, "SCAN")
}

// TestSQLiteReadersUsesIndex: Readers looks the document up by primary key
// and reads its access rows from the (doc_id, subject) index, already in
// subject order.
func TestSQLiteReadersUsesIndex(t *testing.T) {
	st := openTestSQLite(t, Options{}).(*sqliteStore)
	ctx := context.Background()
	require.NoError(t, SeedMany(ctx, st, "alice", 1_000))
	_, err := st.db.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)

	rows, err := st.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqliteReaders, "x", "alice", micros(time.Now()))
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	assert.Contains(t, text, "USING INDEX sqlite_autoindex_documents_1 (id=?)")
	assert.Contains(t, text, "document_access_doc (doc_id=?)")
	assert.NotContains(t, text, "TEMP B-TREE")
	assert.NotContains(t, text, "SCAN")
}

// TestSQLiteIDsWithPrefixUsesIndex: completion walks the (subject, doc_id)
// index over the prefix's range (covering: the ids come from the index)
// and looks documents up by primary key: no scan, no sort.
func TestSQLiteIDsWithPrefixUsesIndex(t *testing.T) {
	st := openTestSQLite(t, Options{}).(*sqliteStore)
	ctx := context.Background()
	require.NoError(t, SeedMany(ctx, st, "alice", 2_000)) // the plan does not change with more rows
	require.NoError(t, SeedMany(ctx, st, "bob", 500))
	_, err := st.db.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)

	for _, prefix := range []string{"", "Q", "Qx_3"} {
		lo, hi, ok := idRange(prefix)
		require.True(t, ok)
		rows, err := st.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqliteIDs, "alice", lo, hi, micros(time.Now()), 101)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("prefix %q, plan:\n%s", prefix, text)
		require.Len(t, plan, 2)
		assert.Equal(t, "SEARCH a USING COVERING INDEX document_access_subject_doc (subject=? AND doc_id>? AND doc_id<?)", plan[0])
		assert.Contains(t, plan[1], "SEARCH d USING INDEX sqlite_autoindex_documents_1 (id=?)")
		assert.NotContains(t, text, "TEMP B-TREE")
		assert.NotContains(t, text, "SCAN")
	}
}

// TestPostgresIDsWithPrefixUsesIndex: on analyzed tables with 10,000
// documents of alice's among 30,000, completion reads the range of the
// (subject, doc_id) index and fetches documents by primary key: no
// sequential scan, no sort.
func TestPostgresIDsWithPrefixUsesIndex(t *testing.T) {
	st := openTestPostgres(t, Options{}).(*postgresStore)
	ctx := context.Background()
	for i := range 8 {
		require.NoError(t, SeedMany(ctx, st, fmt.Sprint("user", i), 2_500))
	}
	require.NoError(t, SeedMany(ctx, st, "alice", 10_000))

	var plan []string
	err := st.with(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "ANALYZE documents; ANALYZE document_access"); err != nil {
			return err
		}
		for _, prefix := range []string{"", "Q", "Qx_3"} {
			lo, hi, _ := idRange(prefix)
			rows, err := c.Query(ctx, "EXPLAIN "+postgresIDs, "alice", lo, hi, time.Now(), 101)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan = append(plan, lines...)
		}
		return nil
	})
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	assert.Regexp(t, `Index (Only )?Scan using document_access_subject_doc on document_access`, text)
	assert.Contains(t, text, "documents_pkey")
	assert.NotContains(t, text, "Seq Scan")
	assert.NotContains(t, text, "Sort")
}

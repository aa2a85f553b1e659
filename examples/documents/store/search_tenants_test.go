package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchBackends are the backends a benchmark runs on: SQLite, and
// PostgreSQL when postgresEnv is set.
func benchBackends() []backend {
	out := []backend{{"sqlite", openTestSQLite}}
	if os.Getenv(postgresEnv) != "" {
		out = append(out, backend{"postgres", openTestPostgres})
	}
	return out
}

// BenchmarkSearchForeignCorpus: alice's searches beside 0 and 100,000
// documents of bob's that hold the searched words, on each backend. The
// ratio of the foreign=100000 and foreign=0 times of one query is what
// another tenant's data costs alice:
//
//   - own: a word 20 of alice's documents hold (and all of bob's);
//   - oracle: a word only bob's documents hold — alice finds nothing,
//     and must not be able to tell by the time how many bob has;
//   - list: alice's first page of 20, the keyset listing, for scale: what
//     bigger B-trees and a colder page cache cost any query of alice's.
//
// Run: go test -run '^$' -bench SearchForeignCorpus -benchtime 200x ./examples/documents/store/
func BenchmarkSearchForeignCorpus(b *testing.B) {
	ctx := context.Background()
	for _, be := range benchBackends() {
		for _, foreign := range []int{0, 100_000} {
			st := be.open(b, Options{})
			require.NoError(b, SeedMany(ctx, st, "alice", 20))
			require.NoError(b, SeedMany(ctx, st, "bob", foreign))
			if ps, ok := st.(*postgresStore); ok {
				_, err := ps.pool.Exec(ctx, "VACUUM ANALYZE")
				require.NoError(b, err)
			}
			b.Run(fmt.Sprintf("%s/list/foreign=%d", be.name, foreign), func(b *testing.B) {
				for b.Loop() {
					got, err := st.List(ctx, "alice", "", 20)
					require.NoError(b, err)
					require.Len(b, got, 20)
				}
			})
			for _, q := range []struct{ name, query string }{{"own", "document"}, {"oracle", "bob"}} {
				b.Run(fmt.Sprintf("%s/%s/foreign=%d", be.name, q.name, foreign), func(b *testing.B) {
					for b.Loop() {
						got, err := st.Search(ctx, "alice", q.query, 20)
						require.NoError(b, err)
						if q.name == "own" {
							require.Len(b, got, 20)
						} else {
							require.Empty(b, got)
						}
					}
				})
			}
		}
	}
}

// TestSearchWorkIgnoresForeignCorpus counts the work of alice's searches
// beside 0 and 20,000 documents of bob's that hold the searched words, on
// each backend: on SQLite the index lookup must yield the same rows
// (alice's own); on PostgreSQL the executed plan must examine at most a
// few rows per document alice may read, and touch about the same number
// of pages. With one index for all tenants,
// the lookup yielded every one of bob's 20,000 documents and dropped them
// after (the defect).
func TestSearchWorkIgnoresForeignCorpus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		type work = struct{ rows, pages int }
		measure := func(foreign int) map[string]work {
			st := b.open(t, Options{})
			require.NoError(t, SeedMany(ctx, st, "alice", 20))
			require.NoError(t, SeedMany(ctx, st, "bob", foreign))
			shared := createBody(t, st, "bob", "Bob's document for alice", "shared")
			require.NoError(t, st.Share(ctx, "bob", shared.ID, "alice"))
			out := map[string]work{}
			for _, q := range []struct {
				query string
				want  int
			}{{"document", 21}, {"docu", 21}, {"bob", 1}, {"shared", 1}, {"absent", 0}} {
				got, err := st.Search(ctx, "alice", q.query, 50)
				require.NoError(t, err)
				require.Len(t, got, q.want, "query %q", q.query)
				switch db := st.(type) {
				case *sqliteStore:
					var n int
					require.NoError(t, db.db.QueryRowContext(ctx, `SELECT count(*) FROM document_search_fts WHERE document_search_fts MATCH ?`,
						ftsQuery("alice", searchTerms(q.query))).Scan(&n))
					out[q.query] = work{rows: n}
				case *postgresStore:
					out[q.query] = postgresSearchWork(t, db, "alice", q.query)
				}
			}
			return out
		}
		none, many := measure(0), measure(20_000)
		const readable = 21 // alice's 20 and the one bob shares
		for q, w := range many {
			t.Logf("%s: 0 foreign: %+v; 20,000 foreign: %+v", q, none[q], w)
			if b.name == "sqlite" {
				// The FTS lookup is the way in (TestSearchUsesIndex), and
				// yields alice's matching entries only.
				assert.Equal(t, none[q].rows, w.rows, "query %q: the index lookup yields bob's entries", q)
				continue
			}
			// The planner may take alice's entries by the GIN index or by
			// her range of the primary key (then filter them), and looks
			// up the access row and the document of each hit: at most
			// three rows per document alice may read, whatever bob holds.
			assert.LessOrEqual(t, w.rows, 3*readable, "query %q: rows examined grow with bob's documents", q)
			// B-tree lookups get a level deeper in bigger tables, nothing
			// more.
			assert.LessOrEqual(t, w.pages, 3*none[q].pages+16, "query %q: pages touched grow with bob's documents", q)
		}
	})
}

// postgresSearchWork runs the search query under EXPLAIN (ANALYZE,
// BUFFERS) and returns the rows its scans produced (over all loops) and
// the pages it touched.
func postgresSearchWork(t *testing.T, st *postgresStore, subject, query string) (w struct{ rows, pages int }) {
	t.Helper()
	ctx := context.Background()
	_, err := st.pool.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	var plan []map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.Join(postgresExplain(t, st, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)", subject, query), "\n")), &plan))
	require.Len(t, plan, 1)
	top := plan[0]["Plan"].(map[string]any)
	num := func(n map[string]any, k string) int { f, _ := n[k].(float64); return int(f) }
	w.pages = num(top, "Shared Hit Blocks") + num(top, "Shared Read Blocks")
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if strings.Contains(n["Node Type"].(string), "Scan") {
			w.rows += num(n, "Actual Rows") * max(1, num(n, "Actual Loops"))
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
	}
	walk(top)
	return w
}

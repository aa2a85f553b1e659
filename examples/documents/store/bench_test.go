package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkListDeepPage lists one page deep in a user's collection on an
// SQLite file, for collections of 10, 100 and 100,000 documents (other
// users' documents share the tables). A page of P entries asks the store
// for P+1 rows, as a List callback does to learn HasMore. "Deep" is the
// last full page, the worst case for OFFSET; a collection smaller than the
// page is listed whole.
//
// The keyset query costs O(log n + P): compare page=10 at docs=10 and
// docs=100000, and page=50 at docs=100 and docs=100000. The
// OffsetBaseline rows run the OFFSET query the store does not use, at the
// same depth, to show the difference.
func BenchmarkListDeepPage(b *testing.B) {
	ctx := context.Background()
	st, err := OpenOptions(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"), Options{})
	require.NoError(b, err)
	defer st.Close()
	sq := st.(*sqliteStore)
	sizes := []int{10, 100, 100_000}
	for _, n := range sizes {
		start := time.Now()
		require.NoError(b, SeedMany(ctx, st, fmt.Sprint("user", n), n))
		b.Logf("seeded %d documents in %v", n, time.Since(start))
	}
	require.NoError(b, SeedMany(ctx, st, "others", 20_000))
	_, err = sq.db.ExecContext(ctx, "ANALYZE")
	require.NoError(b, err)

	for _, pageSize := range []int{10, 50} {
		for _, n := range sizes {
			subject := fmt.Sprint("user", n)
			all := walk(b, st, subject, MaxListLimit)
			require.Len(b, all, n)
			depth := max(0, n-pageSize) // entries before the page
			after := ""
			if depth > 0 {
				after = all[depth-1].OrderKey
			}
			want := min(pageSize, n-depth) // the +1 row does not exist: last page

			b.Run(fmt.Sprintf("keyset/page=%d/docs=%d", pageSize, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, err := st.List(ctx, subject, after, pageSize+1)
					if err != nil || len(got) != want {
						b.Fatalf("got %d entries, %v; want %d", len(got), err, want)
					}
				}
				b.ReportMetric(float64(want), "rows/op")
			})
			if pageSize != 50 {
				continue
			}
			b.Run(fmt.Sprintf("OffsetBaseline/page=%d/docs=%d", pageSize, n), func(b *testing.B) {
				b.ReportAllocs()
				q := sqliteList[:len(sqliteList)-len("LIMIT ?")] + "LIMIT ? OFFSET ?"
				for b.Loop() {
					rows, err := sq.db.QueryContext(ctx, q, subject, "", micros(time.Now()), pageSize+1, depth)
					if err != nil {
						b.Fatal(err)
					}
					got := 0
					for rows.Next() {
						var e Entry
						if err := rows.Scan(&e.ID, &e.Title, &e.MIMEType, &e.OrderKey); err != nil {
							b.Fatal(err)
						}
						got++
					}
					rows.Close()
					if got != want {
						b.Fatalf("offset: got %d, want %d", got, want)
					}
				}
			})
		}
	}
}

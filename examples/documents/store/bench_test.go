package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkListDeepPage lists one page (limit 51: the 50 entries a List
// callback returns plus the one that tells it HasMore) starting deep in a
// user's collection, on an SQLite file, for collections of 10, 100 and
// 100,000 documents; other users' documents share the tables. "Deep" is
// the last full page, the worst case for OFFSET; with 10 documents the page
// holds all 10.
//
// The keyset query costs O(log n + limit): the 100-document and the
// 100,000-document pages should cost the same. The OffsetBaseline rows run
// the OFFSET query the store does not use, at the same depth, to show the
// difference.
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

	const limit = 51
	for _, n := range sizes {
		subject := fmt.Sprint("user", n)
		all := walk(b, st, subject, MaxListLimit)
		require.Len(b, all, n)
		depth := max(0, n-50) // entries before the page
		after := ""
		if depth > 0 {
			after = all[depth-1].OrderKey
		}
		want := min(limit, n-depth)

		b.Run(fmt.Sprintf("keyset/docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := st.List(ctx, subject, after, limit)
				if err != nil || len(got) != want {
					b.Fatalf("got %d entries, %v; want %d", len(got), err, want)
				}
			}
			b.ReportMetric(float64(want), "rows/op")
		})
		b.Run(fmt.Sprintf("OffsetBaseline/docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			q := sqliteList[:len(sqliteList)-len("LIMIT ?")] + "LIMIT ? OFFSET ?"
			for b.Loop() {
				rows, err := sq.db.QueryContext(ctx, q, subject, "", micros(time.Now()), limit, depth)
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

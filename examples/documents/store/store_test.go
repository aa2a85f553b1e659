package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeysetWalk(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, tc := range []struct {
			name string
			step time.Duration // how far the clock moves between creates
		}{
			{"distinct times", time.Millisecond},
			{"same time, ids break ties", 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				clk := newFakeClock()
				st := b.open(t, Options{Now: clk.Now})
				want := map[string]Document{}
				for i := range 40 {
					d := create(t, st, "alice", fmt.Sprintf("alice %d", i))
					want[d.ID] = d
					create(t, st, "bob", fmt.Sprintf("bob %d", i)) // interleaved noise
					clk.Advance(tc.step)
				}
				deleted := create(t, st, "alice", "deleted one")
				require.NoError(t, st.Delete(context.Background(), "alice", deleted.ID))

				for _, limit := range []int{1, 3, 50} {
					got := walk(t, st, "alice", limit)
					assert.Len(t, got, len(want), "limit %d", limit)
					seen := map[string]bool{}
					for _, e := range got {
						d, ok := want[e.ID]
						if assert.True(t, ok, "limit %d: unexpected %s", limit, e.ID) {
							assert.Equal(t, Entry{ID: d.ID, Title: d.Title, MIMEType: "text/plain", OrderKey: d.OrderKey}, e)
						}
						assert.False(t, seen[e.ID], "limit %d: %s listed twice", limit, e.ID)
						seen[e.ID] = true
					}
				}
			})
		}
	})
}

func TestOrderKeys(t *testing.T) {
	clk := newFakeClock()
	st := openTestSQLite(t, Options{Now: clk.Now})
	d := create(t, st, "alice", "x")
	assert.Equal(t, "2026-03-14T15:09:26.535897Z/"+d.ID, d.OrderKey)
	assert.Len(t, d.ID, 22)
	assert.True(t, validID(d.ID))
	assert.True(t, printableASCII(d.OrderKey))
	clk.Advance(time.Microsecond)
	assert.Less(t, d.OrderKey, create(t, st, "alice", "y").OrderKey)
}

// TestByteOrder: keys whose byte order differs from a linguistic order
// ("a-b" < "aB" < "a_b" < "ab" in bytes; ICU and glibc locales put them
// otherwise) come back in byte order. The ids are the only difference
// between the keys, because the clock does not move.
func TestByteOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{Now: newFakeClock().Now})
		names := []string{"ab", "a_b", "aB", "a-b", "A-B", "a0", "AB", "a", "a--", "_a", "-a", "Z", "z"}
		for _, id := range names {
			_, err := st.Create(context.Background(), NewDocument{ID: id, Owner: "alice", Title: id, MIMEType: "text/plain"})
			require.NoError(t, err)
		}
		want := slices.Clone(names)
		slices.Sort(want) // Go compares strings byte by byte
		for _, limit := range []int{1, 3, 50} {
			assert.Equal(t, want, ids(walk(t, st, "alice", limit)), "limit %d", limit)
		}
	})
}

func TestIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		var alices []Document
		for i := range 5 {
			alices = append(alices, create(t, st, "alice", fmt.Sprintf("secret %d", i)))
		}
		bobs := create(t, st, "bob", "bob's own")

		assert.Equal(t, []string{bobs.ID}, ids(walk(t, st, "bob", 50)))
		assert.Len(t, walk(t, st, "alice", 50), 5)
		// Subjects that differ from "alice" only in case, padding or a
		// suffix are other subjects.
		for _, other := range []string{"Alice", "alice ", "alic", "alice%", "%", "*"} {
			assert.Empty(t, walk(t, st, other, 50), other)
		}
		for _, d := range alices {
			_, err := st.Read(ctx, "bob", d.ID)
			assert.ErrorIs(t, err, ErrNotFound, "bob reads alice's %s", d.ID)
			assert.ErrorIs(t, st.Delete(ctx, "bob", d.ID), ErrNotFound)
			assert.ErrorIs(t, st.Share(ctx, "bob", d.ID, "bob"), ErrNotFound)
			assert.ErrorIs(t, st.Unshare(ctx, "bob", d.ID, "carol"), ErrNotFound)
			got, err := st.Read(ctx, "alice", d.ID)
			require.NoError(t, err)
			assert.Equal(t, d, got)
		}
		// bob's failed attempts changed nothing.
		assert.Len(t, walk(t, st, "alice", 50), 5)
		assert.Len(t, walk(t, st, "bob", 50), 1)
	})
}

func TestDeletedAndExpired(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		ctx := context.Background()
		keep := create(t, st, "alice", "keep")
		gone := create(t, st, "alice", "to delete")
		expiring, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "expiring", MIMEType: "text/plain",
			ExpiresAt: clk.Now().Add(time.Hour)})
		require.NoError(t, err)
		require.NoError(t, st.Share(ctx, "alice", gone.ID, "bob"))
		assert.ElementsMatch(t, []string{keep.ID, gone.ID, expiring.ID}, ids(walk(t, st, "alice", 2)))
		got, err := st.Read(ctx, "alice", expiring.ID)
		require.NoError(t, err)
		assert.Equal(t, expiring.ExpiresAt, got.ExpiresAt)

		require.NoError(t, st.Delete(ctx, "alice", gone.ID))
		assert.ErrorIs(t, st.Delete(ctx, "alice", gone.ID), ErrNotFound, "second delete")
		assert.ElementsMatch(t, []string{keep.ID, expiring.ID}, ids(walk(t, st, "alice", 2)))
		assert.Empty(t, walk(t, st, "bob", 2), "deleted shared document")
		for _, who := range []string{"alice", "bob"} {
			_, err = st.Read(ctx, who, gone.ID)
			assert.ErrorIs(t, err, ErrNotFound, who)
		}
		assert.ErrorIs(t, st.Share(ctx, "alice", gone.ID, "carol"), ErrNotFound, "share deleted")

		clk.Advance(time.Hour) // expires_at is exclusive: gone at that instant
		assert.Equal(t, []string{keep.ID}, ids(walk(t, st, "alice", 2)))
		_, err = st.Read(ctx, "alice", expiring.ID)
		assert.ErrorIs(t, err, ErrNotFound)
		assert.ErrorIs(t, st.Delete(ctx, "alice", expiring.ID), ErrNotFound, "delete expired")
		assert.ErrorIs(t, st.Share(ctx, "alice", expiring.ID, "bob"), ErrNotFound, "share expired")
	})
}

func TestSharing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		doc := create(t, st, "alice", "shared")
		bobs := create(t, st, "bob", "bob's")

		require.NoError(t, st.Share(ctx, "alice", doc.ID, "bob"))
		require.NoError(t, st.Share(ctx, "alice", doc.ID, "bob"), "sharing twice is a no-op")
		require.NoError(t, st.Share(ctx, "alice", doc.ID, "alice"), "sharing with the owner is a no-op")
		assert.ElementsMatch(t, []string{doc.ID, bobs.ID}, ids(walk(t, st, "bob", 1)))
		got, err := st.Read(ctx, "bob", doc.ID)
		require.NoError(t, err)
		assert.Equal(t, doc, got)
		assert.Empty(t, walk(t, st, "carol", 10))

		// The grantee does not own it.
		assert.ErrorIs(t, st.Delete(ctx, "bob", doc.ID), ErrNotFound)
		assert.ErrorIs(t, st.Share(ctx, "bob", doc.ID, "carol"), ErrNotFound)
		assert.ErrorIs(t, st.Unshare(ctx, "bob", doc.ID, "carol"), ErrNotFound)
		// The owner keeps access.
		assert.ErrorIs(t, st.Unshare(ctx, "alice", doc.ID, "alice"), ErrInvalid)

		require.NoError(t, st.Unshare(ctx, "alice", doc.ID, "bob"))
		require.NoError(t, st.Unshare(ctx, "alice", doc.ID, "bob"), "unsharing twice is a no-op")
		assert.Equal(t, []string{bobs.ID}, ids(walk(t, st, "bob", 10)))
		_, err = st.Read(ctx, "bob", doc.ID)
		assert.ErrorIs(t, err, ErrNotFound)
		assert.Equal(t, []string{doc.ID}, ids(walk(t, st, "alice", 10)))
	})
}

func TestValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		doc := create(t, st, "alice", "x")
		good := NewDocument{Owner: "alice", Title: "t", MIMEType: "text/plain"}
		with := func(f func(*NewDocument)) NewDocument { d := good; f(&d); return d }

		for _, tc := range []struct {
			name string
			err  error
			call func() error
		}{
			// Never an unrestricted query: no subject, no query.
			{"list empty subject", ErrInvalid, func() error { _, err := st.List(ctx, "", "", 10); return err }},
			{"read empty subject", ErrInvalid, func() error { _, err := st.Read(ctx, "", doc.ID); return err }},
			{"create empty owner", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.Owner = "" })); return err }},
			{"delete empty owner", ErrInvalid, func() error { return st.Delete(ctx, "", doc.ID) }},
			{"share empty owner", ErrInvalid, func() error { return st.Share(ctx, "", doc.ID, "bob") }},
			{"share empty grantee", ErrInvalid, func() error { return st.Share(ctx, "alice", doc.ID, "") }},
			{"unshare empty grantee", ErrInvalid, func() error { return st.Unshare(ctx, "alice", doc.ID, "") }},
			{"subject with control", ErrInvalid, func() error { _, err := st.List(ctx, "ali\nce", "", 10); return err }},
			{"subject too long", ErrInvalid, func() error { _, err := st.List(ctx, strings.Repeat("a", 257), "", 10); return err }},
			// 129 characters outside the BMP are 258 UTF-16 code units.
			{"subject too long in UTF-16", ErrInvalid, func() error { _, err := st.List(ctx, strings.Repeat("😀", 129), "", 10); return err }},
			{"title too long", ErrInvalid, func() error {
				_, err := st.Create(ctx, with(func(d *NewDocument) { d.Title = strings.Repeat("a", MaxTitleBytes+1) }))
				return err
			}},
			{"limit 0", ErrInvalid, func() error { _, err := st.List(ctx, "alice", "", 0); return err }},
			{"limit too big", ErrInvalid, func() error { _, err := st.List(ctx, "alice", "", MaxListLimit+1); return err }},
			{"after with space", ErrInvalid, func() error { _, err := st.List(ctx, "alice", "a b", 10); return err }},
			{"after not ASCII", ErrInvalid, func() error { _, err := st.List(ctx, "alice", "é", 10); return err }},
			{"after too long", ErrInvalid, func() error { _, err := st.List(ctx, "alice", strings.Repeat("a", 257), 10); return err }},
			{"empty title", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.Title = "" })); return err }},
			{"title with control", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.Title = "a\x00" })); return err }},
			{"bad MIME type", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.MIMEType = "text" })); return err }},
			{"MIME parameters", ErrInvalid, func() error {
				_, err := st.Create(ctx, with(func(d *NewDocument) { d.MIMEType = "text/plain; charset=utf-8" }))
				return err
			}},
			{"body with NUL", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.Body = "a\x00b" })); return err }},
			{"bad id", ErrInvalid, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.ID = "a/b" })); return err }},
			{"expired at birth", ErrInvalid, func() error {
				_, err := st.Create(ctx, with(func(d *NewDocument) { d.ExpiresAt = time.Now().Add(-time.Second) }))
				return err
			}},
			{"duplicate id", ErrExists, func() error { _, err := st.Create(ctx, with(func(d *NewDocument) { d.ID = doc.ID })); return err }},
			// Ids that cannot exist are simply not found.
			{"read malformed id", ErrNotFound, func() error { _, err := st.Read(ctx, "alice", "../x"); return err }},
			{"read empty id", ErrNotFound, func() error { _, err := st.Read(ctx, "alice", ""); return err }},
			{"read unknown id", ErrNotFound, func() error { _, err := st.Read(ctx, "alice", "nope"); return err }},
			{"delete unknown id", ErrNotFound, func() error { return st.Delete(ctx, "alice", "nope") }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assert.ErrorIs(t, tc.call(), tc.err)
			})
		}
		assert.Len(t, walk(t, st, "alice", 10), 1, "nothing was created")
	})
}

func TestContextCancellation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		doc := create(t, st, "alice", "x")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for name, call := range map[string]func() error{
			"list": func() error { _, err := st.List(ctx, "alice", "", 10); return err },
			"read": func() error { _, err := st.Read(ctx, "alice", doc.ID); return err },
			"create": func() error {
				_, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "y", MIMEType: "text/plain"})
				return err
			},
			"delete":  func() error { return st.Delete(ctx, "alice", doc.ID) },
			"share":   func() error { return st.Share(ctx, "alice", doc.ID, "bob") },
			"unshare": func() error { return st.Unshare(ctx, "alice", doc.ID, "bob") },
			"update":  func() error { return st.Update(ctx, "alice", doc.ID, "y") },
			"readers": func() error { _, err := st.Readers(ctx, "alice", doc.ID); return err },
			"migrate": func() error { return st.Migrate(ctx) },
		} {
			assert.ErrorIs(t, call(), context.Canceled, name)
		}

		// A long statement stops when its deadline passes mid-way, and its
		// transaction leaves nothing behind.
		assert.ErrorIs(t, SeedMany(ctx, st, "mallory", 10), context.Canceled, "seed many")
		docs := malloryDocs()
		ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := st.(bulkCreator).createMany(ctx, docs)
		t.Logf("bulk insert of %d rows stopped after %v", len(docs), time.Since(start))
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Empty(t, walk(t, st, "mallory", 10))

		// The store still works afterwards.
		assert.Equal(t, []string{doc.ID}, ids(walk(t, st, "alice", 10)))
	})
}

// malloryDocs are many prepared documents for a bulk insert that is
// cancelled midway; made once, they take a while under -race.
var malloryDocs = sync.OnceValue(func() []Document {
	docs := make([]Document, 150_000)
	now := time.Now()
	for i := range docs {
		docs[i], _ = prepare(seedDoc("mallory", i), now.Add(time.Duration(i)*time.Microsecond))
	}
	return docs
})

func TestSeed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		require.NoError(t, Seed(ctx, st))
		require.NoError(t, Seed(ctx, st), "again: nothing added")
		for subject, n := range map[string]int{"alice": 12, "bob": 3, "carol": 2, "dave": 0} {
			assert.Len(t, walk(t, st, subject, 5), n, subject)
		}

		require.NoError(t, SeedMany(ctx, st, "erin", 1000))
		got := walk(t, st, "erin", 100)
		require.Len(t, got, 1000)
		for i, e := range got {
			require.Equal(t, fmt.Sprintf("erin's document %06d", i), e.Title, "order keys follow numbers")
		}
		assert.ErrorIs(t, SeedMany(ctx, st, "", 1), ErrInvalid)
	})
}

func TestMigrateIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		d := create(t, st, "alice", "survives")
		require.NoError(t, st.Migrate(ctx))
		require.NoError(t, st.Migrate(ctx))
		assert.Equal(t, []string{d.ID}, ids(walk(t, st, "alice", 10)))
	})
}

func TestReopenSQLiteFile(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + t.TempDir() + "/docs.db"
	st, err := Open(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, Seed(ctx, st))
	require.NoError(t, st.Close())

	st, err = Open(ctx, dsn)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, Seed(ctx, st))
	assert.Len(t, walk(t, st, "alice", 50), 12)
}

func TestMemorySQLite(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, "sqlite::memory:")
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, Seed(ctx, st))
	// Concurrent use of the single connection.
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := st.List(ctx, "alice", "", 5)
			errs <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-errs)
	}
	assert.Len(t, walk(t, st, "alice", 5), 12)
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{
		"", "mysql://u:hunter2@h/db", "sqlite:", "sqlite:file:x.db", "sqlite:/tmp/x.db?_pragma=foo",
		"postgres://u:hunter2@127.0.0.1:1/db?sslmode=bogus",
	} {
		_, err := Open(ctx, dsn)
		if assert.ErrorIs(t, err, ErrInvalid, dsn) {
			assert.NotContains(t, err.Error(), "hunter2", "the password never appears in an error")
		}
	}
	// A server that is not there fails at open, not at the first query.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := Open(ctx, "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
}

// Subjects are bounded in UTF-16 code units, as authn and the inventory
// count them, not in bytes: a valid subject in any script is served, up to
// 256 code units.
func TestSubjectLengthInUTF16(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := b.open(t, Options{})
		for _, subject := range []string{
			strings.Repeat("д", 200),             // 400 bytes: refused when bytes were counted
			strings.Repeat("文", MaxSubjectLen),   // 768 bytes, the longest in bytes
			strings.Repeat("😀", MaxSubjectLen/2), // 128 runes, 256 code units
		} {
			d := create(t, st, subject, "title")
			got := walk(t, st, subject, 10)
			if assert.Len(t, got, 1, "%d bytes", len(subject)) {
				assert.Equal(t, d.ID, got[0].ID)
			}
			doc, err := st.Read(ctx, subject, d.ID)
			require.NoError(t, err)
			assert.Equal(t, subject, doc.Owner)
		}
	})
}

// Titles longer than a listed name may be are stored whole (listings clip
// them, see the documents app).
func TestLongTitles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := b.open(t, Options{})
		for _, title := range []string{strings.Repeat("文", 600), strings.Repeat("😀", 1000)} {
			d := create(t, st, "alice", title)
			doc, err := st.Read(ctx, "alice", d.ID)
			require.NoError(t, err)
			assert.Equal(t, title, doc.Title)
		}
		got := walk(t, st, "alice", 10)
		require.Len(t, got, 2)
		assert.Equal(t, strings.Repeat("😀", 1000), got[1].Title)
	})
}

package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// IDsWithPrefix suggests exactly the ids of the documents the subject may
// see that start with the prefix, in byte order, and nothing of anybody
// else's.
func TestIDsWithPrefix(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		mk := func(owner, id string, expires time.Time) {
			t.Helper()
			_, err := st.Create(ctx, NewDocument{ID: id, Owner: owner, Title: id, MIMEType: "text/plain", ExpiresAt: expires})
			require.NoError(t, err)
		}
		for _, id := range []string{"ab", "a_b", "aB", "a-b", "abc", "abd", "ab-", "ab_", "abz", "b", "A", "z9"} {
			mk("alice", id, time.Time{})
		}
		mk("bob", "abbob", time.Time{})    // bob's own: never alice's
		mk("bob", "abshared", time.Time{}) // shared with alice below
		require.NoError(t, st.Share(ctx, "bob", "abshared", "alice"))
		mk("alice", "abdeleted", time.Time{})
		require.NoError(t, st.Delete(ctx, "alice", "abdeleted"))
		mk("alice", "abexpired", clk.Now().Add(time.Minute))
		clk.Advance(2 * time.Minute)

		for _, tc := range []struct {
			prefix string
			limit  int
			want   []string
		}{
			{"ab", 100, []string{"ab", "ab-", "ab_", "abc", "abd", "abshared", "abz"}},
			{"ab", 3, []string{"ab", "ab-", "ab_"}},
			{"abc", 100, []string{"abc"}},                                                                 // a full id
			{"a", 100, []string{"a-b", "aB", "a_b", "ab", "ab-", "ab_", "abc", "abd", "abshared", "abz"}}, // byte order
			{"", 4, []string{"A", "a-b", "aB", "a_b"}},
			{"abx", 100, []string{}},
			{"ab%", 100, []string{}},                             // attack: a LIKE wildcard is not one here
			{"_", 100, []string{}},                               // attack: nor is LIKE's "_" (no id of alice's starts with it)
			{"ab' OR '1'='1", 100, []string{}},                   // attack: SQL in the prefix
			{"ab{", 100, []string{}},                             // attack: the range's upper bound itself
			{"абв", 100, []string{}},                             // not an id character
			{strings.Repeat("a", MaxIDBytes+1), 100, []string{}}, // longer than any id
		} {
			got, err := st.IDsWithPrefix(ctx, "alice", tc.prefix, tc.limit)
			require.NoError(t, err, tc.prefix)
			assert.Equal(t, tc.want, got, "prefix %q", tc.prefix)
		}
		got, err := st.IDsWithPrefix(ctx, "bob", "ab", 100)
		require.NoError(t, err)
		assert.Equal(t, []string{"abbob", "abshared"}, got)

		// Arguments are checked before any query.
		for _, bad := range []struct {
			subject string
			limit   int
		}{{"", 10}, {"alice", 0}, {"alice", MaxListLimit + 1}} {
			_, err := st.IDsWithPrefix(ctx, bad.subject, "a", bad.limit)
			assert.ErrorIs(t, err, ErrInvalid, "%+v", bad)
		}
	})
}

// With 10,000 documents, the full id of the newest (the last to list) is
// suggested, and a one-character prefix stops at the limit.
func TestIDsWithPrefixManyDocuments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := b.open(t, Options{})
		require.NoError(t, SeedMany(ctx, st, "alice", 10_000))
		require.NoError(t, SeedMany(ctx, st, "bob", 1_000))
		all := walk(t, st, "alice", MaxListLimit)
		require.Len(t, all, 10_000)
		last := all[len(all)-1].ID

		got, err := st.IDsWithPrefix(ctx, "alice", last, 101)
		require.NoError(t, err)
		assert.Equal(t, []string{last}, got)
		got, err = st.IDsWithPrefix(ctx, "alice", last[:1], 101)
		require.NoError(t, err)
		assert.Len(t, got, 101, "10,000 random ids: far more than 101 start with any character")
		for _, id := range got {
			assert.True(t, strings.HasPrefix(id, last[:1]))
		}
	})
}

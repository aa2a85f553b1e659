package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Update replaces the body of the owner's document, visible at once to
// every reader; nobody else can update it, grantees included, and nothing
// else of the document changes.
func TestUpdate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		ctx := context.Background()
		doc := create(t, st, "alice", "plan")
		clk.Advance(time.Millisecond)
		other := create(t, st, "alice", "untouched")
		require.NoError(t, st.Share(ctx, "alice", doc.ID, "bob"))

		clk.Advance(time.Minute)
		require.NoError(t, st.Update(ctx, "alice", doc.ID, "new body ✓"))
		for _, who := range []string{"alice", "bob"} {
			got, err := st.Read(ctx, who, doc.ID)
			require.NoError(t, err, who)
			want := doc
			want.Body = "new body ✓"
			assert.Equal(t, want, got, "%s sees the new body; title, key and times stay", who)
		}
		got, err := st.Read(ctx, "alice", other.ID)
		require.NoError(t, err)
		assert.Equal(t, other, got, "only the named document changes")
		require.NoError(t, st.Update(ctx, "alice", doc.ID, ""), "an empty body is a body")
		require.NoError(t, st.Update(ctx, "alice", doc.ID, "new body ✓"), "the same body again")
		assert.Equal(t, []string{doc.ID, other.ID}, ids(walk(t, st, "alice", 10)), "the listing order stays")

		for _, tc := range []struct {
			name, owner, id, body string
			err                   error
		}{
			{"grantee", "bob", doc.ID, "x", ErrNotFound},
			{"stranger", "carol", doc.ID, "x", ErrNotFound},
			{"unknown id", "alice", "doesNotExist", "x", ErrNotFound},
			{"malformed id", "alice", "../" + doc.ID, "x", ErrNotFound},
			{"empty id", "alice", "", "x", ErrNotFound},
			{"empty owner", "", doc.ID, "x", ErrInvalid},
			{"owner with control", "ali\nce", doc.ID, "x", ErrInvalid},
			{"NUL in body", "alice", doc.ID, "a\x00b", ErrInvalid},
			{"invalid UTF-8", "alice", doc.ID, "a\xffb", ErrInvalid},
			{"body too large", "alice", doc.ID, strings.Repeat("x", MaxBodyBytes+1), ErrInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assert.ErrorIs(t, st.Update(ctx, tc.owner, tc.id, tc.body), tc.err)
			})
		}
		got, err = st.Read(ctx, "bob", doc.ID)
		require.NoError(t, err)
		assert.Equal(t, "new body ✓", got.Body, "failed updates changed nothing")

		require.NoError(t, st.Update(ctx, "alice", doc.ID, strings.Repeat("é", MaxBodyBytes/2)), "the largest body")

		// Deleted and expired documents cannot be updated.
		require.NoError(t, st.Delete(ctx, "alice", other.ID))
		assert.ErrorIs(t, st.Update(ctx, "alice", other.ID, "x"), ErrNotFound, "deleted")
		expiring, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "e", MIMEType: "text/plain", ExpiresAt: clk.Now().Add(time.Hour)})
		require.NoError(t, err)
		require.NoError(t, st.Update(ctx, "alice", expiring.ID, "before expiry"))
		clk.Advance(time.Hour)
		assert.ErrorIs(t, st.Update(ctx, "alice", expiring.ID, "x"), ErrNotFound, "expired")
	})
}

// Readers names the owner and every grantee, follows shares and unshares,
// and answers only the owner.
func TestReaders(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, Options{Now: clk.Now})
		ctx := context.Background()
		doc := create(t, st, "alice", "shared")
		other := create(t, st, "alice", "private")
		bobs := create(t, st, "bob", "bob's")

		got, err := st.Readers(ctx, "alice", doc.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"alice"}, got, "the owner alone")

		// Byte order: "Carol" < "alice" < "bob" < "carol".
		for _, g := range []string{"carol", "bob", "Carol"} {
			require.NoError(t, st.Share(ctx, "alice", doc.ID, g))
		}
		require.NoError(t, st.Share(ctx, "alice", other.ID, "dave"))
		require.NoError(t, st.Share(ctx, "bob", bobs.ID, "alice"))
		got, err = st.Readers(ctx, "alice", doc.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"Carol", "alice", "bob", "carol"}, got)

		require.NoError(t, st.Unshare(ctx, "alice", doc.ID, "bob"))
		got, err = st.Readers(ctx, "alice", doc.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"Carol", "alice", "carol"}, got)

		got, err = st.Readers(ctx, "bob", bobs.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"alice", "bob"}, got, "alice reads bob's document but does not own it")

		for _, tc := range []struct {
			name, owner, id string
			err             error
		}{
			{"grantee", "carol", doc.ID, ErrNotFound},
			{"stranger", "mallory", doc.ID, ErrNotFound},
			{"grantee of another document", "alice", bobs.ID, ErrNotFound},
			{"unknown id", "alice", "doesNotExist", ErrNotFound},
			{"malformed id", "alice", "a/b", ErrNotFound},
			{"empty owner", "", doc.ID, ErrInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := st.Readers(ctx, tc.owner, tc.id)
				assert.ErrorIs(t, err, tc.err)
				assert.Nil(t, got)
			})
		}

		require.NoError(t, st.Delete(ctx, "alice", other.ID))
		_, err = st.Readers(ctx, "alice", other.ID)
		assert.ErrorIs(t, err, ErrNotFound, "deleted")
		expiring, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "e", MIMEType: "text/plain", ExpiresAt: clk.Now().Add(time.Hour)})
		require.NoError(t, err)
		require.NoError(t, st.Share(ctx, "alice", expiring.ID, "bob"))
		got, err = st.Readers(ctx, "alice", expiring.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"alice", "bob"}, got)
		clk.Advance(time.Hour)
		_, err = st.Readers(ctx, "alice", expiring.ID)
		assert.ErrorIs(t, err, ErrNotFound, "expired")
	})
}

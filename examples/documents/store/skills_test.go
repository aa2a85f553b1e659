package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

func openTestSkills(t *testing.T, b backend) SkillStore {
	t.Helper()
	db := b.open(t, Options{})
	st, err := OpenSkills(context.Background(), db)
	require.NoError(t, err)
	// Migrating again changes nothing.
	_, err = OpenSkills(context.Background(), db)
	require.NoError(t, err)
	return st
}

func TestSkillStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := openTestSkills(t, b)
		require.NoError(t, SeedSkills(ctx, st, func(s string) string { return s }))
		require.NoError(t, SeedSkills(ctx, st, func(s string) string { return s }), "seeding twice adds nothing")

		alice, err := st.ListSkills(ctx, "alice", "", 10)
		require.NoError(t, err)
		var names []string
		for _, s := range alice {
			names = append(names, s.Name)
		}
		assert.ElementsMatch(t, []string{"release-notes", "meeting-minutes", "team-glossary"}, names)
		bob, err := st.ListSkills(ctx, "bob", "", 10)
		require.NoError(t, err)
		assert.Len(t, bob, 2)
		carol, err := st.ListSkills(ctx, "carol", "", 10)
		require.NoError(t, err)
		assert.Empty(t, carol)

		// Keyset: page by page, in key order, each once.
		var walked []string
		after := ""
		for {
			page, err := st.ListSkills(ctx, "alice", after, 1)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			walked = append(walked, page[0].Name)
			after = page[0].OrderKey
		}
		assert.Equal(t, names, walked)

		// Files: digests and sizes of the stored bytes; SKILL.md's
		// frontmatter is the entry's.
		for _, s := range alice {
			require.NotEmpty(t, s.Files)
			for _, f := range s.Files {
				name, mime, body, err := st.ReadSkillFile(ctx, "alice", s.ID, f.Path)
				require.NoError(t, err)
				assert.Equal(t, s.Name, name)
				assert.Equal(t, f.MIMEType, mime)
				assert.Equal(t, f.Size, int64(len(body)))
				assert.Equal(t, f.Digest, skills.Digest(body))
			}
			_, _, manifest, err := st.ReadSkillFile(ctx, "alice", s.ID, "SKILL.md")
			require.NoError(t, err)
			assert.Contains(t, string(manifest), "---\nname: "+s.Name+"\n")
			got, err := st.GetSkill(ctx, "alice", s.ID)
			require.NoError(t, err)
			assert.Equal(t, s, got)
		}

		// Another subject's skill is not found, exactly like none.
		var bobsOwn Skill
		for _, s := range bob {
			if s.Name == "incident-review" {
				bobsOwn = s
			}
		}
		_, err = st.GetSkill(ctx, "alice", bobsOwn.ID)
		assert.ErrorIs(t, err, ErrNotFound)
		_, _, _, err = st.ReadSkillFile(ctx, "alice", bobsOwn.ID, "SKILL.md")
		assert.ErrorIs(t, err, ErrNotFound)
		_, err = st.GetSkill(ctx, "alice", "AAAAAAAAAAAAAAAAAAAAAA")
		assert.ErrorIs(t, err, ErrNotFound)

		// Only the owner shares; sharing twice is fine.
		assert.ErrorIs(t, st.ShareSkill(ctx, "alice", bobsOwn.ID, "carol"), ErrNotFound)
		require.NoError(t, st.ShareSkill(ctx, "bob", bobsOwn.ID, "carol"))
		require.NoError(t, st.ShareSkill(ctx, "bob", bobsOwn.ID, "carol"))
		carol, err = st.ListSkills(ctx, "carol", "", 10)
		require.NoError(t, err)
		require.Len(t, carol, 1)
		assert.Equal(t, "incident-review", carol[0].Name)

		// Only the owner unshares (issue 35); then carol neither lists,
		// gets nor reads it; unsharing again is fine; the owner's own
		// access stays.
		assert.ErrorIs(t, st.UnshareSkill(ctx, "alice", bobsOwn.ID, "carol"), ErrNotFound)
		assert.ErrorIs(t, st.UnshareSkill(ctx, "bob", bobsOwn.ID, "bob"), ErrInvalid)
		require.NoError(t, st.UnshareSkill(ctx, "bob", bobsOwn.ID, "carol"))
		require.NoError(t, st.UnshareSkill(ctx, "bob", bobsOwn.ID, "carol"))
		carol, err = st.ListSkills(ctx, "carol", "", 10)
		require.NoError(t, err)
		assert.Empty(t, carol)
		_, err = st.GetSkill(ctx, "carol", bobsOwn.ID)
		assert.ErrorIs(t, err, ErrNotFound)
		_, _, _, err = st.ReadSkillFile(ctx, "carol", bobsOwn.ID, "SKILL.md")
		assert.ErrorIs(t, err, ErrNotFound)
		_, err = st.GetSkill(ctx, "bob", bobsOwn.ID)
		assert.NoError(t, err)

		// Never a query without a subject.
		_, err = st.ListSkills(ctx, "", "", 10)
		assert.ErrorIs(t, err, ErrInvalid)
	})
}

func TestCreateSkillRefuses(t *testing.T) {
	st := openTestSkills(t, backend{"sqlite", openTestSQLite})
	ctx := context.Background()
	ok := NewSkill{Owner: "alice", Name: "ok", Description: "d"}
	for name, ns := range map[string]NewSkill{
		"no owner":       {Name: "ok", Description: "d"},
		"bad name":       {Owner: "alice", Name: "Bad_Name", Description: "d"},
		"no description": {Owner: "alice", Name: "ok"},
		"a control char": {Owner: "alice", Name: "ok", Description: "a\nb"},
		"dot-dot path":   {Owner: "alice", Name: "ok", Description: "d", Files: []NewSkillFile{{Path: "../x", MIMEType: "text/plain"}}},
		"SKILL.md twice": {Owner: "alice", Name: "ok", Description: "d", Files: []NewSkillFile{{Path: "SKILL.md", MIMEType: "text/plain"}}},
		"bad MIME type":  {Owner: "alice", Name: "ok", Description: "d", Files: []NewSkillFile{{Path: "x", MIMEType: "text"}}},
		"too many files": {Owner: "alice", Name: "ok", Description: "d", Files: manyFiles(MaxSkillFiles)},
		"trailing slash": {Owner: "alice", Name: "ok", Description: "d", Files: []NewSkillFile{{Path: "dir/", MIMEType: "text/plain"}}},
	} {
		_, err := st.CreateSkill(ctx, ns)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
	_, err := st.CreateSkill(ctx, ok)
	assert.NoError(t, err)
}

func manyFiles(n int) []NewSkillFile {
	out := make([]NewSkillFile, n)
	for i := range out {
		out[i] = NewSkillFile{Path: fmt.Sprintf("f%d", i), MIMEType: "text/plain"}
	}
	return out
}

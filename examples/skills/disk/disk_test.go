package disk_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/skills/disk"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/skills/skillstest"
	"github.com/mcpkit/mcpkit/principal"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func manifest(name string) string {
	return "---\nname: " + name + "\ndescription: What " + name + " does.\n---\n# " + name + "\n"
}

// open builds the inventory and catalog of dir's skills.
func open(t *testing.T, dir string) (*inventory.Inventory, *disk.Skills) {
	t.Helper()
	folder, err := disk.Open(dir, nil)
	require.NoError(t, err)
	t.Cleanup(func() { folder.Close() })
	inv, err := inventory.New(nil, []inventory.Template{folder.Template()}, inventory.Options{})
	require.NoError(t, err)
	return inv, folder
}

// The sample folder passes the contract checker for each user: every page
// at every page size, every file read back against its entry.
func TestSampleContract(t *testing.T) {
	inv, folder := open(t, filepath.Join("..", "sample"))
	for _, user := range []string{"alice", "bob", "nobody"} {
		skillstest.CheckSource(t, inv, folder.Source(), principal.Principal{Subject: user})
	}
}

// Nothing leads out of the caller's folder: not "..", not a symbolic link
// to another user's skill or file, not a caller key that is a path.
func TestConfinedToTheCallersFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "alice", "mine", "SKILL.md"), manifest("mine"))
	write(t, filepath.Join(dir, "bob", "secret", "SKILL.md"), manifest("secret"))
	write(t, filepath.Join(dir, "bob", "secret", "plan.md"), "bob's plan")
	require.NoError(t, os.Symlink(filepath.Join(dir, "bob", "secret"), filepath.Join(dir, "alice", "secret")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "bob", "secret", "plan.md"), filepath.Join(dir, "alice", "mine", "plan.md")))
	inv, folder := open(t, dir)
	c, err := skills.New(inv, folder.Source(), skills.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	alice := principal.Principal{Subject: "alice"}

	var names []string
	_, err = c.List(ctx, &alice, "", func(s *skills.Skill) bool {
		names = append(names, s.Name())
		assert.Len(t, s.Files, 1, "the linked file is not part of %s", s.Name())
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"mine"}, names, "a linked folder is no skill of alice's")
	_, err = c.Get(ctx, &alice, "skill://secret/SKILL.md")
	assert.ErrorIs(t, err, inventory.ErrNotFound)
	for _, uri := range []string{"skill://mine/plan.md", "skill://secret/plan.md", "skill://mine/../../bob/secret/plan.md", "skill://mine/./SKILL.md"} {
		_, err := inv.Read(ctx, &alice, uri)
		assert.ErrorIs(t, err, inventory.ErrNotFound, uri)
	}
	for _, key := range []string{"../bob", ".", "..", "bob/secret"} {
		p := principal.Principal{Subject: key}
		var n int
		_, err := c.List(ctx, &p, "", func(*skills.Skill) bool { n++; return true })
		require.NoError(t, err)
		assert.Zero(t, n, "subject %q", key)
	}
}

// A folder that is no valid skill is left out of its owner's list (and
// logged), never failing it; pages follow the names, one at a time.
func TestBrokenSkillAndPaging(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "alice", "a-one", "SKILL.md"), manifest("a-one"))
	write(t, filepath.Join(dir, "alice", "b-broken", "SKILL.md"), "no frontmatter\n")
	write(t, filepath.Join(dir, "alice", "c-misnamed", "SKILL.md"), manifest("other"))
	write(t, filepath.Join(dir, "alice", "d-two", "SKILL.md"), manifest("d-two"))
	write(t, filepath.Join(dir, "alice", "Not_A_Name", "SKILL.md"), manifest("x"))
	var log bytes.Buffer // written by the callbacks' goroutines, read after the calls returned
	folder, err := disk.Open(dir, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	defer folder.Close()
	inv, err := inventory.New(nil, []inventory.Template{folder.Template()}, inventory.Options{})
	require.NoError(t, err)
	c, err := skills.New(inv, folder.Source(), skills.Options{PageSize: 1})
	require.NoError(t, err)
	ctx := context.Background()
	alice := principal.Principal{Subject: "alice"}
	var names []string
	cursor := ""
	for range 5 {
		next, err := c.List(ctx, &alice, cursor, func(s *skills.Skill) bool { names = append(names, s.Name()); return true })
		require.NoError(t, err)
		if next == "" {
			break
		}
		cursor = next
	}
	assert.Equal(t, []string{"a-one", "d-two"}, names)
	assert.Contains(t, log.String(), "b-broken")
	assert.Contains(t, log.String(), "c-misnamed")
}

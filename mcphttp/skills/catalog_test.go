package skills_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

func newCatalog(t testing.TB, s *store, opts skills.Options) *skills.Catalog {
	t.Helper()
	c, err := skills.New(s.inventory(t), s.source(), opts)
	require.NoError(t, err)
	return c
}

// walk lists every page of caller's skills and returns their URIs and the
// number of pages.
func walk(t testing.TB, c *skills.Catalog, caller *principal.Principal) ([]string, int) {
	t.Helper()
	var uris []string
	cursor, pages := "", 0
	for {
		next, err := c.List(context.Background(), caller, cursor, func(s *skills.Skill) bool {
			uris = append(uris, s.URI)
			return true
		})
		require.NoError(t, err)
		pages++
		if next == "" {
			return uris, pages
		}
		cursor = next
	}
}

func TestListPagesPerCaller(t *testing.T) {
	s := seeded()
	for i := range 45 {
		s.add("alice", fmt.Sprintf("skill-%03d", i), nil)
	}
	c := newCatalog(t, s, skills.Options{PageSize: 20})
	uris, pages := walk(t, c, &alice)
	assert.Len(t, uris, 47, "alice's skills, each once")
	assert.Equal(t, 3, pages)
	for _, u := range uris {
		assert.NotContains(t, u, "bob", "got bob's skill %s in alice's listing", u)
	}
	uris, pages = walk(t, c, &bob)
	assert.Equal(t, []string{"skill://bob/bob-secrets/SKILL.md"}, uris)
	assert.Equal(t, 1, pages)
}

func TestListNeedsCaller(t *testing.T) {
	c := newCatalog(t, seeded(), skills.Options{})
	_, err := c.List(context.Background(), nil, "", nil)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)
}

// Cursors are bound to the caller and sealed: another caller's, a
// tampered one, one of another method and garbage are all invalid.
func TestListCursorsHostile(t *testing.T) {
	s := seeded()
	for i := range 5 {
		s.add("alice", fmt.Sprintf("skill-%03d", i), nil)
		s.add("bob", fmt.Sprintf("skill-%03d", i), nil)
	}
	c := newCatalog(t, s, skills.Options{PageSize: 2})
	ctx := context.Background()
	next, err := c.List(ctx, &alice, "", nil)
	require.NoError(t, err)
	require.NotEmpty(t, next)
	dirNext, err := c.ReadDir(ctx, &alice, "skill://alice/pdf-processing", "", nil)
	require.NoError(t, err)
	require.NotEmpty(t, dirNext, "a directory of more than two children has a second page")

	tampered := []byte(next)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	cases := []struct {
		name   string
		caller *principal.Principal
		cursor string
	}{
		{"bob replays alice's cursor", &bob, next},
		{"alice with other scopes", &principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"x"}}, next},
		{"a flipped byte", &alice, string(tampered)},
		{"garbage", &alice, "not-a-cursor"},
		{"a directory cursor", &alice, dirNext},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.List(ctx, tc.caller, tc.cursor, nil)
			var ce *inventory.CursorError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, inventory.ReasonInvalid, ce.Reason)
		})
	}
	// And alice's own cursor continues.
	_, err = c.List(ctx, &alice, next, nil)
	assert.NoError(t, err)
	// A list cursor does not open a directory read, nor another directory's.
	_, err = c.ReadDir(ctx, &alice, "skill://alice/pdf-processing", next, nil)
	assert.IsType(t, &inventory.CursorError{}, err)
	_, err = c.ReadDir(ctx, &alice, "skill://alice/pdf-processing/templates", dirNext, nil)
	assert.IsType(t, &inventory.CursorError{}, err)
}

// Another caller's skill looks exactly like one that does not exist.
func TestGetNotFoundAlike(t *testing.T) {
	c := newCatalog(t, seeded(), skills.Options{})
	ctx := context.Background()
	got, err := c.Get(ctx, &alice, "skill://alice/git-workflow/SKILL.md")
	require.NoError(t, err)
	assert.Equal(t, "git-workflow", got.Name())
	for _, uri := range []string{
		"skill://bob/bob-secrets/SKILL.md",       // bob's
		"skill://alice/no-such-skill/SKILL.md",   // nobody's
		"skill://alice/git-workflow",             // a directory, not a SKILL.md
		"skill://alice/pdf-processing/README.md", // not a SKILL.md
		"other://alice/git-workflow/SKILL.md",    // no template serves it
	} {
		_, err := c.Get(ctx, &alice, uri)
		assert.ErrorIs(t, err, inventory.ErrNotFound, uri)
	}
	_, err = c.Get(ctx, nil, "skill://alice/git-workflow/SKILL.md")
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)
}

func TestReadDir(t *testing.T) {
	c := newCatalog(t, seeded(), skills.Options{})
	ctx := context.Background()
	read := func(caller *principal.Principal, uri string) ([]inventory.Item, error) {
		var items []inventory.Item
		_, err := c.ReadDir(ctx, caller, uri, "", func(it *inventory.Item) bool {
			items = append(items, *it)
			return true
		})
		return items, err
	}
	items, err := read(&alice, "skill://alice/pdf-processing")
	require.NoError(t, err)
	var got []string
	for _, it := range items {
		got = append(got, it.Name+" "+it.MIMEType+" "+it.URI)
	}
	assert.Equal(t, []string{
		"SKILL.md text/markdown skill://alice/pdf-processing/SKILL.md",
		"references inode/directory skill://alice/pdf-processing/references",
		"scripts inode/directory skill://alice/pdf-processing/scripts",
		"templates inode/directory skill://alice/pdf-processing/templates",
	}, got)

	items, err = read(&alice, "skill://alice/pdf-processing/templates")
	require.NoError(t, err)
	require.Len(t, items, 2)
	assert.Equal(t, "invoice.md", items[0].Name)
	assert.Equal(t, int64(len("# Invoice\n")), items[0].Size)
	assert.Equal(t, "skill://alice/pdf-processing/templates/regional", items[1].URI, "no trailing slash")

	for _, uri := range []string{
		"skill://alice/pdf-processing/SKILL.md",             // a file
		"skill://alice/pdf-processing/templates/invoice.md", // a file
		"skill://alice/pdf-processing/templates/",           // a trailing slash
		"skill://alice/pdf-processing/nothing",              // nothing
		"skill://bob/bob-secrets",                           // bob's
		"skill://bob/bob-secrets/notes",                     // bob's
	} {
		_, err := read(&alice, uri)
		assert.ErrorIs(t, err, inventory.ErrNotFound, uri)
	}
	_, err = read(&bob, "skill://bob/bob-secrets/notes")
	assert.NoError(t, err, "bob reads his own")
}

// A directory is paged: every child once, in order, with a page size of 1.
func TestReadDirPages(t *testing.T) {
	c := newCatalog(t, seeded(), skills.Options{PageSize: 1})
	var names []string
	cursor := ""
	for range 10 {
		next, err := c.ReadDir(context.Background(), &alice, "skill://alice/pdf-processing", cursor, func(it *inventory.Item) bool {
			names = append(names, it.Name)
			return true
		})
		require.NoError(t, err)
		if next == "" {
			break
		}
		cursor = next
	}
	assert.Equal(t, []string{"SKILL.md", "references", "scripts", "templates"}, names)
}

// A skill that does not fit an empty page is the application's error:
// logged with the rule, a generic internal error for the client, never
// an empty page or an endless loop.
func TestEntryTooLarge(t *testing.T) {
	var logs logBuffer
	c := newCatalog(t, seeded(), skills.Options{Logger: logs.logger()})
	_, err := c.List(context.Background(), &alice, "", func(*skills.Skill) bool { return false })
	assert.Same(t, inventory.ErrInternal, err)
	assert.Contains(t, logs.String(), "rule=entry-too-large")
	assert.NotContains(t, logs.String(), "pdf-processing", "the log names no URI")
}

// Broken callbacks are internal errors with a log record naming the rule.
func TestListContract(t *testing.T) {
	good := seeded().skills["alice"][0]
	cases := []struct {
		name string
		page skills.Page
		rule string
	}{
		{"keys out of order", skills.Page{Skills: []skills.Skill{withKey(good, "b"), withKey(good, "a")}}, "key-order"},
		{"has more without skills", skills.Page{HasMore: true}, "has-more-without-entries"},
		{"a bad digest", skills.Page{Skills: []skills.Skill{withDigest(good, "sha256:XYZ")}}, "skill-digest"},
		{"a MIME type without a subtype", skills.Page{Skills: []skills.Skill{withMIME(good, "text")}}, "skill-mime"},
		{"a MIME type with a malformed parameter", skills.Page{Skills: []skills.Skill{withMIME(good, "text/markdown; charset")}}, "skill-mime"},
		{"name differs from the URI", skills.Page{Skills: []skills.Skill{withFrontmatter(good, `{"name":"other","description":"d"}`)}}, "skill-name"},
		{"frontmatter with a member twice", skills.Page{Skills: []skills.Skill{withFrontmatter(good, `{"name":"git-workflow","name":"x","description":"d"}`)}}, "skill-frontmatter"},
		{"SKILL.md missing from the files", skills.Page{Skills: []skills.Skill{withoutManifest(good)}}, "skill-manifest"},
		{"a file outside the skill", skills.Page{Skills: []skills.Skill{withFile(good, "skill://alice/other/x.md")}}, "skill-file-uri"},
		{"a dot-dot path", skills.Page{Skills: []skills.Skill{withFile(good, good.URI[:len(good.URI)-len("SKILL.md")]+"../x.md")}}, "skill-file-uri"},
		{"a URI the template does not serve", skills.Page{Skills: []skills.Skill{{Key: "k", URI: "other://x/git-workflow/SKILL.md", Frontmatter: good.Frontmatter, Dynamic: true}}}, "skill-template"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			s := seeded()
			src := s.source()
			src.List = func(context.Context, inventory.ListRequest) (skills.Page, error) { return tc.page, nil }
			c, err := skills.New(s.inventory(t), src, skills.Options{Logger: logs.logger()})
			require.NoError(t, err)
			_, err = c.List(context.Background(), &alice, "", nil)
			assert.Same(t, inventory.ErrInternal, err)
			assert.Contains(t, logs.String(), "rule="+tc.rule)
		})
	}
}

func TestCallbackFailures(t *testing.T) {
	s := seeded()
	for name, list := range map[string]skills.ListFunc{
		"error": func(context.Context, inventory.ListRequest) (skills.Page, error) {
			return skills.Page{}, errors.New("db down: secret")
		},
		"panic": func(context.Context, inventory.ListRequest) (skills.Page, error) { panic("boom") },
	} {
		t.Run(name, func(t *testing.T) {
			var logs logBuffer
			src := s.source()
			src.List = list
			c, err := skills.New(s.inventory(t), src, skills.Options{Logger: logs.logger()})
			require.NoError(t, err)
			_, err = c.List(context.Background(), &alice, "", nil)
			assert.Same(t, inventory.ErrInternal, err)
			assert.NotEmpty(t, logs.String())
		})
	}
}

func TestNewRefuses(t *testing.T) {
	s := seeded()
	inv := s.inventory(t)
	public, err := inventory.New(nil, []inventory.Template{{Name: "skill-files", URITemplate: "skill://{+path}", Access: inventory.Public, Read: s.read}}, inventory.Options{})
	require.NoError(t, err)
	cases := map[string]func() (*skills.Catalog, error){
		"nil inventory": func() (*skills.Catalog, error) { return skills.New(nil, s.source(), skills.Options{}) },
		"no List": func() (*skills.Catalog, error) {
			src := s.source()
			src.List = nil
			return skills.New(inv, src, skills.Options{})
		},
		"no Get": func() (*skills.Catalog, error) {
			src := s.source()
			src.Get = nil
			return skills.New(inv, src, skills.Options{})
		},
		"unknown template": func() (*skills.Catalog, error) {
			src := s.source()
			src.Template = "x"
			return skills.New(inv, src, skills.Options{})
		},
		"public template": func() (*skills.Catalog, error) { return skills.New(public, s.source(), skills.Options{}) },
		"page size":       func() (*skills.Catalog, error) { return skills.New(inv, s.source(), skills.Options{PageSize: 101}) },
	}
	for name, mk := range cases {
		c, err := mk()
		assert.Error(t, err, name)
		assert.Nil(t, c, name)
	}
}

func withKey(s skills.Skill, k string) skills.Skill { s.Key = k; return s }

func withDigest(s skills.Skill, d string) skills.Skill {
	s.Files = append([]skills.File(nil), s.Files...)
	s.Files[0].Digest = d
	return s
}

func withMIME(s skills.Skill, m string) skills.Skill {
	s.Files = append([]skills.File(nil), s.Files...)
	s.Files[0].MIMEType = m
	return s
}

func withFrontmatter(s skills.Skill, fm string) skills.Skill { s.Frontmatter = []byte(fm); return s }

func withoutManifest(s skills.Skill) skills.Skill {
	var files []skills.File
	for _, f := range s.Files {
		if f.URI != s.URI {
			files = append(files, f)
		}
	}
	if files == nil {
		files = []skills.File{{URI: s.URI[:len(s.URI)-len("SKILL.md")] + "x.md", Digest: skills.Digest(nil)}}
	}
	s.Files = files
	return s
}

func withFile(s skills.Skill, uri string) skills.Skill {
	s.Files = append(append([]skills.File(nil), s.Files...), skills.File{URI: uri, Digest: skills.Digest(nil)})
	return s
}

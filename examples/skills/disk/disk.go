// Package disk serves each caller's skills (the MCP Skills extension)
// from a folder of their own on disk:
//
//	ROOT/<user>/<skill-name>/SKILL.md
//	ROOT/<user>/<skill-name>/references/FORMS.md
//	...
//
// <user> is the caller's identity key (principal.Principal.Key) when it
// is a safe file name; a caller whose key is not has no skills. A skill's
// URIs are skill://<skill-name>/<path>, relative to the caller: two
// users' skills of one name are two skills, and a URI reads only the
// caller's own folder. Files are read through os.Root, so neither ".."
// nor a symbolic link leads out of the caller's folder.
//
// Entries are built by skills.Build from the files themselves (the
// frontmatter from SKILL.md, digests and sizes) on every listing: fine for
// a folder of small skills; an application with many or large skills
// stores digests and sizes beside its files.
package disk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

// TemplateName is the name of the inventory template whose URIs are the
// skills' files.
const TemplateName = "skill-files"

// Skills is a folder of per-user skill folders.
type Skills struct {
	root *os.Root
	log  *slog.Logger
}

// Open returns the skills under dir. log receives one record per skill
// folder that cannot be served (it is left out of its owner's list);
// nil means slog.Default().
func Open(dir string, log *slog.Logger) (*Skills, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Skills{root: r, log: log}, nil
}

// Close closes the folder.
func (s *Skills) Close() error { return s.root.Close() }

// Template is the protected template of the skills' files, needing
// scopes to read; its Read serves a file of the caller's own folder.
func (s *Skills) Template(scopes ...string) inventory.Template {
	return inventory.Template{Name: TemplateName, URITemplate: "skill://{+path}",
		Description: "The caller's skills' files", RequiredScopes: scopes, Read: s.read}
}

// Source is the skills' source for skills.New, on Template's template.
func (s *Skills) Source() skills.Source {
	return skills.Source{Template: TemplateName, List: s.list, Get: s.get}
}

// userRoot opens the caller's folder; nil (no skills) without a caller,
// when the caller's key is no safe file name, or when the caller has no
// folder.
func (s *Skills) userRoot(p *principal.Principal) *os.Root {
	if p == nil {
		return nil
	}
	key := p.Key()
	if !safeName(key) {
		return nil
	}
	r, err := s.root.OpenRoot(key)
	if err != nil {
		return nil
	}
	return r
}

// safeName: 1–128 of [A-Za-z0-9._@-], not starting with '.'.
func safeName(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._@-", c) >= 0) {
			return false
		}
	}
	return true
}

// list: the caller's skill folders named after After, in name order; a
// folder that is no valid skill is logged and left out.
func (s *Skills) list(ctx context.Context, req inventory.ListRequest) (skills.Page, error) {
	r := s.userRoot(req.Principal)
	if r == nil {
		return skills.Page{}, nil
	}
	defer r.Close()
	entries, err := fs.ReadDir(r.FS(), ".")
	if err != nil {
		return skills.Page{}, err
	}
	var page skills.Page
	for _, e := range entries { // sorted by name
		name := e.Name()
		if !e.IsDir() || name <= req.After || !skills.ValidName(name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return skills.Page{}, err
		}
		if len(page.Skills) == req.Limit {
			page.HasMore = true
			break
		}
		sk, err := build(r, name)
		if err != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, "skills: a skill folder cannot be served", slog.String("skill", name), slog.String("error", err.Error()))
			continue
		}
		page.Skills = append(page.Skills, sk)
	}
	return page, nil
}

// get: the caller's skill req.Name, or ErrNotFound.
func (s *Skills) get(_ context.Context, req skills.GetRequest) (skills.Skill, error) {
	r := s.userRoot(req.Principal)
	if r == nil {
		return skills.Skill{}, inventory.ErrNotFound
	}
	defer r.Close()
	sk, err := build(r, req.Name)
	if err != nil {
		return skills.Skill{}, inventory.ErrNotFound
	}
	return sk, nil
}

// read serves a file of one of the caller's skills.
func (s *Skills) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	p := req.Params["path"]
	name, _, _ := strings.Cut(p, "/")
	if !skills.ValidName(name) || path.Clean(p) != p || strings.HasSuffix(p, "/") {
		return nil, inventory.ErrNotFound
	}
	if req.Principal == nil { // the template is protected: never so
		return nil, inventory.ErrNotFound
	}
	r := s.userRoot(req.Principal)
	if r == nil {
		return nil, inventory.ErrNotFound
	}
	defer r.Close()
	fi, err := r.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > skills.MaxTotalSize {
		return nil, inventory.ErrNotFound
	}
	b, err := r.ReadFile(p)
	if err != nil {
		return nil, inventory.ErrNotFound
	}
	c := inventory.Contents{URI: req.URI, MIMEType: mimeType(p)}
	if utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return []inventory.Contents{c}, nil
}

// build reads the skill folder name of r and builds its entry.
func build(r *os.Root, name string) (skills.Skill, error) {
	var files []skills.SourceFile
	var total int64
	err := fs.WalkDir(r.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() { // a symbolic link or a device: not served
			return nil
		}
		if len(files) == skills.MaxFiles {
			return fmt.Errorf("more than %d files", skills.MaxFiles)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if total += fi.Size(); total > skills.MaxTotalSize {
			return fmt.Errorf("more than %d bytes", skills.MaxTotalSize)
		}
		b, err := r.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, name+"/")
		files = append(files, skills.SourceFile{Path: rel, Content: b, MIMEType: mimeType(rel)})
		return nil
	})
	if err != nil {
		return skills.Skill{}, err
	}
	if !slices.ContainsFunc(files, func(f skills.SourceFile) bool { return f.Path == skills.ManifestName }) {
		return skills.Skill{}, errors.New("no " + skills.ManifestName)
	}
	return skills.Build(name, "skill://"+name, files)
}

// mimeTypes are the media types of the files a skill usually holds, by
// extension (a fixed table: the machine's own would make the listing
// differ between machines).
var mimeTypes = map[string]string{
	".md": "text/markdown", ".txt": "text/plain", ".py": "text/x-python", ".sh": "text/x-shellscript",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".js": "text/javascript", ".ts": "text/plain", ".html": "text/html", ".csv": "text/csv",
	".png": "image/png", ".jpg": "image/jpeg", ".pdf": "application/pdf",
}

// mimeType is a file's media type by its extension; empty when unknown.
func mimeType(p string) string { return mimeTypes[path.Ext(p)] }

package app

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// Skills (the MCP Skills extension): each user's own skills and the ones
// shared with them, from the skill store. A skill's files are resources
// of the skill-files template, skill://<id>/<name>/<path>, read through
// resources/read with the store's access check; the skills part lists
// them per caller (skills/list, skills/get, resources/directory/read).

// SkillFilesTemplateName names the template of skill files.
const SkillFilesTemplateName = "skill-files"

const skillScheme = "skill://"

// SkillFilesTemplate serves the files of the caller's skills: protected,
// owned by the subject, so nobody without one reaches the store.
func SkillFilesTemplate(st store.SkillStore) inventory.Template {
	return inventory.Template{
		Name: SkillFilesTemplateName, Title: "Skill files",
		Description:    "A file of one of your skills (or one shared with you): skill://{id}/{name}/{path}",
		URITemplate:    "skill://{id}/{+path}",
		RequiredScopes: []string{ScopeRead},
		Read:           readSkillFile(st),
	}
}

// readSkillFile returns a file of a skill the caller may see now.
func readSkillFile(st store.SkillStore) inventory.ReadFunc {
	return func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil {
			return nil, inventory.ErrNotFound
		}
		name, path, ok := strings.Cut(req.Params["path"], "/")
		if !ok {
			return nil, inventory.ErrNotFound
		}
		stored, mime, body, err := st.ReadSkillFile(ctx, req.Principal.Key(), req.Params["id"], path)
		switch {
		case errors.Is(err, store.ErrNotFound), err == nil && stored != name:
			return nil, inventory.ErrNotFound // absent and not visible look the same
		case err != nil:
			return nil, err
		}
		if strings.HasPrefix(mime, "text/") && utf8.Valid(body) {
			return []inventory.Contents{{URI: req.URI, MIMEType: mime, Text: string(body)}}, nil
		}
		return []inventory.Contents{{URI: req.URI, MIMEType: mime, Blob: body}}, nil
	}
}

// SkillsSource is the skills part's source over st.
func SkillsSource(st store.SkillStore) skills.Source {
	return skills.Source{
		Template: SkillFilesTemplateName,
		List: func(ctx context.Context, req inventory.ListRequest) (skills.Page, error) {
			rows, more, err := ownedRows(ctx, req, st.ListSkills)
			if err != nil {
				return skills.Page{}, err
			}
			page := skills.Page{HasMore: more, Skills: make([]skills.Skill, len(rows))}
			for i := range rows {
				page.Skills[i] = skillEntry(&rows[i])
			}
			return page, nil
		},
		Get: func(ctx context.Context, req skills.GetRequest) (skills.Skill, error) {
			id, name, ok := parseSkillURI(req.URI)
			if !ok {
				return skills.Skill{}, inventory.ErrNotFound
			}
			row, err := st.GetSkill(ctx, req.Principal.Key(), id)
			switch {
			case errors.Is(err, store.ErrNotFound), err == nil && row.Name != name:
				return skills.Skill{}, inventory.ErrNotFound
			case err != nil:
				return skills.Skill{}, err
			}
			return skillEntry(&row), nil
		},
	}
}

// skillEntry is the extension's entry of a stored skill; the store
// computed the digests and sizes from the bytes it keeps.
func skillEntry(r *store.Skill) skills.Skill {
	dir := skillScheme + r.ID + "/" + r.Name
	s := skills.Skill{Key: r.OrderKey, URI: dir + "/" + skills.ManifestName, Frontmatter: []byte(r.Frontmatter)}
	s.Files = make([]skills.File, len(r.Files))
	for i, f := range r.Files {
		s.Files[i] = skills.File{URI: dir + "/" + f.Path, Digest: f.Digest, Size: f.Size, MIMEType: f.MIMEType}
	}
	return s
}

// parseSkillURI reads skill://<id>/<name>/SKILL.md.
func parseSkillURI(uri string) (id, name string, ok bool) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, "/"+skills.ManifestName)
	if !ok {
		return "", "", false
	}
	id, name, ok = strings.Cut(rest, "/")
	return id, name, ok && !strings.Contains(name, "/")
}

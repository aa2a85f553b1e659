package main

import (
	"context"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// The fixture's skill (the Skills extension's scenarios, sep-2640-*): one
// skill with a subdirectory, so that resources/directory/read has a
// directory child to show.
const skillURI = "skill://pdf-processing/SKILL.md"

var skillFiles = map[string]struct{ mime, text string }{
	skillURI: {"text/markdown", "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF processing\n\nPick the matching template from `templates/`; the form fields are in `references/FORMS.md`.\n"},
	"skill://pdf-processing/references/FORMS.md":              {"text/markdown", "# Form fields\n\nName, address, total.\n"},
	"skill://pdf-processing/templates/invoice.md":             {"text/markdown", "# Invoice\n\n{{customer}} owes {{total}}.\n"},
	"skill://pdf-processing/templates/regional/eu-invoice.md": {"text/markdown", "# EU invoice\n\nVAT included.\n"},
}

// skillStatics lists the SKILL.md as a resource of its own, its name and
// description from the frontmatter (what the manifest scenario compares).
func skillStatics() []inventory.Resource {
	f := skillFiles[skillURI]
	return []inventory.Resource{{
		URI: skillURI, Name: "pdf-processing", Description: "Extract, fill, and assemble PDF documents",
		MIMEType: f.mime, Read: inventory.TextReader(f.mime, f.text),
	}}
}

// skillTemplate serves the skill's other files.
func skillTemplate() inventory.Template {
	return inventory.Template{
		Name: "skill-files", Title: "Skill files", URITemplate: "skill://pdf-processing/{+path}",
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			f, ok := skillFiles[req.URI]
			if !ok {
				return nil, inventory.ErrNotFound
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: f.mime, Text: f.text}}, nil
		},
	}
}

// fixtureSkill is the skill's entry, digests computed from the bytes the
// read handlers serve.
func fixtureSkill() skills.Skill {
	s := skills.Skill{
		Key: "pdf-processing", URI: skillURI,
		Frontmatter: []byte(`{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"}`),
	}
	uris := make([]string, 0, len(skillFiles))
	for u := range skillFiles {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		f := skillFiles[u]
		s.Files = append(s.Files, skills.File{URI: u, Digest: skills.Digest([]byte(f.text)), Size: int64(len(f.text)), MIMEType: f.mime})
	}
	return s
}

// newSkills is the fixture's skills part: the one skill, for every caller
// (the fixture's callers are all its principal).
func newSkills(inv *inventory.Inventory) (*skills.Catalog, error) {
	return skills.New(inv, fixtureSource(), skills.Options{DirectoryRead: true})
}

// fixtureSource lists and gets the one skill.
func fixtureSource() skills.Source {
	skill := fixtureSkill()
	return skills.Source{
		Template: "skill-files",
		List: func(_ context.Context, req inventory.ListRequest) (skills.Page, error) {
			if req.After >= skill.Key {
				return skills.Page{}, nil
			}
			return skills.Page{Skills: []skills.Skill{skill}}, nil
		},
		Get: func(_ context.Context, req skills.GetRequest) (skills.Skill, error) {
			if req.URI != skill.URI || !strings.HasPrefix(req.URI, "skill://") {
				return skills.Skill{}, inventory.ErrNotFound
			}
			return skill, nil
		},
	}
}

// Package skillstest helps applications test the skill sources they give
// to package skills: Check walks a source's listing with the list
// contract's checker (package inventorytest), then gets every listed skill
// and reads every file of it back through the inventory, as a client
// would, and reports entries whose digests, sizes or frontmatter do not
// match the bytes served.
//
//	func TestSkills(t *testing.T) {
//		inv, src := newSkillsInventory(t) // seeded with skills of several owners
//		skillstest.CheckSource(t, inv, src, principal.Principal{Subject: "alice"})
//	}
package skillstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

// CheckSource runs Check and reports every problem, and any error, as a
// test failure.
func CheckSource(t testing.TB, inv *inventory.Inventory, src skills.Source, p principal.Principal) {
	t.Helper()
	problems, err := Check(context.Background(), inv, src, p)
	if err != nil {
		t.Errorf("skillstest: %v", err)
	}
	for _, pr := range problems {
		t.Errorf("skillstest: source %q: %s", src.Template, pr)
	}
}

// Check checks src for principal p and returns the problems found:
//
//   - the listing, walked by inventorytest.Check with page sizes 1, 7, 50
//     and 100 (keys, order, limits, URIs matching the template, no URI
//     twice, walks that agree);
//   - every listed skill against the extension's rules (skills.Validate);
//   - Get of every listed URI answers the same entry;
//   - every file of every skill, read with inv.Read as p, has the entry's
//     size and digest, and SKILL.md's frontmatter name is the entry's.
//
// The error reports what prevents checking (an unknown template, a
// callback error).
func Check(ctx context.Context, inv *inventory.Inventory, src skills.Source, p principal.Principal) ([]string, error) {
	info, ok := inv.Template(src.Template)
	if !ok {
		return nil, fmt.Errorf("the inventory has no template %q", src.Template)
	}
	if src.List == nil || src.Get == nil {
		return nil, errors.New("the source needs List and Get")
	}
	var listed []skills.Skill
	tmpl := inventory.Template{
		Name: info.Name, URITemplate: info.URITemplate,
		List: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			page, err := src.List(ctx, req)
			if err != nil {
				return inventory.Page{}, err
			}
			out := inventory.Page{HasMore: page.HasMore}
			for i := range page.Skills {
				s := &page.Skills[i]
				out.Entries = append(out.Entries, inventory.Entry{Key: s.Key, URI: s.URI, Name: cmpOr(s.Name(), "-")})
				if req.Limit == 100 {
					listed = append(listed, *s)
				}
			}
			return out, nil
		},
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, inventory.ErrNotFound
		},
	}
	vs, err := inventorytest.Check(ctx, tmpl, p, inventorytest.Options{PageSizes: []int{1, 7, 50, 100}})
	var problems []string
	for _, v := range vs {
		problems = append(problems, v.String())
	}
	if err != nil {
		return problems, err
	}
	for i := range listed {
		problems = append(problems, checkSkill(ctx, inv, src, p, &listed[i])...)
	}
	return problems, nil
}

func checkSkill(ctx context.Context, inv *inventory.Inventory, src skills.Source, p principal.Principal, s *skills.Skill) []string {
	var problems []string
	if err := skills.Validate(src.Template, s); err != nil {
		return append(problems, fmt.Sprintf("%s: %v", s.URI, err))
	}
	dir, name, _ := skills.SplitURI(s.URI) // Validate checked it
	got, err := src.Get(ctx, skills.GetRequest{URI: s.URI, Dir: dir, Name: name, Principal: &p})
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s: Get of a listed skill failed: %v", s.URI, err))
	case got.URI != s.URI || !bytes.Equal(got.Frontmatter, s.Frontmatter) || got.Dynamic != s.Dynamic || !slices.Equal(got.Files, s.Files):
		problems = append(problems, fmt.Sprintf("%s: Get answers another entry than the listing", s.URI))
	}
	if s.Dynamic {
		return problems
	}
	for _, f := range s.Files {
		contents, err := inv.Read(ctx, &p, f.URI)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: reading %s: %v", s.URI, f.URI, err))
			continue
		}
		if len(contents) != 1 {
			problems = append(problems, fmt.Sprintf("%s: %s reads as %d contents, want 1", s.URI, f.URI, len(contents)))
			continue
		}
		raw := contents[0].Blob
		if raw == nil {
			raw = []byte(contents[0].Text)
		}
		if int64(len(raw)) != f.Size {
			problems = append(problems, fmt.Sprintf("%s: %s has %d bytes, the entry says %d", s.URI, f.URI, len(raw), f.Size))
		}
		if d := skills.Digest(raw); d != f.Digest {
			problems = append(problems, fmt.Sprintf("%s: %s has digest %s, the entry says %s", s.URI, f.URI, d, f.Digest))
		}
		if f.URI == s.URI {
			if name, ok := frontmatterName(string(raw)); !ok || name != s.Name() {
				problems = append(problems, fmt.Sprintf("%s: SKILL.md's frontmatter name is %q, the entry's %q", s.URI, name, s.Name()))
			}
		}
	}
	return problems
}

// frontmatterName returns the name: line of a SKILL.md's leading
// ----delimited frontmatter (a plain scalar, possibly quoted).
func frontmatterName(text string) (string, bool) {
	text = strings.TrimPrefix(text, "\ufeff")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return "", false
	}
	for line := range strings.SplitSeq(block, "\n") {
		if v, ok := strings.CutPrefix(line, "name:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	return "", false
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package skillstest_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/skills/skillstest"
	"github.com/mcpkit/mcpkit/principal"
)

// Check reads every file of every listed skill back through the
// inventory: here the entry's size and digest were computed from another
// text than the one the read handler serves.
func ExampleCheck() {
	const served = "---\nname: notes\ndescription: Take notes\n---\n"
	stale := "---\nname: notes\ndescription: Take notes\n---\n\n(an older text)\n"
	skill := skills.Skill{
		Key: "notes", URI: "skill://notes/SKILL.md",
		Frontmatter: []byte(`{"name":"notes","description":"Take notes"}`),
		Files:       []skills.File{{URI: "skill://notes/SKILL.md", Digest: skills.Digest([]byte(stale)), Size: int64(len(stale))}},
	}
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}",
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/markdown", Text: served}}, nil
		},
	}}, inventory.Options{})
	if err != nil {
		panic(err)
	}
	src := skills.Source{
		Template: "skill-files",
		List: func(_ context.Context, req inventory.ListRequest) (skills.Page, error) {
			if req.After >= skill.Key {
				return skills.Page{}, nil
			}
			return skills.Page{Skills: []skills.Skill{skill}}, nil
		},
		Get: func(context.Context, skills.GetRequest) (skills.Skill, error) { return skill, nil },
	}
	problems, err := skillstest.Check(context.Background(), inv, src, principal.Principal{Subject: "alice"})
	fmt.Println(err)
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// <nil>
	// skill://notes/SKILL.md: skill://notes/SKILL.md has 44 bytes, the entry says 61
	// skill://notes/SKILL.md: skill://notes/SKILL.md has digest sha256:ad221f203ad5316df262d7b480c2f4f93b5fd72bdcbc909e16c480bf49d4bccb, the entry says sha256:ecfc945d59501a777de320eb115a1e8de7667f510228855b54ef03f8b79d2a8f
}

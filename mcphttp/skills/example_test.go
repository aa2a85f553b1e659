package skills_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

// A skills part over an inventory whose protected template serves the
// skill files. The callbacks here hold one skill for one user; an
// application queries its store with the caller's identity, as a list
// source does.
func Example() {
	const manifest = "---\nname: git-workflow\ndescription: Follow the team's Git conventions\n---\n\n# Git workflow\n"
	skill := skills.Skill{
		Key: "git-workflow", URI: "skill://git-workflow/SKILL.md",
		Frontmatter: []byte(`{"name":"git-workflow","description":"Follow the team's Git conventions"}`),
		Files: []skills.File{{URI: "skill://git-workflow/SKILL.md", Digest: skills.Digest([]byte(manifest)),
			Size: int64(len(manifest)), MIMEType: "text/markdown"}},
	}
	mine := func(p *principal.Principal) bool { return p.Key() == "alice" }
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}",
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			if req.URI != skill.URI || !mine(req.Principal) {
				return nil, inventory.ErrNotFound
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/markdown", Text: manifest}}, nil
		},
	}}, inventory.Options{})
	if err != nil {
		panic(err)
	}
	catalog, err := skills.New(inv, skills.Source{
		Template: "skill-files",
		List: func(_ context.Context, req inventory.ListRequest) (skills.Page, error) {
			if !mine(req.Principal) || req.After >= skill.Key {
				return skills.Page{}, nil
			}
			return skills.Page{Skills: []skills.Skill{skill}}, nil
		},
		Get: func(_ context.Context, req skills.GetRequest) (skills.Skill, error) {
			if req.URI != skill.URI || !mine(req.Principal) {
				return skills.Skill{}, inventory.ErrNotFound
			}
			return skill, nil
		},
	}, skills.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}, catalog)
	if err != nil {
		panic(err)
	}
	// The service's own authentication: here, everyone is alice.
	signedIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, _ := principal.NewContext(r.Context(), principal.Principal{Subject: "alice"})
		ep.ServeHTTP(w, r.WithContext(ctx))
	})
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	signedIn.ServeHTTP(w, r)
	out, _ := io.ReadAll(w.Body)
	fmt.Println(string(out))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"skills":[{"uri":"skill://git-workflow/SKILL.md","frontmatter":{"name":"git-workflow","description":"Follow the team's Git conventions"},"resources":[{"uri":"skill://git-workflow/SKILL.md","digest":"sha256:be6bd38e081b39ad17a46f61f05146e38ff2f7a46a4d8d541e8e586157dafa99","size":90}]}]}}
}

// Digest is what File.Digest holds: computed from the very bytes the read
// handler serves.
func ExampleDigest() {
	fmt.Println(skills.Digest([]byte("hello\n")))
	// Output: sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
}

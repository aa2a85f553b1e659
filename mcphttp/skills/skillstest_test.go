package skills_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/skills/skillstest"
)

func TestCheckerPassesAGoodSource(t *testing.T) {
	s := seeded()
	skillstest.CheckSource(t, s.inventory(t), s.source(), alice)
	skillstest.CheckSource(t, s.inventory(t), s.source(), bob)
}

// Digests and sizes that do not match the bytes resources/read serves,
// and a frontmatter name SKILL.md does not have, are reported.
func TestCheckerFindsMismatches(t *testing.T) {
	cases := map[string]struct {
		tamper func(uri, text string) string
		want   string
	}{
		"a changed byte":   {func(uri, text string) string { return strings.Replace(text, "#", "!", 1) }, "has digest"},
		"an extra byte":    {func(uri, text string) string { return text + "\n" }, "bytes, the entry says"},
		"another SKILL.md": {func(uri, text string) string { return strings.Replace(text, "name: git-workflow", "name: evil", 1) }, "frontmatter name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := seeded()
			s.tamper = tc.tamper
			problems, err := skillstest.Check(context.Background(), s.inventory(t), s.source(), alice)
			require.NoError(t, err)
			require.NotEmpty(t, problems)
			assert.Contains(t, strings.Join(problems, "\n"), tc.want)
		})
	}
}

// A Get that answers another entry than the listing is reported, as is a
// listing that breaks the list contract.
func TestCheckerFindsContractBreaks(t *testing.T) {
	s := seeded()
	src := s.source()
	src.Get = func(ctx context.Context, req skills.GetRequest) (skills.Skill, error) {
		sk, err := s.get(ctx, req)
		sk.Files = sk.Files[:len(sk.Files)-1]
		return sk, err
	}
	problems, err := skillstest.Check(context.Background(), s.inventory(t), src, alice)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(problems, "\n"), "Get answers another entry")

	src = s.source()
	src.List = func(context.Context, inventory.ListRequest) (skills.Page, error) {
		return skills.Page{HasMore: true}, nil
	}
	problems, _ = skillstest.Check(context.Background(), s.inventory(t), src, alice)
	assert.NotEmpty(t, problems)
}

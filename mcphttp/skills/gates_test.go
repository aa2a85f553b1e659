package skills_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

// The source's template decides who may use it, as for templates: its
// gates (opened by a grant) and its scopes hide every skill — an empty
// listing, and skills/get and directory reads answering as for an unknown
// URI — until the caller may read the template.
func TestTemplateGatesAndScopes(t *testing.T) {
	s := seeded()
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}", Read: s.read,
		RequiredScopes: []string{"skills:read"}, Gates: []string{"beta"},
	}}, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}})
	require.NoError(t, err)
	c, err := skills.New(inv, s.source(), skills.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	scoped := principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"skills:read"}}

	count := func(p principal.Principal) int {
		n := 0
		_, err := c.List(ctx, &p, "", func(*skills.Skill) bool { n++; return true })
		require.NoError(t, err)
		return n
	}
	get := func(p principal.Principal) error {
		_, err := c.Get(ctx, &p, "skill://alice/git-workflow/SKILL.md")
		return err
	}
	dir := func(p principal.Principal) error {
		_, err := c.ReadDir(ctx, &p, "skill://alice/pdf-processing", "", nil)
		return err
	}

	// The gate is closed: nothing, even with the scope; without the scope
	// nothing either (no challenge: the scope would not help).
	assert.Zero(t, count(scoped))
	assert.Zero(t, count(alice))
	assert.ErrorIs(t, get(scoped), inventory.ErrNotFound)
	assert.ErrorIs(t, dir(scoped), inventory.ErrNotFound)

	_, err = inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	assert.Equal(t, 2, count(scoped), "the grant opens alice's skills")
	assert.NoError(t, get(scoped))
	assert.NoError(t, dir(scoped))

	// Without the template's scope: a step-up challenge naming it, once
	// the scope would help (issue 39: it was an empty 200); skills/get and
	// directory reads still answer as for an unknown URI.
	_, err = c.List(ctx, &alice, "", nil)
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"skills:read"}, se.Required)
	assert.ErrorIs(t, get(alice), inventory.ErrNotFound)
	assert.ErrorIs(t, dir(alice), inventory.ErrNotFound)

	_, err = inv.Revoke(ctx, "alice", "beta")
	require.NoError(t, err)
	assert.Zero(t, count(scoped), "revoked")
	assert.Zero(t, count(alice), "revoked: the scope would not help, no challenge")
}

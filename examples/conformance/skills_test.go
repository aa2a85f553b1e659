package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/skills/skillstest"
)

// The fixture's skill entry matches the bytes its files read as: the
// digests and sizes the conformance suite's hosts verify.
func TestFixtureSkill(t *testing.T) {
	inv, err := newInventory(false)
	require.NoError(t, err)
	cat, err := newSkills(inv)
	require.NoError(t, err)
	require.True(t, cat.DirectoryRead())
	src := fixtureSource()
	skillstest.CheckSource(t, inv, src, fixturePrincipal)
}

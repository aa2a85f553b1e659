package inventory_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
)

func TestGatesNewRejects(t *testing.T) {
	gate := func(names ...string) []inventory.Gate {
		var out []inventory.Gate
		for _, n := range names {
			out = append(out, inventory.Gate{Name: n})
		}
		return out
	}
	res := func(gates ...string) []inventory.Resource {
		return []inventory.Resource{{URI: "a://b", Name: "b", Access: inventory.Public, Gates: gates, Read: readEcho}}
	}
	tmpl := func(gates ...string) []inventory.Template {
		return []inventory.Template{{Name: "t", URITemplate: "t://{id}", Access: inventory.Public, Gates: gates, Read: readEcho}}
	}
	for _, tc := range []struct {
		name      string
		resources []inventory.Resource
		templates []inventory.Template
		opts      inventory.Options
	}{
		{"empty gate name", nil, nil, inventory.Options{Gates: gate("")}},
		{"gate name with space", nil, nil, inventory.Options{Gates: gate("a b")}},
		{"gate name with quote", nil, nil, inventory.Options{Gates: gate(`a"b`)}},
		{"gate name with backslash", nil, nil, inventory.Options{Gates: gate(`a\b`)}},
		{"gate name beyond ASCII", nil, nil, inventory.Options{Gates: gate("café")}},
		{"gate name too long", nil, nil, inventory.Options{Gates: gate(string(slices.Repeat([]byte{'g'}, 129)))}},
		{"duplicate gate", nil, nil, inventory.Options{Gates: gate("g", "h", "g")}},
		{"unknown global gate", nil, nil, inventory.Options{Gates: gate("g"), GlobalGates: []string{"h"}}},
		{"global gate twice", nil, nil, inventory.Options{Gates: gate("g"), GlobalGates: []string{"g", "g"}}},
		{"global gate without definitions", nil, nil, inventory.Options{GlobalGates: []string{"g"}}},
		{"unknown static gate", res("h"), nil, inventory.Options{Gates: gate("g")}},
		{"static gate twice", res("g", "g"), nil, inventory.Options{Gates: gate("g")}},
		{"static gate without definitions", res("g"), nil, inventory.Options{}},
		{"unknown template gate", nil, tmpl("h"), inventory.Options{Gates: gate("g")}},
		{"template gate twice", nil, tmpl("g", "g"), inventory.Options{Gates: gate("g")}},
		{"template name equal to a static URI", res(), []inventory.Template{{Name: "a://b", URITemplate: "t://{id}", Access: inventory.Public, Read: readEcho}}, inventory.Options{Gates: gate("g")}},
		{"template name equal to a static URI, store only", res(), []inventory.Template{{Name: "a://b", URITemplate: "t://{id}", Access: inventory.Public, Read: readEcho}}, inventory.Options{Grants: grants.NewMemory()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := inventory.New(tc.resources, tc.templates, tc.opts)
			require.Error(t, err)
			assert.Nil(t, inv)
			assert.Regexp(t, "^inventory: ", err.Error())
		})
	}
	// Allowed: a gate both global and attached; a template named like a
	// static URI when there are no grants at all.
	_, err := inventory.New(res("g"), tmpl("g"), inventory.Options{Gates: gate("g"), GlobalGates: []string{"g"}})
	assert.NoError(t, err)
	_, err = inventory.New(res(), []inventory.Template{{Name: "a://b", URITemplate: "t://{id}", Access: inventory.Public, Read: readEcho}}, inventory.Options{})
	assert.NoError(t, err)
}

func TestPolicyHelpers(t *testing.T) {
	ctx := context.Background()
	yes := func(context.Context, *principal.Principal) bool { return true }
	no := func(context.Context, *principal.Principal) bool { return false }
	p := &principal.Principal{Subject: "alice", Scopes: []string{"a", "b"}}
	for _, tc := range []struct {
		name   string
		policy inventory.Policy
		caller *principal.Principal
		want   bool
	}{
		{"AllOf yes yes", inventory.AllOf(yes, yes), p, true},
		{"AllOf yes no", inventory.AllOf(yes, no), p, false},
		{"AllOf nil", inventory.AllOf(yes, nil), p, false},
		{"AllOf empty fails closed", inventory.AllOf(), p, false},
		{"AnyOf no yes", inventory.AnyOf(no, yes), p, true},
		{"AnyOf no no", inventory.AnyOf(no, no), p, false},
		{"AnyOf nil", inventory.AnyOf(nil), p, false},
		{"AnyOf empty", inventory.AnyOf(), p, false},
		{"Not no", inventory.Not(no), p, true},
		{"Not yes", inventory.Not(yes), p, false},
		{"Not nil fails closed", inventory.Not(nil), p, false},
		{"Authenticated", inventory.Authenticated, p, true},
		{"Authenticated anonymous", inventory.Authenticated, nil, false},
		{"Not Authenticated anonymous", inventory.Not(inventory.Authenticated), nil, true},
		{"HasScopes all", inventory.HasScopes("b", "a"), p, true},
		{"HasScopes missing", inventory.HasScopes("a", "c"), p, false},
		{"HasScopes anonymous", inventory.HasScopes(), nil, false},
		{"HasScopes none", inventory.HasScopes(), p, true},
		{"Subjects in", inventory.Subjects("bob", "alice"), p, true},
		{"Subjects out", inventory.Subjects("bob"), p, false},
		{"Subjects anonymous", inventory.Subjects("alice"), nil, false},
		{"Subjects empty subject", inventory.Subjects(""), &principal.Principal{}, false},
		{"composed", inventory.AllOf(inventory.Authenticated, inventory.AnyOf(inventory.Subjects("bob"), inventory.HasScopes("b"))), p, true},
	} {
		assert.Equal(t, tc.want, tc.policy(ctx, tc.caller), tc.name)
	}
	// The helpers copy their arguments.
	scopes := []string{"a"}
	hs := inventory.HasScopes(scopes...)
	scopes[0] = "z"
	assert.True(t, hs(ctx, p))
}

func TestMemoryGrants(t *testing.T) {
	ctx := context.Background()
	m := grants.NewMemory()
	g, err := m.Grants(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, grants.Grants{}, g)

	for _, tc := range []struct {
		c       grants.Change
		changed bool
	}{
		{grants.Change{Op: grants.OpAuthorize, Name: "b"}, true},
		{grants.Change{Op: grants.OpAuthorize, Name: "a"}, true},
		{grants.Change{Op: grants.OpAuthorize, Name: "a"}, false},
		{grants.Change{Op: grants.OpEnable, Name: "x://1"}, true},
		{grants.Change{Op: grants.OpDisable, Name: "t"}, true},
		{grants.Change{Op: grants.OpDisable, Name: "t"}, false},
	} {
		changed, err := m.Apply(ctx, "alice", tc.c)
		require.NoError(t, err)
		assert.Equal(t, tc.changed, changed, "%v", tc.c)
	}
	held, err := m.Grants(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, grants.Grants{Gates: []string{"a", "b"}, Overrides: map[string]bool{"x://1": true, "t": false}}, held)

	// A change replaces the grants: what a reader holds never changes.
	_, err = m.Apply(ctx, "alice", grants.Change{Op: grants.OpRevoke, Name: "a"})
	require.NoError(t, err)
	_, err = m.Apply(ctx, "alice", grants.Change{Op: grants.OpEnable, Name: "t"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, held.Gates)
	assert.False(t, held.Overrides["t"])
	now, _ := m.Grants(ctx, "alice")
	assert.Equal(t, grants.Grants{Gates: []string{"b"}, Overrides: map[string]bool{"x://1": true, "t": true}}, now)

	other, _ := m.Grants(ctx, "bob")
	assert.Equal(t, grants.Grants{}, other, "grants are per subject")
	_, err = m.Apply(ctx, "alice", grants.Change{Op: 99, Name: "a"})
	assert.Error(t, err)
	assert.Equal(t, "authorize revoke enable disable invalid", grants.OpAuthorize.String()+" "+grants.OpRevoke.String()+" "+
		grants.OpEnable.String()+" "+grants.OpDisable.String()+" "+grants.ChangeOp(0).String())
}

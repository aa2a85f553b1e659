package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// The texts store's List keeps the keyset contract at every page size, for
// the seeded users, a user with many texts added out of order, and a user
// with none.
func TestTextsListContract(t *testing.T) {
	s := newTexts()
	require.NoError(t, seed(s))
	for i := 250; i >= 1; i-- { // descending: every add inserts in front
		_, err := s.Add("carol", fmt.Sprintf("c%04d", i), fmt.Sprintf("text %d", i), "body")
		require.NoError(t, err)
	}
	for _, sub := range []string{"alice", "bob", "carol", "dave"} {
		t.Run(sub, func(t *testing.T) {
			inventorytest.CheckList(t, s.template(), principal.Principal{Subject: sub}, inventorytest.Options{})
		})
	}
	assert.Len(t, s.URIs("alice"), aliceTexts)
	assert.Equal(t, "texts://texts/c0001", s.URIs("carol")[0], "listing order is key order")
}

// Attacks on the store: no subject lists nothing (never everything),
// another user's text reads like a missing one, and an id moved to another
// owner leaves the first owner's list.
func TestTextsOwnership(t *testing.T) {
	s := newTexts()
	require.NoError(t, seed(s))
	tmpl := s.template()
	ctx := context.Background()

	_, err := tmpl.List(ctx, inventory.ListRequest{Limit: 100}) // no subject
	assert.Error(t, err)

	read := func(p *principal.Principal, id string) error {
		_, err := tmpl.Read(ctx, inventory.ReadRequest{URI: "texts://texts/" + id, Params: map[string]string{"id": id}, Principal: p})
		return err
	}
	alice, bob := &principal.Principal{Subject: "alice"}, &principal.Principal{Subject: "bob"}
	assert.NoError(t, read(alice, "t001"))
	assert.ErrorIs(t, read(bob, "t001"), inventory.ErrNotFound, "alice's text to bob")
	assert.ErrorIs(t, read(alice, "t999"), inventory.ErrNotFound, "a missing text")
	assert.ErrorIs(t, read(nil, "t001"), inventory.ErrNotFound, "no principal")

	_, err = s.Add("bob", "t001", "now bob's", "body")
	require.NoError(t, err)
	assert.NotContains(t, s.URIs("alice"), "texts://texts/t001")
	assert.Contains(t, s.URIs("bob"), "texts://texts/t001")
	assert.ErrorIs(t, read(alice, "t001"), inventory.ErrNotFound)
}

package kit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// The notes store's List keeps the keyset contract at every page size, for
// the seeded users, a user with many notes added out of order, and a user
// with none.
func TestNotesListContract(t *testing.T) {
	n := kit.NewNotes()
	kit.SeedNotes(n)
	for i := 250; i >= 1; i-- { // descending: every Add inserts in front
		_, err := n.Add("carol", fmt.Sprintf("c%04d", i), fmt.Sprintf("note %d", i), "text")
		require.NoError(t, err)
	}
	for _, sub := range []string{"alice", "bob", "carol", "dave"} {
		t.Run(sub, func(t *testing.T) {
			inventorytest.CheckList(t, n.Template(), principal.Principal{Subject: sub}, inventorytest.Options{})
		})
	}
	assert.Len(t, n.URIs("alice"), kit.AliceNotes)
	assert.Len(t, n.URIs("carol"), 250)
	assert.Equal(t, "notes://notes/c0001", n.URIs("carol")[0], "listing order is key order")
}

// Attacks on the store: no subject lists nothing (never everything),
// another user's note reads like a missing one, and an id moved to another
// owner leaves the first owner's list.
func TestNotesOwnership(t *testing.T) {
	n := kit.NewNotes()
	kit.SeedNotes(n)
	tmpl := n.Template()
	ctx := context.Background()

	_, err := tmpl.List(ctx, inventory.ListRequest{Limit: 100}) // no subject
	assert.Error(t, err)

	read := func(sub, id string) error {
		uri := "notes://notes/" + id
		_, err := tmpl.Read(ctx, inventory.ReadRequest{URI: uri, Params: map[string]string{"id": id}, Principal: &principal.Principal{Subject: sub}})
		return err
	}
	assert.NoError(t, read("alice", "n001"))
	assert.ErrorIs(t, read("bob", "n001"), inventory.ErrNotFound, "alice's note to bob")
	assert.ErrorIs(t, read("alice", "n999"), inventory.ErrNotFound, "a missing note")
	_, err = tmpl.Read(ctx, inventory.ReadRequest{URI: "notes://notes/n001", Params: map[string]string{"id": "n001"}})
	assert.ErrorIs(t, err, inventory.ErrNotFound, "no principal")

	_, err = n.Add("bob", "n001", "now bob's", "text")
	require.NoError(t, err)
	assert.NotContains(t, n.URIs("alice"), "notes://notes/n001")
	assert.Contains(t, n.URIs("bob"), "notes://notes/n001")
	assert.ErrorIs(t, read("alice", "n001"), inventory.ErrNotFound)
}

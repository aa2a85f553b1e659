package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Issue 28: a typed nil (a nil pointer, or a nil function, in an
// interface) given where the inventory takes an interface is refused with
// an error naming the option, never kept to panic at the first request.
func TestTypedNilOptionsAreRefused(t *testing.T) {
	tmpl := docsTemplate(nil)
	for _, tc := range []struct {
		name, option string
		opts         inventory.Options
	}{
		{"nil *MemoryGrants as Grants", "Grants", inventory.Options{Grants: (*grants.Memory)(nil)}},
		{"nil NotifierFunc as Notifier", "Notifier", inventory.Options{Notifier: grants.NotifierFunc(nil)}},
		{"nil *notifier as Notifier", "Notifier", inventory.Options{Notifier: (*countingNotifier)(nil)}},
		{"zero slog.Logger", "Logger", inventory.Options{Logger: &slog.Logger{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv *inventory.Inventory
			var err error
			require.NotPanics(t, func() { inv, err = inventory.New(nil, []inventory.Template{tmpl}, tc.opts) })
			require.Error(t, err)
			assert.Nil(t, inv)
			assert.Contains(t, err.Error(), tc.option)
		})
	}
	t.Run("AttachNotifier", func(t *testing.T) {
		inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
		require.NoError(t, err)
		assert.False(t, inv.AttachNotifier(grants.NotifierFunc(nil)), "a nil function is no notifier")
		assert.False(t, inv.AttachNotifier((*countingNotifier)(nil)), "a nil pointer is no notifier")
		assert.Nil(t, inv.Notifier())
	})
	t.Run("inventorytest.CheckGrants", func(t *testing.T) {
		require.NotPanics(t, func() {
			_, err := inventorytest.CheckGrants(context.Background(), (*grants.Memory)(nil))
			assert.Error(t, err)
		})
	})
}

type countingNotifier struct{ n int }

func (c *countingNotifier) ListChanged(context.Context, string) { c.n++ }

// Issue 28: the zero Inventory is an empty inventory: every method
// answers as one New made with nothing registered does, and never panics.
func TestZeroInventoryIsEmpty(t *testing.T) {
	empty, err := inventory.New(nil, nil, inventory.Options{})
	require.NoError(t, err)
	var zero inventory.Inventory
	want := transcript(t, empty)
	var got []string
	require.NotPanics(t, func() { got = transcript(t, &zero) })
	assert.Equal(t, want, got)
	assert.Zero(t, zero.MaxCursorLen(), "the zero Inventory issues no cursor")
}

// transcript calls every method of inv and records what it answered.
func transcript(t *testing.T, inv *inventory.Inventory) []string {
	ctx := context.Background()
	var out []string
	add := func(what string, vals ...any) { out = append(out, fmt.Sprint(append([]any{what}, vals...)...)) }
	next, err := inv.List(ctx, alice(), "", func(*inventory.Item) bool { t.Error("an item"); return true })
	add("list", next, err)
	_, err = inv.List(ctx, alice(), "bm90IGEgY3Vyc29y", nil)
	var ce *inventory.CursorError
	add("list cursor", errors.As(err, &ce))
	next, err = inv.Templates(ctx, alice(), "", func(*inventory.TemplateItem) bool { t.Error("an item"); return true })
	add("templates", next, err)
	_, err = inv.Templates(ctx, alice(), "bm90IGEgY3Vyc29y", nil)
	add("templates cursor", errors.As(err, &ce))
	_, err = inv.Read(ctx, alice(), "docs://documents/d1")
	add("read", err)
	_, err = inv.Read(ctx, nil, "docs://readme")
	add("read anonymous", err)
	c, err := inv.Complete(ctx, alice(), "docs://documents/{id}", "id", "d", nil)
	add("complete", c, err)
	h, err := inv.Search(ctx, alice(), "report", 10)
	add("search", h, err)
	r, err := inv.Reach(ctx, alice())
	add("reach", r, err)
	ok, err := inv.CanRead(ctx, alice(), "docs://documents/d1")
	add("can read", ok, err)
	for _, f := range []func(context.Context, string, string) (bool, error){inv.Authorize, inv.Revoke, inv.Enable, inv.Disable} {
		ok, err := f(ctx, "alice", "beta")
		add("grant", ok, err)
	}
	ok, err = inv.CheckGates(ctx, alice()).Pass()
	add("pass", ok, err)
	ok, err = inv.CheckGates(ctx, alice()).Pass("beta")
	add("pass beta", ok, err)
	tmpl, found := inv.Template("documents")
	add("template", tmpl, found)
	name, found := inv.Target("docs://documents/{id}")
	add("target", name, found)
	add("flags", inv.NeedsAuthentication(), inv.HasListSources(), inv.HasSearch(), inv.HasGate("beta"), inv.Completes(), inv.AbandonedCallbacks())
	add("items", inv.StaticItems(), inv.TemplateItems(), inv.Notifier())
	add("attach", inv.AttachNotifier(grants.NotifierFunc(func(context.Context, string) {})), inv.Notifier() != nil)
	return out
}

// Issue 28: the zero GateCheck, MemoryGrants and MemorySource are usable.
func TestZeroValuesOfOtherTypes(t *testing.T) {
	ctx := context.Background()
	require.NotPanics(t, func() {
		var g inventory.GateCheck
		_, err := g.Pass("beta")
		assert.ErrorIs(t, err, inventory.ErrUnknownGate)
		ok, err := g.Pass()
		assert.True(t, ok)
		assert.NoError(t, err)
	})
	require.NotPanics(t, func() {
		var m grants.Memory
		changed, err := m.Apply(ctx, "alice", grants.Change{Op: grants.OpAuthorize, Name: "beta"})
		assert.NoError(t, err)
		assert.True(t, changed)
		g, err := m.Grants(ctx, "alice")
		assert.NoError(t, err)
		assert.Equal(t, []string{"beta"}, g.Gates)
	})
	require.NotPanics(t, func() {
		var f grants.NotifierFunc
		f.ListChanged(ctx, "alice")
	})
	require.NotPanics(t, func() {
		var m inventorytest.MemorySource
		m.Insert("alice", docEntry(1))
		assert.Equal(t, 1, m.Len("alice"))
		assert.True(t, m.Delete("alice", docEntry(1).Key))
	})
}

package inventory_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/principal"
)

// TestGateCheck: Pass decides gates for something the inventory does not
// serve exactly as it would for a resource with those gates — policies,
// grants, the global gates — except overrides, which name resources.
func TestGateCheck(t *testing.T) {
	ctx := context.Background()
	staff := inventory.Policy(func(_ context.Context, p *principal.Principal) bool {
		return p != nil && p.HasScopes("staff")
	})
	newInv := func(t *testing.T, global []string, store grants.Store) *inventory.Inventory {
		t.Helper()
		inv, err := inventory.New([]inventory.Resource{{URI: "test://r", Name: "r", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "x")}}, nil, inventory.Options{
			Gates:       []inventory.Gate{{Name: "beta"}, {Name: "staff", Policy: staff}, {Name: "all", Policy: inventory.Authenticated}},
			GlobalGates: global, Grants: store,
		})
		require.NoError(t, err)
		return inv
	}
	alice := &principal.Principal{Subject: "alice"}
	bob := &principal.Principal{Subject: "bob", Scopes: []string{"staff"}}
	service := &principal.Principal{ClientID: "svc", Scopes: []string{"staff"}}

	inv := newInv(t, nil, nil)
	_, err := inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	_, err = inv.Disable(ctx, "alice", "test://r") // an override: no effect on Pass
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		caller *principal.Principal
		gates  []string
		want   bool
	}{
		{"no gates, anonymous", nil, nil, true},
		{"granted", alice, []string{"beta"}, true},
		{"not granted", bob, []string{"beta"}, false},
		{"anonymous has no grants", nil, []string{"beta"}, false},
		{"by policy", bob, []string{"staff"}, true},
		{"policy refuses", alice, []string{"staff"}, false},
		{"a subjectless caller by policy", service, []string{"staff"}, true},
		{"every gate must pass", alice, []string{"beta", "staff"}, false},
		{"both pass", bob, []string{"staff", "all"}, true},
		{"policy of authenticated callers, anonymous", nil, []string{"all"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := inv.CheckGates(ctx, tc.caller).Pass(tc.gates...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, ok)
		})
	}

	t.Run("unknown gate", func(t *testing.T) {
		assert.True(t, inv.HasGate("beta"))
		assert.False(t, inv.HasGate("Beta"), "names are exact")
		ok, err := inv.CheckGates(ctx, bob).Pass("staff", "nope")
		assert.ErrorIs(t, err, inventory.ErrUnknownGate)
		assert.False(t, ok)
	})

	t.Run("global gates apply", func(t *testing.T) {
		inv := newInv(t, []string{"beta"}, nil)
		ok, err := inv.CheckGates(ctx, bob).Pass()
		require.NoError(t, err)
		assert.False(t, ok, "bob is not in the beta")
		ok, err = inv.CheckGates(ctx, bob).Pass("staff")
		require.NoError(t, err)
		assert.False(t, ok)
		_, err = inv.Authorize(ctx, "bob", "beta")
		require.NoError(t, err)
		ok, err = inv.CheckGates(ctx, bob).Pass("staff")
		require.NoError(t, err)
		assert.True(t, ok)
	})

	t.Run("grants loaded once, and only when needed", func(t *testing.T) {
		store := newCountingStore()
		inv := newInv(t, nil, store)
		_, err := inv.Authorize(ctx, "alice", "beta")
		require.NoError(t, err)
		g := inv.CheckGates(ctx, alice)
		ok, err := g.Pass()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Zero(t, store.reads.Load(), "no gates: nothing loaded")
		for range 3 {
			ok, err = g.Pass("beta", "all")
			require.NoError(t, err)
			assert.True(t, ok)
		}
		assert.Equal(t, int64(1), store.reads.Load())
	})

	t.Run("a failing store or policy is an internal error, logged", func(t *testing.T) {
		var logs bytes.Buffer
		store := newCountingStore()
		boom := inventory.Policy(func(context.Context, *principal.Principal) bool { panic("boom") })
		inv, err := inventory.New(nil, nil, inventory.Options{
			Gates: []inventory.Gate{{Name: "beta"}, {Name: "boom", Policy: boom}}, Grants: store,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		require.NoError(t, err)
		ok, err := inv.CheckGates(ctx, nil).Pass("boom")
		assert.ErrorIs(t, err, inventory.ErrInternal, "a policy that panics")
		assert.False(t, ok)
		assert.Contains(t, logs.String(), "boom")

		store.fail.Store(errors.New("grants offline"))
		ok, err = inv.CheckGates(ctx, alice).Pass("beta")
		assert.ErrorIs(t, err, inventory.ErrInternal)
		assert.False(t, ok)
		assert.Contains(t, logs.String(), "grants offline")
	})
}

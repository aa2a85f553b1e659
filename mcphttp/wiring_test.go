package mcphttp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

// gatedInventory has one gated static resource and no Notifier.
func gatedInventory(t *testing.T, n inventory.Notifier) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New([]inventory.Resource{{
		URI: "docs://beta", Name: "beta", Access: inventory.Public, Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta"),
	}}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}, Notifier: n})
	require.NoError(t, err)
	return inv
}

// Giving the hub to the endpoint is enough: a grant change reaches the
// subject's subscriptions, and nobody else's.
func TestTheHubHearsGrantChanges(t *testing.T) {
	inv := gatedInventory(t, nil)
	hub := notify.New(notify.Options{})
	defer hub.Close()
	_, err := mcphttp.New(inv, mcphttp.Options{Notifications: hub})
	require.NoError(t, err)
	alice, bob := hub.Subscribe("alice"), hub.Subscribe("bob")
	defer alice.Close()
	defer bob.Close()

	changed, err := inv.Authorize(context.Background(), "alice", "beta")
	require.NoError(t, err)
	require.True(t, changed)
	select {
	case ev := <-alice.Events():
		assert.Equal(t, notify.ListChanged, ev.Kind)
	case <-time.After(5 * time.Second):
		t.Fatal("alice heard nothing of her grant")
	}
	select {
	case ev := <-bob.Events():
		t.Fatalf("bob heard %v", ev)
	case <-time.After(50 * time.Millisecond):
	}
}

// The other way round: a hub given to the inventory turns notifications
// on in the endpoint.
func TestTheInventorysHubTurnsNotificationsOn(t *testing.T) {
	hub := notify.New(notify.Options{})
	defer hub.Close()
	inv := gatedInventory(t, hub)
	ep, err := mcphttp.New(inv, mcphttp.Options{})
	require.NoError(t, err)
	w := post(t, serviceAuth(ep), legacy(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), "Bearer user:alice", nil)
	assert.Contains(t, w.Body.String(), `"listChanged":true`)
	assert.NotEmpty(t, w.Header().Get("Mcp-Session-Id"))
}

// Two different notifiers are a construction error, never a silent
// split where grant changes go one way and streams listen the other.
func TestTwoNotifiersAreAnError(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	inv := gatedInventory(t, inventory.NotifierFunc(func(_ context.Context, s string) {
		mu.Lock()
		heard = append(heard, s)
		mu.Unlock()
	}))
	hub := notify.New(notify.Options{})
	defer hub.Close()
	_, err := mcphttp.New(inv, mcphttp.Options{Notifications: hub})
	assert.Error(t, err)

	same := notify.New(notify.Options{})
	defer same.Close()
	inv2 := gatedInventory(t, same)
	_, err = mcphttp.New(inv2, mcphttp.Options{Notifications: same})
	assert.NoError(t, err, "the same hub on both sides is fine")
}

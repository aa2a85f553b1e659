package grants_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Memory keeps the grant store contract, from NewMemory and as the zero
// value.
func TestMemoryKeepsTheContract(t *testing.T) {
	inventorytest.CheckGrantStore(t, grants.NewMemory())
	inventorytest.CheckGrantStore(t, &grants.Memory{})
}

func TestChange(t *testing.T) {
	ctx := context.Background()
	var m grants.Memory
	for _, tc := range []struct {
		c       grants.Change
		changed bool
	}{
		{grants.Change{Op: grants.OpAuthorize, Name: "beta"}, true},
		{grants.Change{Op: grants.OpAuthorize, Name: "beta"}, false},
		{grants.Change{Op: grants.OpDisable, Name: "docs://a"}, true},
		{grants.Change{Op: grants.OpEnable, Name: "docs://a"}, true},
		{grants.Change{Op: grants.OpRevoke, Name: "beta"}, true},
	} {
		changed, err := m.Apply(ctx, "alice", tc.c)
		require.NoError(t, err, "%s %s", tc.c.Op, tc.c.Name)
		assert.Equal(t, tc.changed, changed, "%s %s", tc.c.Op, tc.c.Name)
	}
	g, err := m.Grants(ctx, "alice")
	require.NoError(t, err)
	assert.Empty(t, g.Gates)
	assert.Equal(t, map[string]bool{"docs://a": true}, g.Overrides)
	_, err = m.Apply(ctx, "alice", grants.Change{Op: 99, Name: "x"})
	assert.Error(t, err, "an unknown op")
	assert.Equal(t, "invalid", grants.ChangeOp(99).String())
}

package seam_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// The hooks are those of a Setup mcphttp.New made, the same on every
// call; anything else has none (a part then refuses or does without).
func TestOf(t *testing.T) {
	inv, err := inventory.New(nil, nil, inventory.Options{})
	require.NoError(t, err)
	var first, again *seam.Hooks
	grab := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		first, again = seam.Of(s), seam.Of(s)
		return nil
	})
	_, err = mcphttp.New(inv, mcphttp.Options{}, grab)
	require.NoError(t, err)
	require.NotNil(t, first)
	assert.Same(t, first, again)
	assert.Nil(t, seam.Of(nil))
	assert.Nil(t, seam.Of((*mcphttp.Setup)(nil)))
	assert.Nil(t, seam.Of(&mcphttp.Setup{}), "a zero Setup")
	assert.Nil(t, seam.Of("a setup"))
}

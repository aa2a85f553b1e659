package notify

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMark: a mark is a point in a key's log that Since resumes from —
// what was published after it comes back, the mark itself and other marks
// never do, nor are they delivered live — and a mark of one key tells
// nothing of another's.
func TestMark(t *testing.T) {
	h := New(Options{})
	defer h.Close()
	ctx := context.Background()
	sub := h.Subscribe("alice")
	defer sub.Close()

	h.ListChanged(ctx, "alice") // before the mark: not after it
	mark, err := h.Mark(ctx, "alice")
	require.NoError(t, err)
	require.True(t, ValidID(mark))
	_, err = h.Mark(ctx, "alice") // another stream's
	require.NoError(t, err)
	h.ResourceUpdated(ctx, "alice", "docs://documents/1")
	h.ResourceUpdated(ctx, "alice", markURI) // an application's event cannot pose as a mark: dropped

	missed, ok, err := h.Since(ctx, "alice", mark)
	require.NoError(t, err)
	require.True(t, ok, "a mark is known to the log")
	require.Len(t, missed, 1)
	assert.Equal(t, ResourceUpdated, missed[0].Kind)
	assert.Equal(t, "docs://documents/1", missed[0].URI)

	live := drain(sub)
	assert.Equal(t, []Event{{Subject: "alice", Kind: ListChanged}, {Subject: "alice", Kind: ResourceUpdated, URI: "docs://documents/1"}}, live,
		"marks are never delivered")

	_, ok, err = h.Since(ctx, "bob", mark)
	require.NoError(t, err)
	assert.False(t, ok, "alice's mark is unknown among bob's events")
	_, err = h.Mark(ctx, "")
	assert.Error(t, err)
}

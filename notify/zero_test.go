package notify_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpkit/mcpkit/notify"
)

// A nil or zero Hub (not made by New) is misuse that Err reports; every
// method does nothing or fails, and none panics (a service's request
// handler may call it).
func TestZeroHubNeverPanics(t *testing.T) {
	ctx := context.Background()
	for name, h := range map[string]*notify.Hub{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, h.Err())
			assert.NotPanics(t, func() {
				h.ListChanged(ctx, "alice")
				h.ResourceUpdated(ctx, "alice", "docs://a")
				h.ElicitationComplete(ctx, "alice", "e1")
				h.Publish(ctx, notify.Event{Subject: "alice", Kind: notify.ListChanged})
				assert.Zero(t, h.Subscribers("alice"))
				s := h.Subscribe("alice")
				select {
				case <-s.Done():
				default:
					t.Error("a zero hub's subscription has ended")
				}
				s.Close()
				_, ok, err := h.Since(ctx, "alice", "1-0")
				assert.False(t, ok)
				assert.Error(t, err)
				_, err = h.Mark(ctx, "alice")
				assert.Error(t, err)
				h.Close()
			})
		})
	}
}

package notify

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nilBroker is a user's broker type, for its typed nil.
type nilBroker struct{ Broker }

// Issue 35: a Broker or Log holding a nil pointer (a nil
// *redisstore.Broker, NewBroker's result kept with its error ignored)
// killed the process from the listener's goroutine, or panicked in
// ListChanged. New now leaves them out, says so at ERROR and in Err, and
// delivers in this process; a nil or zero MemoryLog answers errors.
func TestTypedNilOptionsAreReported(t *testing.T) {
	for name, opts := range map[string]Options{
		"Broker": {Broker: (*nilBroker)(nil)},
		"Log":    {Log: (*MemoryLog)(nil)},
		"both":   {Broker: (*nilBroker)(nil), Log: (*MemoryLog)(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			h := New(opts)
			defer h.Close()
			require.Error(t, h.Err())
			assert.Contains(t, h.Err().Error(), "is a nil *notify.")
			assert.Contains(t, logs.String(), "level=ERROR")
			s := h.Subscribe("alice")
			defer s.Close()
			require.NotPanics(t, func() { h.ListChanged(context.Background(), "alice") })
			select {
			case e := <-s.Events():
				assert.Equal(t, ListChanged, e.Kind)
			case <-time.After(5 * time.Second):
				t.Fatal("not delivered in process")
			}
		})
	}
	assert.NoError(t, New(Options{}).Err())
	assert.Error(t, (*Hub)(nil).Err())
	assert.Error(t, (&Hub{}).Err())
	for _, l := range []*MemoryLog{nil, {}} {
		_, err := l.Append(context.Background(), "alice", Event{Subject: "alice", Kind: ListChanged})
		assert.Error(t, err)
		_, _, err = l.Since(context.Background(), "alice", "x-1")
		assert.Error(t, err)
	}
}

package callback

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

// A callback's context behaves as context.WithDeadline(parent, deadline)
// would, whether or not it was armed: its deadline, its values, done at
// the deadline or with its parent, cancelled once the call returned.
func TestCallContext(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	t.Run("unarmed: Err reads the clock", func(t *testing.T) {
		c := &callContext{parent: parent, deadline: time.Now().Add(30 * time.Millisecond)}
		d, ok := c.Deadline()
		assert.True(t, ok)
		assert.Equal(t, c.deadline, d)
		assert.NoError(t, c.Err())
		require.Eventually(t, func() bool { return c.Err() != nil }, 5*time.Second, time.Millisecond)
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		<-c.Done() // armed after the deadline: done at once
		assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
		c.finish()
	})
	t.Run("armed: Done closes at the deadline", func(t *testing.T) {
		c := &callContext{parent: parent, deadline: time.Now().Add(20 * time.Millisecond)}
		fired := make(chan struct{})
		stop := context.AfterFunc(c, func() { close(fired) })
		defer stop()
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("not done at the deadline")
		}
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
		<-fired
		c.finish()
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded, "finish does not change an ended context")
	})
	t.Run("the parent's cancellation", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		unarmed, armed := &callContext{parent: p, deadline: time.Now().Add(time.Hour)}, &callContext{parent: p, deadline: time.Now().Add(time.Hour)}
		done := armed.Done()
		cancel()
		<-done
		assert.ErrorIs(t, armed.Err(), context.Canceled)
		assert.ErrorIs(t, unarmed.Err(), context.Canceled)
		<-unarmed.Done()
		unarmed.finish()
		armed.finish()
	})
	t.Run("values", func(t *testing.T) {
		c := &callContext{parent: parent, deadline: time.Now().Add(time.Hour)}
		assert.Equal(t, "v", c.Value(ctxKey{}))
		c.finish()
		assert.Equal(t, "v", c.Value(ctxKey{}), "values outlive the call")
	})
	t.Run("after the call returned", func(t *testing.T) {
		for _, arm := range []bool{false, true} {
			c := &callContext{parent: parent, deadline: time.Now().Add(time.Hour)}
			if arm {
				_ = c.Done()
			}
			c.finish()
			select {
			case <-c.Done():
			default:
				t.Fatalf("armed %v: a context kept past its call is not done", arm)
			}
			assert.ErrorIs(t, c.Err(), context.Canceled, "armed %v", arm)
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		c := &callContext{parent: parent, deadline: time.Now().Add(10 * time.Millisecond)}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for c.Err() == nil {
					select {
					case <-c.Done():
					default:
					}
				}
			})
		}
		wg.Wait()
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		c.finish()
	})
}

// A callback that never looks at its context still has its late result
// refused: call checks the clock after it returns.
func TestCallRefusesALateResultOfAnUnarmedContext(t *testing.T) {
	rn := New(10*time.Millisecond, nil)
	slow := func(_ context.Context, _ int) (int, error) {
		time.Sleep(30 * time.Millisecond) // never looks at ctx
		return 1, nil
	}
	_, err := Call(context.Background(), rn, nil, slow, 0)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	quick := func(_ context.Context, _ int) (int, error) { return 2, nil }
	res, err := Call(context.Background(), rn, nil, quick, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, res)
}

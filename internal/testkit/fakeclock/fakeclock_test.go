package fakeclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c := New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance: Now = %v, want %v", got, want)
	}
	c.Advance(-30 * time.Second)
	if got, want := c.Now(), t0.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("after a negative Advance: Now = %v, want %v", got, want)
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("after Set: Now = %v, want %v", got, t0)
	}
	if got := new(Clock).Now(); !got.IsZero() {
		t.Fatalf("zero Clock: Now = %v, want the zero time", got)
	}
}

// TestConcurrent is for the race detector: readers and writers at once.
func TestConcurrent(t *testing.T) {
	c := New(time.Unix(0, 0))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Advance(time.Second)
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), time.Unix(400, 0); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}

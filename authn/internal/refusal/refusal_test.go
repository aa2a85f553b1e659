package refusal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func key(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

// The memory forgets entries when they expire, is bounded, and makes room
// by dropping expired entries first.
func TestMemory(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewMemory(3)
	boom := errors.New("refused")
	m.Put(key("a"), Entry{Until: now.Add(time.Minute), Err: boom}, now)
	e, ok := m.Get(key("a"), now)
	require.True(t, ok)
	assert.Equal(t, boom, e.Err)
	_, ok = m.Get(key("a"), now.Add(time.Minute))
	assert.False(t, ok, "expired")
	m.Put(key("old"), Entry{Until: now}, now)
	_, ok = m.Get(key("old"), now)
	assert.False(t, ok, "an entry already expired is not stored")
	for i, k := range []string{"x", "y", "z"} {
		m.Put(key(k), Entry{Until: now.Add(time.Duration(i+1) * time.Second)}, now)
	}
	m.Put(key("w"), Entry{Until: now.Add(time.Hour)}, now.Add(1500*time.Millisecond)) // x has expired: it goes
	_, ok = m.Get(key("w"), now)
	assert.True(t, ok)
	_, ok = m.Get(key("y"), now)
	assert.True(t, ok, "a live entry stays while an expired one can go")
	m.Put(key("v"), Entry{Until: now.Add(time.Hour)}, now)
	m.mu.Lock()
	n := len(m.m)
	m.mu.Unlock()
	assert.LessOrEqual(t, n, 3, "bounded")
	m.Forget(key("v"))
	_, ok = m.Get(key("v"), now)
	assert.False(t, ok)
}

// The lane runs its slots at once; others wait, up to maxWaiters, each at
// most maxWait or until its context ends.
func TestLane(t *testing.T) {
	l := NewLane(1, 2, 200*time.Millisecond)
	ctx := context.Background()
	require.True(t, l.Enter(ctx))
	// A waiter gets the slot when it is left.
	got := make(chan bool)
	go func() { got <- l.Enter(ctx) }()
	time.Sleep(20 * time.Millisecond)
	l.Leave()
	require.True(t, <-got)
	// Held: a waiter times out.
	start := time.Now()
	assert.False(t, l.Enter(ctx))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	// A canceled context ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.False(t, l.Enter(cctx))
	// Beyond maxWaiters, refused at once.
	var wg sync.WaitGroup
	results := make(chan bool, 3)
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); results <- l.Enter(ctx) }()
	}
	wg.Wait()
	close(results)
	refused := 0
	for r := range results {
		assert.False(t, r)
		refused++
	}
	assert.Equal(t, 3, refused)
	l.Leave()
	assert.True(t, l.Enter(ctx))
	l.Leave()
}

// The log writes the first refusal of a reason at once and the count of
// the others when the interval ends; reasons are counted apart.
func TestLog(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	text := func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
	l := NewLog(slog.New(slog.NewTextHandler(w, nil)), 100*time.Millisecond, Hint)
	ctx := context.Background()
	for range 4 {
		l.Refused(ctx, "aud", 401)
	}
	l.Refused(ctx, "exp", 401)
	assert.Equal(t, 1, strings.Count(text(), "reason=aud"))
	assert.Contains(t, text(), "hint=")
	require.Eventually(t, func() bool { return strings.Contains(text(), "count=3") }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, strings.Count(text(), "reason=exp"))
	// A new interval starts with a line of its own.
	l.Refused(ctx, "aud", 401)
	assert.Equal(t, 3, strings.Count(text(), "reason=aud"))
	assert.NotEmpty(t, Hint("typ"))
	assert.NotEmpty(t, Hint("dpop_htu"), "the DPoP proof reasons share a hint")
	assert.Empty(t, Hint("nonsense"))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

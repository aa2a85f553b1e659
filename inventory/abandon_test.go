package inventory_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// stuck is a callback body that ignores its context: it returns only when
// release is closed, and counts its calls.
type stuck struct {
	release chan struct{}
	calls   atomic.Int64
}

func newStuck() *stuck { return &stuck{release: make(chan struct{})} }

func (s *stuck) wait() {
	s.calls.Add(1)
	<-s.release // never looks at ctx
}

// answered runs f and reports whether it returned within limit (a bound
// far above the deadline under test: it only tells "answered at the
// deadline" from "answered when the callback returned").
func answered(t *testing.T, limit time.Duration, f func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

// Issue 21: CallbackTimeout bounds a callback that ignores its context.
// Each kind of callback blocks (never looking at its context) until the
// test releases it; the request is answered with the internal error at
// the deadline while the callback still runs, the operator is told, and
// the callback is counted as abandoned until it returns.
func TestCallbackIgnoringItsContextIsAnsweredAtTheDeadline(t *testing.T) {
	caller := alice()
	cases := []struct {
		name string
		// build returns an inventory whose callback runs s.wait, and the
		// request that calls it.
		build func(s *stuck, opts inventory.Options) (*inventory.Inventory, func(*inventory.Inventory) error)
	}{
		{"list", func(s *stuck, opts inventory.Options) (*inventory.Inventory, func(*inventory.Inventory) error) {
			list := func(context.Context, inventory.ListRequest) (inventory.Page, error) {
				s.wait()
				return inventory.Page{}, nil
			}
			inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, opts)
			require.NoError(t, err)
			return inv, func(inv *inventory.Inventory) error {
				_, err := listWire(context.Background(), inv, caller, "", testEnv)
				return err
			}
		}},
		{"read", func(s *stuck, opts inventory.Options) (*inventory.Inventory, func(*inventory.Inventory) error) {
			tmpl := docsTemplate(nil)
			tmpl.Read = func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) { s.wait(); return nil, nil }
			inv, err := inventory.New(nil, []inventory.Template{tmpl}, opts)
			require.NoError(t, err)
			return inv, func(inv *inventory.Inventory) error {
				_, err := inv.Read(context.Background(), caller, "docs://documents/d1")
				return err
			}
		}},
		{"complete", func(s *stuck, opts inventory.Options) (*inventory.Inventory, func(*inventory.Inventory) error) {
			tmpl := docsTemplate(nil)
			tmpl.Complete = map[string]inventory.CompleteFunc{"id": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
				s.wait()
				return inventory.Completion{}, nil
			}}
			inv, err := inventory.New(nil, []inventory.Template{tmpl}, opts)
			require.NoError(t, err)
			return inv, func(inv *inventory.Inventory) error {
				_, err := inv.Complete(context.Background(), caller, "docs://documents/{id}", "id", "d", nil)
				return err
			}
		}},
		{"search", func(s *stuck, opts inventory.Options) (*inventory.Inventory, func(*inventory.Inventory) error) {
			tmpl := docsTemplate(nil)
			tmpl.Search = func(context.Context, inventory.SearchRequest) ([]inventory.SearchHit, error) {
				s.wait()
				return nil, nil
			}
			inv, err := inventory.New(nil, []inventory.Template{tmpl}, opts)
			require.NoError(t, err)
			return inv, func(inv *inventory.Inventory) error {
				_, err := inv.Search(context.Background(), caller, "report", 10)
				return err
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStuck()
			log := &logBuffer{}
			inv, do := tc.build(s, inventory.Options{CallbackTimeout: 50 * time.Millisecond, Logger: log.logger()})
			var err error
			ok := answered(t, 5*time.Second, func() { err = do(inv) })
			if !ok {
				close(s.release) // let the request finish before failing
				t.Fatal("not answered at the deadline: the request waited for the callback")
			}
			assert.Same(t, inventory.ErrInternal, err)
			assert.EqualValues(t, 1, s.calls.Load(), "the callback was called")
			assert.Equal(t, 1, inv.AbandonedCallbacks(), "the callback still runs, counted")
			recs := log.records(t)
			require.NotEmpty(t, recs)
			assert.Equal(t, "deadline", recs[0]["rule"])
			assert.Contains(t, recs[0]["error"], "did not return by its deadline")

			close(s.release)
			require.Eventually(t, func() bool { return inv.AbandonedCallbacks() == 0 }, 5*time.Second, time.Millisecond)
			require.Eventually(t, func() bool { return strings.Contains(log.String(), "an abandoned callback returned") }, 5*time.Second, time.Millisecond)
		})
	}
}

// The request's own end (the client went away) abandons a callback that
// ignores its context as well.
func TestCallbackAbandonedWhenTheRequestEnds(t *testing.T) {
	s := newStuck()
	defer close(s.release)
	list := func(context.Context, inventory.ListRequest) (inventory.Page, error) {
		s.wait()
		return inventory.Page{}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{Logger: (&logBuffer{}).logger()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var lerr error
	require.True(t, answered(t, 5*time.Second, func() { _, lerr = listWire(ctx, inv, alice(), "", testEnv) }), "not answered when the request ended")
	assert.Same(t, inventory.ErrInternal, lerr)
	assert.Equal(t, 1, inv.AbandonedCallbacks())
}

// A callback that never returns cannot take the server down: at most
// MaxAbandonedPerCaller of one caller run at once; beyond that, its calls
// fail at once, without calling the callback, with the internal error and
// an operator record, and goroutines stop growing. Another inventory is
// unaffected. Once the callbacks return, calls work again.
func TestAbandonedCallbacksAreBounded(t *testing.T) {
	s := newStuck()
	released := false
	defer func() {
		if !released {
			close(s.release)
		}
	}()
	list := func(context.Context, inventory.ListRequest) (inventory.Page, error) {
		s.wait()
		return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
	}
	log := &logBuffer{}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{CallbackTimeout: 5 * time.Millisecond, Logger: log.logger()})
	require.NoError(t, err)
	healthy, err := inventory.New(nil, []inventory.Template{docsTemplate(func(context.Context, inventory.ListRequest) (inventory.Page, error) {
		return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
	})}, inventory.Options{CallbackTimeout: 5 * time.Millisecond})
	require.NoError(t, err)

	before := runtime.NumGoroutine()
	const max = inventory.MaxAbandonedPerCaller
	for range max {
		var err error
		require.True(t, answered(t, 5*time.Second, func() { _, err = listWire(context.Background(), inv, alice(), "", testEnv) }), "not answered at the deadline")
		require.Same(t, inventory.ErrInternal, err)
	}
	require.Equal(t, max, inv.AbandonedCallbacks())
	require.EqualValues(t, max, s.calls.Load())

	// Beyond the bound: refused at once, the callback is not called, no
	// goroutine is added; concurrent callers alike.
	var wg sync.WaitGroup
	for range 4 * max {
		wg.Go(func() {
			_, err := listWire(context.Background(), inv, alice(), "", testEnv)
			assert.Same(t, inventory.ErrInternal, err)
		})
	}
	wg.Wait()
	assert.EqualValues(t, max, s.calls.Load(), "refused calls never reach the callback")
	assert.Equal(t, max, inv.AbandonedCallbacks())
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+max+2, "goroutines bounded by the abandoned callbacks")
	assert.True(t, strings.Contains(log.String(), "abandoned callbacks of this caller"), "the refusal is logged")

	// Another inventory is not affected.
	_, err = listWire(context.Background(), healthy, alice(), "", testEnv)
	assert.NoError(t, err)
	assert.Equal(t, 0, healthy.AbandonedCallbacks())

	// They return: counted down, and the source works again.
	close(s.release)
	released = true
	require.Eventually(t, func() bool { return inv.AbandonedCallbacks() == 0 }, 5*time.Second, time.Millisecond)
	_, err = listWire(context.Background(), inv, alice(), "", testEnv)
	assert.NoError(t, err)
}

// A callback that panics after it was abandoned does not end the process:
// the panic is recovered on its goroutine and logged for the operator.
func TestAbandonedCallbackPanicIsRecovered(t *testing.T) {
	s := newStuck()
	list := func(context.Context, inventory.ListRequest) (inventory.Page, error) { s.wait(); panic("late boom") }
	log := &logBuffer{}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{CallbackTimeout: 5 * time.Millisecond, Logger: log.logger()})
	require.NoError(t, err)
	_, err = listWire(context.Background(), inv, alice(), "", testEnv)
	require.Same(t, inventory.ErrInternal, err)
	close(s.release)
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "late boom") }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 0, inv.AbandonedCallbacks())
}

// A well-behaved callback is not abandoned, whatever it does with its
// context: its result is used and nothing is counted.
func TestWellBehavedCallbacksAreNotAbandoned(t *testing.T) {
	var caller *principal.Principal = alice()
	for name, list := range map[string]inventory.ListFunc{
		"never looks at ctx": func(context.Context, inventory.ListRequest) (inventory.Page, error) {
			return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
		},
		"selects on Done": func(ctx context.Context, _ inventory.ListRequest) (inventory.Page, error) {
			select {
			case <-ctx.Done():
				return inventory.Page{}, ctx.Err()
			default:
				return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{})
			require.NoError(t, err)
			for range 100 {
				out, err := listWire(context.Background(), inv, caller, "", testEnv)
				require.NoError(t, err)
				assert.Contains(t, string(out), "docs://documents/")
			}
			assert.Equal(t, 0, inv.AbandonedCallbacks())
		})
	}
}

// Callbacks that return right around their deadline, many at once: each
// one abandoned is uncounted when it returns, whichever of the call and the
// callback settles first, so the count comes back to zero.
func TestAbandonedCountSettlesAtTheDeadline(t *testing.T) {
	list := func(context.Context, inventory.ListRequest) (inventory.Page, error) {
		time.Sleep(time.Millisecond) // about the deadline, ignoring ctx
		return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)}, inventory.Options{CallbackTimeout: time.Millisecond, Logger: (&logBuffer{}).logger()})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_, _ = listWire(context.Background(), inv, alice(), "", testEnv)
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool { return inv.AbandonedCallbacks() == 0 }, 5*time.Second, time.Millisecond)
}

package inventory_test

import (
	"context"
	"fmt"
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

// Issue 27: the abandoned-callback budget is shared per principal. One
// subject whose List ignores its context (mallory's rows are behind a lock
// that never comes free) fires 70 concurrent lists, then keeps firing;
// meanwhile three honest users list. Before the change the 64 abandoned
// callbacks of the inventory refused everyone ("Internal error", alice 0
// of 50); now mallory alone is refused once her share is stuck, and the
// honest callers are served.
func TestStuckCallbacksOfOneCallerDoNotRefuseOthers(t *testing.T) {
	s := newStuck()
	defer close(s.release)
	list := func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
		if req.Principal.Subject == "mallory" {
			s.wait()
		}
		return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
	}
	log := &logBuffer{}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)},
		inventory.Options{CallbackTimeout: 250 * time.Millisecond, Logger: log.logger()})
	require.NoError(t, err)

	mallory := &principal.Principal{Subject: "mallory", ClientID: "client-1", Scopes: []string{"docs:read"}}
	var wg sync.WaitGroup
	for range 70 {
		wg.Go(func() {
			_, err := listWire(context.Background(), inv, mallory, "", testEnv)
			assert.Same(t, inventory.ErrInternal, err)
		})
	}
	wg.Wait()

	burst := s.calls.Load() // 70, unless some started after the first were abandoned
	require.GreaterOrEqual(t, burst, int64(inventory.MaxAbandonedPerCaller))

	honest := []*principal.Principal{alice(), bob(), {Subject: "carol", ClientID: "client-2", Scopes: []string{"docs:read"}}}
	var served, refused, hostileServed atomic.Int64
	stop := make(chan struct{})
	var hostile sync.WaitGroup
	for range 4 { // mallory goes on firing beside them
		hostile.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := listWire(context.Background(), inv, mallory, "", testEnv); err == nil {
					hostileServed.Add(1)
				}
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	for _, p := range honest {
		wg.Go(func() {
			for range 50 {
				if _, err := listWire(context.Background(), inv, p, "", testEnv); err == nil {
					served.Add(1)
				} else {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	hostile.Wait()

	total := served.Load() + refused.Load()
	t.Logf("honest served %d of %d; mallory's callbacks called %d times, abandoned %d", served.Load(), total, s.calls.Load(), inv.AbandonedCallbacks())
	assert.GreaterOrEqual(t, float64(served.Load()), 0.99*float64(total), "honest callers served")
	assert.Zero(t, hostileServed.Load(), "mallory's stuck callbacks are never trusted")
	assert.Equal(t, burst, s.calls.Load(), "once her share is stuck, mallory is refused without calling her callback")
	assert.True(t, strings.Contains(log.String(), "abandoned callbacks of this caller"), "the refusal is logged")
}

// The total stays bounded: callers each with stuck callbacks up to
// their share fill the part of the bound that callers holding some share
// (3/4 of MaxAbandonedCallbacks), a share shrinking as more callers hold
// some; each further caller holding none gets one more, until
// MaxAbandonedCallbacks callers hold some; then every caller is refused
// (the process is protected) until some return. Issue 35: before, the
// sixth caller found the whole inventory full after 8 callers' shares.
func TestAbandonedCallbacksBoundedInTotalAcrossCallers(t *testing.T) {
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
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(list)},
		inventory.Options{CallbackTimeout: 5 * time.Millisecond, Logger: log.logger()})
	require.NoError(t, err)
	const shared = inventory.MaxAbandonedCallbacks * 3 / 4
	callers := inventory.MaxAbandonedCallbacks + 2
	for i := range callers {
		p := &principal.Principal{Subject: fmt.Sprintf("user%d", i), Scopes: []string{"docs:read"}}
		// Counted when abandoned: the callback itself may start later.
		before := inv.AbandonedCallbacks()
		for range inventory.MaxAbandonedPerCaller + 3 { // sequential: each one's share exactly
			_, err := listWire(context.Background(), inv, p, "", testEnv)
			require.Same(t, inventory.ErrInternal, err)
		}
		got := inv.AbandonedCallbacks() - before
		switch {
		case i < shared/inventory.MaxAbandonedPerCaller:
			assert.EqualValues(t, inventory.MaxAbandonedPerCaller, got, "caller %d: its whole share", i)
		case i < inventory.MaxAbandonedCallbacks:
			assert.EqualValues(t, 1, got, "caller %d holds nothing: one", i)
		default:
			assert.Zero(t, got, "caller %d: %d callers hold some", i, inventory.MaxAbandonedCallbacks)
		}
	}
	want := shared + inventory.MaxAbandonedCallbacks - shared/inventory.MaxAbandonedPerCaller
	assert.Equal(t, want, inv.AbandonedCallbacks())
	require.Eventually(t, func() bool { return s.calls.Load() == int64(want) }, 5*time.Second, time.Millisecond, "callbacks called")
	assert.Equal(t, 1, strings.Count(log.String(), "abandoned callbacks refuse calls"), "one WARN line, rate-limited")
	close(s.release)
	released = true
	require.Eventually(t, func() bool { return inv.AbandonedCallbacks() == 0 }, 5*time.Second, time.Millisecond)
}

// Anonymous callers that reach callbacks (a public template's Read) share
// one small pool: their stuck callbacks refuse anonymous callers, never a
// signed-in one.
func TestAnonymousStuckCallbacksShareASmallPool(t *testing.T) {
	s := newStuck()
	defer close(s.release)
	tmpl := docsTemplate(nil)
	tmpl.Access = inventory.Public
	tmpl.RequiredScopes = nil
	tmpl.Read = func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil {
			s.wait()
		}
		return []inventory.Contents{{URI: req.URI, Text: "x"}}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{tmpl},
		inventory.Options{CallbackTimeout: 5 * time.Millisecond, Logger: (&logBuffer{}).logger()})
	require.NoError(t, err)
	for range 3 * inventory.MaxAbandonedAnonymous {
		_, err := inv.Read(context.Background(), nil, "docs://documents/d1")
		require.Same(t, inventory.ErrInternal, err)
	}
	assert.EqualValues(t, inventory.MaxAbandonedAnonymous, s.calls.Load(), "anonymous callers refused once their pool is stuck")
	_, err = inv.Read(context.Background(), alice(), "docs://documents/d1")
	assert.NoError(t, err, "a signed-in caller is served")
}

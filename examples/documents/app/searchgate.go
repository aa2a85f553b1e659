package app

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// Bounds of the full-text searches (the search tool and the filtered
// listing): a search's cost grows with how many of the caller's own
// documents match, so one user with a huge corpus of their own could
// otherwise keep every database connection and CPU busy.
const (
	// SearchTimeout bounds one search, its wait for a slot included: past
	// it the search is given up (its query cancelled) and the call fails.
	SearchTimeout = 5 * time.Second
	// SearchesPerCaller is how many searches of one principal run at
	// once; the next waits for one of them to end.
	SearchesPerCaller = 1
)

// searchGate bounds the searches in flight: SearchesPerCaller per
// principal, and at most max(1, GOMAXPROCS/2) in all, so that searches
// never take more than half the CPUs, nor more than half of SQLite's four
// connections: lists and reads keep the rest. A principal holds at most
// one of the shared slots, so a crowd of searchers queues for them while
// nobody's lists, reads or writes wait. Each search is limited to
// SearchTimeout, its wait included.
type searchGate struct {
	all     chan struct{}
	mu      sync.Mutex
	by      map[string]*searchSlot
	log     *slog.Logger
	refused atomic.Int64 // searches given up waiting since the last log line
	logged  atomic.Int64 // unix nanoseconds of the last log line
}

// searchSlot is one principal's: its searches in flight, and how many
// searches hold or wait for it (it is dropped at zero).
type searchSlot struct {
	ch   chan struct{}
	refs int
}

func newSearchGate(log *slog.Logger) *searchGate {
	return &searchGate{all: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)), by: make(map[string]*searchSlot), log: log}
}

// acquire waits for a slot of subject's and a shared one, until ctx is
// done; release gives them back.
func (g *searchGate) acquire(ctx context.Context, subject string) (release func(), err error) {
	g.mu.Lock()
	s := g.by[subject]
	if s == nil {
		s = &searchSlot{ch: make(chan struct{}, SearchesPerCaller)}
		g.by[subject] = s
	}
	s.refs++
	g.mu.Unlock()
	drop := func() {
		g.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(g.by, subject)
		}
		g.mu.Unlock()
	}
	select {
	case s.ch <- struct{}{}:
	case <-ctx.Done():
		drop()
		g.gaveUp()
		return nil, ctx.Err()
	}
	select {
	case g.all <- struct{}{}:
	case <-ctx.Done():
		<-s.ch
		drop()
		g.gaveUp()
		return nil, ctx.Err()
	}
	return func() {
		<-g.all
		<-s.ch
		drop()
	}, nil
}

// gaveUp counts a search that found no slot in time and logs, at WARN and
// at most once per 10 s, how full the searches are: never whose.
func (g *searchGate) gaveUp() {
	g.refused.Add(1)
	now := time.Now().UnixNano()
	last := g.logged.Load()
	if g.log == nil || now-last < int64(10*time.Second) || !g.logged.CompareAndSwap(last, now) {
		return
	}
	g.mu.Lock()
	waiting := len(g.by)
	g.mu.Unlock()
	g.log.LogAttrs(context.Background(), slog.LevelWarn, "documents: searches gave up waiting for a slot",
		slog.Int("in_flight", len(g.all)), slog.Int("limit", cap(g.all)), slog.Int("callers", waiting),
		slog.Int64("refused", g.refused.Swap(0)))
}

// gatedStore is a store whose Search passes the gate.
type gatedStore struct {
	store.Store
	gate *searchGate
}

func (s gatedStore) Search(ctx context.Context, subject, query string, limit int) ([]store.Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, SearchTimeout)
	defer cancel()
	release, err := s.gate.acquire(ctx, subject)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.Store.Search(ctx, subject, query, limit)
}

package app

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// blockingSearch is a store whose searches wait for release, counting
// how many run at once, per subject and in all.
type blockingSearch struct {
	store.Store
	release chan struct{}
	mu      sync.Mutex
	now     map[string]int
	peak    map[string]int
	all     atomic.Int64
	allPeak atomic.Int64
}

func (b *blockingSearch) Search(ctx context.Context, subject, _ string, _ int) ([]store.Entry, error) {
	b.mu.Lock()
	b.now[subject]++
	b.peak[subject] = max(b.peak[subject], b.now[subject])
	b.mu.Unlock()
	n := b.all.Add(1)
	for p := b.allPeak.Load(); n > p && !b.allPeak.CompareAndSwap(p, n); p = b.allPeak.Load() {
	}
	defer func() {
		b.all.Add(-1)
		b.mu.Lock()
		b.now[subject]--
		b.mu.Unlock()
	}()
	select {
	case <-b.release:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Attack (issue 35): one user's four concurrent searches over a huge
// corpus of their own each held a database connection (SQLite has four)
// and a CPU for as long as the corpus took. Now one search per principal
// runs at a time, the others wait for it, and at most half the CPUs'
// worth of searches run in all. Fails before (no gate): four of
// mallory's searches in the store at once.
func TestSearchGateOnePerCaller(t *testing.T) {
	b := &blockingSearch{release: make(chan struct{}), now: map[string]int{}, peak: map[string]int{}}
	var logs strings.Builder
	st := gatedStore{Store: b, gate: newSearchGate(slog.New(slog.NewTextHandler(&logs, nil)))}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := st.Search(context.Background(), "mallory", "document", 10)
			assert.NoError(t, err)
		})
	}
	require.Eventually(t, func() bool { return b.all.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // room for a wrong second search to start
	for range 4 {
		b.release <- struct{}{}
	}
	wg.Wait()
	assert.Equal(t, 1, b.peak["mallory"], "mallory's searches one at a time")
	assert.LessOrEqual(t, b.allPeak.Load(), int64(cap(st.gate.all)))
	assert.Empty(t, st.gate.by, "nothing kept for callers without searches")

	// A search that finds no slot in time fails, is logged once (WARN,
	// no name), and leaves the slots as they were.
	go func() { _, _ = st.Search(context.Background(), "mallory", "document", 10) }()
	require.Eventually(t, func() bool { return b.all.Load() == 1 }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := st.Search(ctx, "mallory", "document", 10)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, logs.String(), "level=WARN")
	assert.NotContains(t, logs.String(), "mallory")
	b.release <- struct{}{}
	require.Eventually(t, func() bool {
		st.gate.mu.Lock()
		defer st.gate.mu.Unlock()
		return len(st.gate.by) == 0 && len(st.gate.all) == 0
	}, 5*time.Second, time.Millisecond)
}

// Attack (issue 35), on the real server over loopback: mallory, with a
// large corpus of her own that matches, runs four searches at once, over
// and over, while carol lists her resources. Carol is served every time;
// her p95 quiet and beside the searches is logged (the figures for the
// issue come from MCPKIT_SEARCH_CORPUS=100000 runs, by hand: a timed
// assertion would flake on a shared machine). SQLite, and PostgreSQL
// when MCPKIT_TEST_POSTGRES_DSN is set.
func TestOwnCorpusSearchBesideCarol(t *testing.T) {
	corpus := 5000
	if v := os.Getenv("MCPKIT_SEARCH_CORPUS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		corpus = n
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := start(t, func(c *Config) {
				if backend == "postgres" {
					dsn, _ := testPostgres(t)
					c.DB = dsn
				}
			})
			require.NoError(t, store.SeedMany(context.Background(), s.app.db, "mallory", corpus))
			carol, mallory := s.token(t, "carol"), s.token(t, "mallory")
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			lists := func(n int) (p95 time.Duration, served int) {
				took := make([]time.Duration, 0, n)
				for range n {
					start := time.Now()
					res, out := postRPC(t, client, s.mcpURL(), carol, "resources/list", nil, nil)
					took = append(took, time.Since(start))
					if res.StatusCode == http.StatusOK && out.Error == nil {
						served++
					}
				}
				slices.Sort(took)
				return took[len(took)*95/100], served
			}
			lists(10) // warm
			quiet, _ := lists(60)

			stop := make(chan struct{})
			var searched, failed atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						res, out := postRPC(t, client, s.mcpURL(), mallory, "tools/call",
							map[string]any{"name": "search", "arguments": map[string]any{"query": "document"}}, nil)
						if res.StatusCode == http.StatusOK && out.Error == nil {
							searched.Add(1)
						} else {
							failed.Add(1)
						}
					}
				})
			}
			time.Sleep(100 * time.Millisecond) // the searches are running
			busy, served := lists(60)
			close(stop)
			wg.Wait()
			t.Logf("%s, mallory's corpus %d: carol's resources/list p95 quiet %v, beside four searches %v (%.2fx); mallory's searches served %d, failed %d",
				backend, corpus, quiet, busy, float64(busy)/float64(quiet), searched.Load(), failed.Load())
			assert.Equal(t, 60, served, "carol served every time")
			assert.Positive(t, searched.Load(), "mallory's searches are served too")
		})
	}
}

package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// model is what the store should contain, for alice's point of view.
type model struct {
	docs map[string]*mdoc
	now  time.Time
}

type mdoc struct {
	owner, key      string
	expires         time.Time
	deleted, shared bool // shared: with alice (only bob's documents)
}

func (m *model) visibleToAlice(d *mdoc) bool {
	return !d.deleted && (d.expires.IsZero() || d.expires.After(m.now)) && (d.owner == "alice" || d.shared)
}

// page is the model's answer to List(alice, after, limit).
func (m *model) page(after string, limit int) []string {
	keys := []string{}
	for _, d := range m.docs {
		if m.visibleToAlice(d) && d.key > after {
			keys = append(keys, d.key)
		}
	}
	slices.Sort(keys)
	return keys[:min(limit, len(keys))]
}

// pick returns a random document of owner that is not deleted, or nil.
func (m *model) pick(r *rand.Rand, owner string) (string, *mdoc) {
	var ids []string
	for id, d := range m.docs {
		if d.owner == owner && !d.deleted {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil
	}
	slices.Sort(ids) // map order is random; the seed alone must decide
	id := ids[r.IntN(len(ids))]
	return id, m.docs[id]
}

// TestTraversalWhileChanging is a model-based property test: between the
// pages of a traversal, random writes happen (creates with and without
// expiry, deletes, shares, unshares, time passing), and every page must be
// exactly the model's: the next limit documents visible at that moment,
// strictly after the cursor, in byte order. From that follow the contract's
// properties: no duplicates, increasing keys, and every document visible
// for the whole traversal listed exactly once.
//
// Complexity: a model-based property test whose random operations are closures over one store, model, clock and generator; split, each would need all four passed.
//
//gocyclo:ignore
func TestTraversalWhileChanging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		seeds := 12
		if b.name == "postgres" {
			seeds = 6
		}
		for seed := range uint64(seeds) {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 42))
				clk := newFakeClock()
				st := b.open(t, Options{Now: clk.Now})
				m := &model{docs: map[string]*mdoc{}, now: clk.Now()}
				ctx := context.Background()

				mk := func(owner string, withExpiry bool) {
					nd := NewDocument{Owner: owner, Title: "t", MIMEType: "text/plain"}
					if withExpiry {
						nd.ExpiresAt = clk.Now().Add(time.Duration(1+r.IntN(20)) * time.Millisecond)
					}
					d, err := st.Create(ctx, nd)
					require.NoError(t, err)
					m.docs[d.ID] = &mdoc{owner: owner, key: d.OrderKey, expires: d.ExpiresAt}
				}
				ops := []func(){
					func() { mk("alice", false) },
					func() { mk("alice", r.IntN(2) == 0) },
					func() { mk("bob", r.IntN(3) == 0) },
					func() {
						if id, d := m.pick(r, "alice"); d != nil {
							err := st.Delete(ctx, "alice", id)
							if m.visibleToAlice(d) {
								require.NoError(t, err)
								d.deleted = true
							} else {
								require.ErrorIs(t, err, ErrNotFound, "expired")
							}
						}
					},
					func() {
						if id, d := m.pick(r, "bob"); d != nil {
							err := st.Share(ctx, "bob", id, "alice")
							if d.expires.IsZero() || d.expires.After(m.now) {
								require.NoError(t, err)
								d.shared = true
							} else {
								require.ErrorIs(t, err, ErrNotFound, "expired")
							}
						}
					},
					func() {
						if id, d := m.pick(r, "bob"); d != nil {
							if err := st.Unshare(ctx, "bob", id, "alice"); err == nil {
								d.shared = false
							} else {
								require.ErrorIs(t, err, ErrNotFound, "expired")
							}
						}
					},
					func() {
						if id, d := m.pick(r, "bob"); d != nil {
							if err := st.Delete(ctx, "bob", id); err == nil {
								d.deleted = true
							} else {
								require.ErrorIs(t, err, ErrNotFound, "expired")
							}
						}
					},
					func() { clk.Advance(time.Duration(r.IntN(5000)) * time.Microsecond); m.now = clk.Now() },
				}

				for range 30 {
					ops[r.IntN(len(ops))]()
				}
				limit := []int{1, 2, 3, 7}[r.IntN(4)]
				after := ""
				for page := 0; ; page++ {
					require.Less(t, page, 10_000)
					if page < 40 { // then let the traversal finish
						for range r.IntN(4) {
							ops[r.IntN(len(ops))]()
						}
					}
					got, err := st.List(ctx, "alice", after, limit)
					require.NoError(t, err)
					keys := make([]string, len(got))
					for i, e := range got {
						keys[i] = e.OrderKey
					}
					require.Equal(t, m.page(after, limit), keys, "page %d after %q", page, after)
					// Reads agree with lists, for live and dead documents alike.
					for id, d := range m.docs {
						if r.IntN(10) == 0 {
							_, err := st.Read(ctx, "alice", id)
							if m.visibleToAlice(d) {
								require.NoError(t, err, id)
							} else {
								require.ErrorIs(t, err, ErrNotFound, id)
							}
						}
					}
					if len(got) < limit {
						break
					}
					after = got[len(got)-1].OrderKey
				}
			})
		}
	})
}

// TestWalkDuringConcurrentWrites walks alice's documents while another
// goroutine creates and deletes documents of hers on the real clock: no
// key twice, keys strictly increasing, every document that existed for the
// whole walk listed once, nothing listed that never existed.
func TestWalkDuringConcurrentWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		stable := map[string]bool{}
		known := sync.Map{} // every id ever created
		var volatile []string
		for i := range 60 {
			d := create(t, st, "alice", fmt.Sprint("doc ", i))
			known.Store(d.ID, true)
			if i%3 == 0 {
				volatile = append(volatile, d.ID)
			} else {
				stable[d.ID] = true
			}
		}
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			r := rand.New(rand.NewPCG(7, 7))
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				if r.IntN(2) == 0 && len(volatile) > 0 {
					j := r.IntN(len(volatile))
					if err := st.Delete(ctx, "alice", volatile[j]); err != nil {
						done <- err
						return
					}
					volatile = slices.Delete(volatile, j, j+1)
				} else {
					d, err := st.Create(ctx, NewDocument{Owner: "alice", Title: fmt.Sprint("new ", i), MIMEType: "text/plain"})
					if err != nil {
						done <- err
						return
					}
					known.Store(d.ID, true)
					volatile = append(volatile, d.ID)
				}
			}
		}()
		walks := map[int][]Entry{}
		for _, limit := range []int{1, 3} {
			walks[limit] = walk(t, st, "alice", limit)
		}
		close(stop)
		require.NoError(t, <-done)
		// Checked once the writer has stopped: it records an id only after
		// Create returns, which may be after the walk saw the row.
		for limit, got := range walks {
			seen := map[string]bool{}
			for _, e := range got {
				assert.False(t, seen[e.ID], "limit %d: %s twice", limit, e.ID)
				seen[e.ID] = true
				_, ok := known.Load(e.ID)
				assert.True(t, ok, "limit %d: unknown %s", limit, e.ID)
			}
			for id := range stable {
				assert.True(t, seen[id], "limit %d: stable %s missing", limit, id)
			}
		}
	})
}

package sessions

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/principal"
)

// oldSweep is the reference the heap replaced: on a full store, every
// session expiredLocked reports expired is dropped. It returns their ids,
// without changing the store.
func oldSweep(st *MemoryStore, now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, s := range st.byID {
		s.mu.Lock()
		if st.expiredLocked(s, now) {
			out[id] = st.endOf(s)
		}
		s.mu.Unlock()
	}
	return out
}

// Eviction order against the old sweep, on random histories (creates,
// uses with credentials that expire at random, ends, time passing): a
// Create into a full store drops exactly the sessions the old sweep
// dropped, the earliest ended first, and is refused exactly when the old
// sweep found none; a Create below the bound drops nothing. The heap
// holds every session once, in heap order.
func TestEvictionMatchesOldSweep(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 41))
	for round := range 60 {
		maxS := 5 + r.IntN(40)
		st, clk := newTestStore(t, Limits{MaxSessions: maxS, MaxSessionsPerPrincipal: maxS,
			IdleTimeout: time.Minute, Lifetime: time.Duration(3+r.IntN(8)) * time.Minute})
		type held struct {
			id string
			p  *principal.Principal
		}
		var live []held
		caller := func() *principal.Principal {
			p := &principal.Principal{Subject: "u" + strconv.Itoa(r.IntN(30))}
			if r.IntN(3) == 0 {
				p.Expires = clk.Now().Add(time.Duration(r.IntN(180)) * time.Second)
			}
			return p
		}
		for step := range 400 {
			clk.Advance(time.Duration(r.IntN(20)) * time.Second)
			switch op := r.IntN(10); {
			case op < 4 && len(live) > 0: // a use
				h := live[r.IntN(len(live))]
				p := *h.p
				if r.IntN(2) == 0 {
					p.Expires = clk.Now().Add(time.Duration(r.IntN(300)) * time.Second)
				}
				_, _ = st.Find(ctx, h.id, &p)
			case op < 5 && len(live) > 0: // an end
				i := r.IntN(len(live))
				_ = st.End(ctx, live[i].id, live[i].p)
				live = slices.Delete(live, i, i+1)
			default: // a create
				full := st.Len() >= maxS
				want := map[string]time.Time{}
				if full {
					want = oldSweep(st, clk.Now())
				}
				id, p := newID(), caller()
				ended, err := st.Create(ctx, id, p)
				if full && len(want) == 0 {
					require.ErrorIs(t, err, ErrFull, "round %d step %d", round, step)
				} else {
					require.NoError(t, err, "round %d step %d", round, step)
					live = append(live, held{id, p})
				}
				got := map[string]bool{}
				for i, e := range ended {
					got[e] = true
					_, ok := want[e]
					require.True(t, ok, "round %d step %d: dropped %s, which the old sweep kept", round, step, e)
					if i > 0 {
						require.False(t, want[e].Before(want[ended[i-1]]), "round %d step %d: the earliest ended first", round, step)
					}
				}
				require.Len(t, got, len(want), "round %d step %d: every session the old sweep dropped", round, step)
				live = slices.DeleteFunc(live, func(h held) bool { return got[h.id] })
			}
			st.mu.Lock()
			require.Len(t, st.ends, len(st.byID), "round %d step %d: one heap entry per session", round, step)
			for i, s := range st.ends {
				require.Equal(t, i, s.hidx)
				if i > 0 {
					require.LessOrEqual(t, st.ends[(i-1)/2].due.Load(), s.due.Load(), "heap order")
				}
				s.mu.Lock()
				require.LessOrEqual(t, s.due.Load(), st.endOf(s).UnixNano(), "due is a lower bound of the end")
				s.mu.Unlock()
			}
			st.mu.Unlock()
		}
	}
}

// A full store of live sessions refuses a Create after looking at one
// session, not all: the sessions' recorded ends are all after now.
func TestFullStoreRefusesWithoutSweep(t *testing.T) {
	st, clk := newTestStore(t, Limits{MaxSessions: 1000, MaxSessionsPerPrincipal: 1000, IdleTimeout: time.Minute})
	for i := range 1000 {
		create(t, st, &principal.Principal{Subject: "u" + strconv.Itoa(i%50)})
	}
	clk.Advance(30 * time.Second)
	looked := 0
	for _, s := range st.ends {
		if s.due.Load() <= clk.Now().UnixNano() {
			looked++
		}
	}
	require.Zero(t, looked, "no session's recorded end has passed")
	_, err := st.Create(ctx, newID(), &principal.Principal{Subject: "v"})
	require.ErrorIs(t, err, ErrFull)
}

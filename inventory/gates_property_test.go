package inventory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
)

// The isolation property: many principals, random grant changes
// interleaved with traversals, reads, templates/list and completion. The
// model knows every gate, policy and grant, and after every step checks:
//   - no principal ever lists or reads a resource it may not see (gates,
//     overrides, access, scopes, ownership), and list and read agree;
//   - a grant change reports "changed" exactly when the grants changed,
//     and notifies exactly that subject, once;
//   - a cursor continues exactly when the principal's visibility of every
//     static and list source is what it was at the first page, else it
//     is invalid; a traversal that completes lists every visible static
//     and every record of every visible source exactly once;
//   - resources/list answers 403 exactly when no source is usable and some
//     source is held back by scopes alone.

// propTraversal is one principal's traversal in progress.
type propTraversal struct {
	vector []bool
	cursor string
	seen   map[string]bool
}

// propAgent drives one subject (or the anonymous caller, "") against the
// inventory, checking every answer against the model.
type propAgent struct {
	t        *testing.T
	w        *propWorld
	inv      *inventory.Inventory
	subject  string
	grants   *propGrants
	trav     *propTraversal
	notified func() []string // the notifications for this subject since the last call
	stats    struct{ pages, complete, invalidated, changes, reads, denied int }
}

func (a *propAgent) change(rng *rand.Rand) {
	if a.subject == "" {
		return
	}
	ops := []grants.ChangeOp{grants.OpAuthorize, grants.OpRevoke, grants.OpEnable, grants.OpDisable}
	op := ops[rng.IntN(len(ops))]
	var name string
	if op == grants.OpAuthorize || op == grants.OpRevoke {
		name = []string{"g0", "g1", "g2", "g3", "g4"}[rng.IntN(5)]
	} else {
		names := []string{"t0", "t1", "t2", "reports"}
		for _, st := range a.w.statics {
			names = append(names, st.uri)
		}
		name = names[rng.IntN(len(names))]
	}
	ctx := context.Background()
	var changed bool
	var err error
	switch op {
	case grants.OpAuthorize:
		changed, err = a.inv.Authorize(ctx, a.subject, name)
	case grants.OpRevoke:
		changed, err = a.inv.Revoke(ctx, a.subject, name)
	case grants.OpEnable:
		changed, err = a.inv.Enable(ctx, a.subject, name)
	case grants.OpDisable:
		changed, err = a.inv.Disable(ctx, a.subject, name)
	}
	require.NoError(a.t, err)
	want := a.grants.apply(grants.Change{Op: op, Name: name})
	require.Equal(a.t, want, changed, "%s %s %s", a.subject, op, name)
	if changed {
		require.Equal(a.t, []string{a.subject}, a.notified(), "exactly this subject is notified, once")
		a.stats.changes++
	} else {
		require.Empty(a.t, a.notified())
	}
}

func (a *propAgent) modelGrants() *propGrants {
	if a.subject == "" {
		return nil
	}
	return a.grants
}

func (a *propAgent) fetch() {
	w, s, g := a.w, a.subject, a.modelGrants()
	p := w.principal(s)
	if a.trav == nil {
		a.trav = &propTraversal{vector: w.vector(s, g), seen: map[string]bool{}}
	}
	tr := a.trav
	out, err := listWire(context.Background(), a.inv, p, tr.cursor, testEnv)
	if s == "" {
		require.ErrorIs(a.t, err, principal.ErrUnauthenticated)
		a.trav = nil
		return
	}
	now := w.vector(s, g)
	// 403 exactly when no source is usable and one is held back by scopes
	// alone; that is decided before the cursor is opened.
	usable, scopeOnly := false, false
	for i, src := range w.sources {
		open := w.open(s, g, src.name, src.gates)
		usable = usable || now[len(w.statics)+i]
		scopeOnly = scopeOnly || open && !w.admits(s, false, src.scopes)
	}
	if !usable && scopeOnly {
		var se *principal.ScopeError
		require.ErrorAs(a.t, err, &se)
		a.stats.denied++
		a.trav = nil
		return
	}
	if tr.cursor != "" && !slices.Equal(now, tr.vector) {
		requireCursorError(a.t, err, inventory.ReasonInvalid, "visibility changed since the first page")
		a.stats.invalidated++
		a.trav = nil
		return
	}
	require.NoError(a.t, err)
	a.stats.pages++
	var resp struct {
		Result listed `json:"result"`
	}
	require.NoError(a.t, json.Unmarshal(out, &resp))
	for _, r := range resp.Result.Resources {
		require.False(a.t, tr.seen[r.URI], "duplicate %s for %s", r.URI, s)
		tr.seen[r.URI] = true
		require.NoError(a.t, w.expectRead(s, g, r.URI), "%s listed %s, which it may not read", s, r.URI)
		_, err := a.inv.Read(context.Background(), p, r.URI)
		require.NoError(a.t, err, "listed, so readable: %s by %s", r.URI, s)
	}
	if resp.Result.NextCursor != nil {
		tr.cursor = *resp.Result.NextCursor
		return
	}
	// Complete: everything visible was listed.
	a.trav = nil
	a.stats.complete++
	for i, st := range w.statics {
		require.Equal(a.t, now[i], tr.seen[st.uri], "static %s for %s", st.uri, s)
	}
	for i, src := range w.sources {
		for _, e := range src.src.Records(s) {
			require.Equal(a.t, now[len(w.statics)+i], tr.seen[e.URI], "record %s for %s", e.URI, s)
		}
	}
}

func (a *propAgent) read(rng *rand.Rand) {
	w, s, g := a.w, a.subject, a.modelGrants()
	u := w.universe()
	uri := u[rng.IntN(len(u))]
	a.stats.reads++
	_, err := a.inv.Read(context.Background(), w.principal(s), uri)
	want := w.expectRead(s, g, uri)
	if want == nil {
		require.NoError(a.t, err, "%s reads %s", s, uri)
	} else {
		require.ErrorIs(a.t, err, want, "%s reads %s", s, uri)
	}
	can, err := a.inv.CanRead(context.Background(), w.principal(s), uri)
	require.NoError(a.t, err)
	require.Equal(a.t, w.expectCanRead(s, g, uri), can, "CanRead %s by %s", uri, s)
	if want == nil {
		require.True(a.t, can, "readable, so CanRead: %s by %s", uri, s)
	}
}

// expectCanRead is the model of CanRead: gates, overrides, access and
// scopes, not ownership.
func (w *propWorld) expectCanRead(s string, g *propGrants, uri string) bool {
	for _, st := range w.statics {
		if st.uri == uri {
			return w.open(s, g, st.uri, st.gates) && w.admits(s, st.public, st.scopes)
		}
	}
	for _, src := range w.sources {
		if strings.HasPrefix(uri, src.prefix) {
			return w.open(s, g, src.name, src.gates) && w.admits(s, false, src.scopes)
		}
	}
	if strings.HasPrefix(uri, w.reports.prefix) {
		return w.open(s, g, w.reports.name, w.reports.gates)
	}
	return false
}

func (a *propAgent) templates() {
	w, s, g := a.w, a.subject, a.modelGrants()
	var want []string
	for _, src := range append(slices.Clone(w.sources), w.reports) {
		if w.open(s, g, src.name, src.gates) {
			want = append(want, src.name)
		}
	}
	got, _ := templatesWalk(a.t, a.inv, w.principal(s))
	require.Equal(a.t, want, got, "templates of %q", s)
	_, err := a.inv.Complete(context.Background(), w.principal(s), "r://{id}", "id", "", nil)
	if slices.Contains(want, "reports") {
		require.NoError(a.t, err)
	} else {
		require.True(a.t, isUnknownTemplate(err), "completion of a hidden template: %v", err)
	}
}

func (a *propAgent) step(rng *rand.Rand) {
	switch x := rng.IntN(100); {
	case x < 20:
		a.change(rng)
	case x < 65:
		a.fetch()
	case x < 92:
		a.read(rng)
	default:
		a.templates()
	}
}

// subjectNotifications splits a Notifier's calls per subject.
type subjectNotifications struct {
	mu sync.Mutex
	by map[string][]string
}

func (n *subjectNotifications) ListChanged(_ context.Context, subject string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.by == nil {
		n.by = map[string][]string{}
	}
	n.by[subject] = append(n.by[subject], subject)
}

func (n *subjectNotifications) take(subject string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.by[subject]
	delete(n.by, subject)
	return out
}

func (n *subjectNotifications) all() map[string][]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.by
}

func TestGatesIsolationProperty(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15))
			w := newPropWorld(rng, seed%2 == 0)
			notes := &subjectNotifications{}
			inv := w.inventory(t, 1+rng.IntN(4), grants.NewMemory(), notes)
			var agents []*propAgent
			for _, s := range append(slices.Clone(w.subjects), "") {
				agents = append(agents, &propAgent{t: t, w: w, inv: inv, subject: s, grants: newPropGrants(),
					notified: func() []string { return notes.take(s) }})
			}
			for step := 0; step < 3000; step++ {
				agents[rng.IntN(len(agents))].step(rng)
				if t.Failed() {
					t.Fatalf("failed at step %d", step)
				}
				require.Empty(t, notes.all(), "no notification for anyone else")
			}
			var pages, complete, invalidated, changes, denied int
			for _, a := range agents {
				pages += a.stats.pages
				complete += a.stats.complete
				invalidated += a.stats.invalidated
				changes += a.stats.changes
				denied += a.stats.denied
			}
			t.Logf("seed %d: %d changes, %d pages, %d complete traversals, %d invalidated cursors, %d scope denials",
				seed, changes, pages, complete, invalidated, denied)
			assert.Positive(t, complete)
			assert.Positive(t, invalidated)
		})
	}
}

// TestGatesConcurrentAgents runs one agent per subject in its own
// goroutine against one inventory and one MemoryGrants: each subject's
// grants change only in its goroutine, so every check is exact, while the
// race detector watches the shared store and inventory.
func TestGatesConcurrentAgents(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	w := newPropWorld(rng, true)
	notes := &subjectNotifications{}
	inv := w.inventory(t, 3, grants.NewMemory(), notes)
	t.Run("agents", func(t *testing.T) {
		for i, s := range append(slices.Clone(w.subjects), "") {
			t.Run(fmt.Sprintf("subject %q", s), func(t *testing.T) {
				t.Parallel()
				a := &propAgent{t: t, w: w, inv: inv, subject: s, grants: newPropGrants(),
					notified: func() []string { return notes.take(s) }}
				r := rand.New(rand.NewPCG(uint64(i), 99))
				for step := 0; step < 400; step++ {
					a.step(r)
				}
				t.Logf("%d changes, %d pages, %d reads", a.stats.changes, a.stats.pages, a.stats.reads)
			})
		}
	})
	assert.Empty(t, notes.all(), "every notification went to its own subject")
}

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
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

type propStatic struct {
	uri    string
	public bool
	scopes []string
	gates  []string
}

type propSource struct {
	name, prefix string
	scopes       []string
	gates        []string
	src          *inventorytest.MemorySource
}

// propWorld is the registry of the property tests and its model.
type propWorld struct {
	statics  []propStatic
	sources  []propSource
	reports  propSource // a template without List, with a completer
	policies map[string]func(p *authn.Principal) bool
	global   []string
	subjects []string
	scopes   map[string][]string
}

func newPropWorld(rng *rand.Rand, global bool) *propWorld {
	w := &propWorld{
		statics: []propStatic{
			{uri: "p://s0", public: true},
			{uri: "p://s1", public: true, gates: []string{"g0"}},
			{uri: "p://s2", scopes: []string{"a"}, gates: []string{"g1"}},
			{uri: "p://s3", gates: []string{"g2"}},
			{uri: "p://s4", public: true, gates: []string{"g0", "g1"}},
			{uri: "p://s5", scopes: []string{"b"}, gates: []string{"g3"}},
			{uri: "p://s6", scopes: []string{"a"}},
		},
		sources: []propSource{
			{name: "t0", prefix: "t0://", scopes: []string{"a"}, gates: []string{"g0"}},
			{name: "t1", prefix: "t1://", scopes: []string{"b"}},
			{name: "t2", prefix: "t2://", gates: []string{"g1", "g3"}},
		},
		reports:  propSource{name: "reports", prefix: "r://", gates: []string{"g2"}},
		subjects: []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"},
		scopes:   map[string][]string{},
	}
	w.policies = map[string]func(p *authn.Principal) bool{
		"g0": nil, // grants only
		"g1": func(p *authn.Principal) bool { return p != nil && (p.Subject == "u0" || p.Subject == "u1") },
		"g2": func(p *authn.Principal) bool { return p != nil && slices.Contains(p.Scopes, "x") },
		"g3": nil,
		"g4": func(p *authn.Principal) bool { return p == nil || p.Subject != "u7" }, // global in some runs
	}
	if global {
		w.global = []string{"g4"}
	}
	all := []string{"a", "b", "x"}
	for _, s := range w.subjects {
		var sc []string
		for _, x := range all {
			if rng.IntN(3) > 0 {
				sc = append(sc, x)
			}
		}
		w.scopes[s] = sc
	}
	for i := range w.sources {
		src := inventorytest.NewMemorySource()
		for j := 0; j < 40; j++ {
			owner := w.subjects[rng.IntN(len(w.subjects))]
			src.Insert(owner, inventory.Entry{Key: fmt.Sprintf("k%03d", j), URI: fmt.Sprintf("%s%s-%d", w.sources[i].prefix, owner, j), Name: fmt.Sprintf("Record %d", j)})
		}
		w.sources[i].src = src
	}
	return w
}

func (w *propWorld) gates() []inventory.Gate {
	var out []inventory.Gate
	for _, name := range []string{"g0", "g1", "g2", "g3", "g4"} {
		f := w.policies[name]
		g := inventory.Gate{Name: name}
		if f != nil {
			g.Policy = func(_ context.Context, p *authn.Principal) bool { return f(p) }
		}
		out = append(out, g)
	}
	return out
}

func (w *propWorld) inventory(t testing.TB, pageSize int, store inventory.GrantStore, n inventory.Notifier) *inventory.Inventory {
	var res []inventory.Resource
	for _, s := range w.statics {
		r := inventory.Resource{URI: s.uri, Name: "Static " + s.uri, RequiredScopes: s.scopes, Gates: s.gates, Read: inventory.TextReader("text/plain", s.uri)}
		if s.public {
			r.Access = inventory.Public
		}
		res = append(res, r)
	}
	var tmpls []inventory.Template
	for _, s := range w.sources {
		tmpls = append(tmpls, inventory.Template{Name: s.name, URITemplate: s.prefix + "{id}", RequiredScopes: s.scopes, Gates: s.gates, List: s.src.List, Read: ownedRead(s.src)})
	}
	tmpls = append(tmpls, inventory.Template{Name: w.reports.name, URITemplate: w.reports.prefix + "{id}", Access: inventory.Public, Gates: w.reports.gates, Read: readEcho,
		Complete: map[string]inventory.CompleteFunc{"id": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
			return inventory.Completion{Values: []string{"r1"}}, nil
		}}})
	inv, err := inventory.New(res, tmpls, inventory.Options{
		PageSize: pageSize, Gates: w.gates(), GlobalGates: w.global, Grants: store, Notifier: n,
		Sealer: sealedcursor.MustNew(sealedcursor.Options{}), Logger: (&logBuffer{}).logger(),
	})
	require.NoError(t, err)
	return inv
}

func (w *propWorld) principal(s string) *authn.Principal {
	if s == "" {
		return nil
	}
	return &authn.Principal{Subject: s, ClientID: "c", Scopes: slices.Clone(w.scopes[s])}
}

// propGrants is the model of one subject's grants.
type propGrants struct {
	gates     map[string]bool
	overrides map[string]bool
}

func newPropGrants() *propGrants {
	return &propGrants{gates: map[string]bool{}, overrides: map[string]bool{}}
}

// apply returns whether c changes g, and applies it.
func (g *propGrants) apply(c inventory.Change) bool {
	switch c.Op {
	case inventory.OpAuthorize:
		if g.gates[c.Name] {
			return false
		}
		g.gates[c.Name] = true
	case inventory.OpRevoke:
		if !g.gates[c.Name] {
			return false
		}
		delete(g.gates, c.Name)
	default:
		want := c.Op == inventory.OpEnable
		if v, ok := g.overrides[c.Name]; ok && v == want {
			return false
		}
		g.overrides[c.Name] = want
	}
	return true
}

// open: do gates and overrides let subject s (with grants g, nil for
// anonymous) see the thing named key?
func (w *propWorld) open(s string, g *propGrants, key string, gates []string) bool {
	if g != nil {
		if v, ok := g.overrides[key]; ok {
			return v
		}
	}
	p := w.principal(s)
	for _, name := range append(slices.Clone(w.global), gates...) {
		if g != nil && g.gates[name] {
			continue
		}
		if f := w.policies[name]; f == nil || !f(p) {
			return false
		}
	}
	return true
}

func (w *propWorld) admits(s string, public bool, scopes []string) bool {
	if public {
		return true
	}
	if s == "" {
		return false
	}
	for _, sc := range scopes {
		if !slices.Contains(w.scopes[s], sc) {
			return false
		}
	}
	return true
}

// vector is the model's visibility of every static and list source.
func (w *propWorld) vector(s string, g *propGrants) []bool {
	var out []bool
	for _, st := range w.statics {
		out = append(out, w.admits(s, st.public, st.scopes) && w.open(s, g, st.uri, st.gates))
	}
	for _, src := range w.sources {
		out = append(out, w.admits(s, false, src.scopes) && w.open(s, g, src.name, src.gates))
	}
	return out
}

// expectRead is the model's answer to a read of uri by s: nil, or the
// error class.
func (w *propWorld) expectRead(s string, g *propGrants, uri string) error {
	for _, st := range w.statics {
		if st.uri == uri {
			switch {
			case !w.open(s, g, st.uri, st.gates):
				return inventory.ErrNotFound
			case st.public:
				return nil
			case s == "":
				return inventory.ErrUnauthenticated
			case !w.admits(s, false, st.scopes):
				return authn.ErrInsufficientScope
			}
			return nil
		}
	}
	for _, src := range w.sources {
		if strings.HasPrefix(uri, src.prefix) {
			switch {
			case !w.open(s, g, src.name, src.gates):
				return inventory.ErrNotFound
			case s == "":
				return inventory.ErrUnauthenticated
			case !w.admits(s, false, src.scopes):
				return authn.ErrInsufficientScope
			case !strings.HasPrefix(uri, src.prefix+s+"-"):
				return inventory.ErrNotFound // ownership
			}
			return nil
		}
	}
	if strings.HasPrefix(uri, w.reports.prefix) {
		if !w.open(s, g, w.reports.name, w.reports.gates) {
			return inventory.ErrNotFound
		}
		return nil
	}
	return inventory.ErrNotFound
}

// universe is every URI worth reading.
func (w *propWorld) universe() []string {
	var out []string
	for _, st := range w.statics {
		out = append(out, st.uri)
	}
	for _, src := range w.sources {
		for _, s := range w.subjects {
			for _, e := range src.src.Records(s) {
				out = append(out, e.URI)
			}
		}
	}
	return append(out, "r://r1", "p://unknown")
}

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
	ops := []inventory.ChangeOp{inventory.OpAuthorize, inventory.OpRevoke, inventory.OpEnable, inventory.OpDisable}
	op := ops[rng.IntN(len(ops))]
	var name string
	if op == inventory.OpAuthorize || op == inventory.OpRevoke {
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
	case inventory.OpAuthorize:
		changed, err = a.inv.Authorize(ctx, a.subject, name)
	case inventory.OpRevoke:
		changed, err = a.inv.Revoke(ctx, a.subject, name)
	case inventory.OpEnable:
		changed, err = a.inv.Enable(ctx, a.subject, name)
	case inventory.OpDisable:
		changed, err = a.inv.Disable(ctx, a.subject, name)
	}
	require.NoError(a.t, err)
	want := a.grants.apply(inventory.Change{Op: op, Name: name})
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
	out, err := a.inv.List(context.Background(), p, tr.cursor, testEnv)
	if s == "" {
		require.ErrorIs(a.t, err, inventory.ErrUnauthenticated)
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
		var se *authn.ScopeError
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
			inv := w.inventory(t, 1+rng.IntN(4), inventory.NewMemoryGrants(), notes)
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
	inv := w.inventory(t, 3, inventory.NewMemoryGrants(), notes)
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

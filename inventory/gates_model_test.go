package inventory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// The model of the property tests (gates_property_test.go): a registry of
// gated statics and list sources, its policies, and the expected answer
// of every request for any subject's grants.

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
	policies map[string]func(p *principal.Principal) bool
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
	w.policies = map[string]func(p *principal.Principal) bool{
		"g0": nil, // grants only
		"g1": func(p *principal.Principal) bool { return p != nil && (p.Subject == "u0" || p.Subject == "u1") },
		"g2": func(p *principal.Principal) bool { return p != nil && slices.Contains(p.Scopes, "x") },
		"g3": nil,
		"g4": func(p *principal.Principal) bool { return p == nil || p.Subject != "u7" }, // global in some runs
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
			g.Policy = func(_ context.Context, p *principal.Principal) bool { return f(p) }
		}
		out = append(out, g)
	}
	return out
}

func (w *propWorld) inventory(t testing.TB, pageSize int, store grants.Store, n grants.Notifier) *inventory.Inventory {
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

func (w *propWorld) principal(s string) *principal.Principal {
	if s == "" {
		return nil
	}
	return &principal.Principal{Subject: s, ClientID: "c", Scopes: slices.Clone(w.scopes[s])}
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
func (g *propGrants) apply(c grants.Change) bool {
	switch c.Op {
	case grants.OpAuthorize:
		if g.gates[c.Name] {
			return false
		}
		g.gates[c.Name] = true
	case grants.OpRevoke:
		if !g.gates[c.Name] {
			return false
		}
		delete(g.gates, c.Name)
	default:
		want := c.Op == grants.OpEnable
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
				return principal.ErrUnauthenticated
			case !w.admits(s, false, st.scopes):
				return principal.ErrInsufficientScope
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
				return principal.ErrUnauthenticated
			case !w.admits(s, false, src.scopes):
				return principal.ErrInsufficientScope
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

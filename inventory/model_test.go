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
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// The model-based property test: random interleavings of inserts, deletes,
// scope changes and page fetches by several principals, over inventories
// with random page sizes and byte limits. After every page it checks:
//   - no entry of another principal, or of a source the caller may not use,
//     and no entry deleted before the page was fetched;
//   - no URI twice in a traversal; keys increase within each source;
//   - the response is within the byte limit and the page size;
//   - a page with a cursor is not empty, the last page has none;
//   - at the end, every record that existed for the whole traversal was
//     listed exactly once, and every visible static resource too;
//   - after a scope change, the principal's old cursor is rejected.
//
// Half of the inventories are gated by a global gate every principal of
// the model passes, so that the gated path is held to the same rules.

type modelRecord struct {
	owner, source, key, uri string
	inserted, deleted       int // steps; deleted -1 while live
}

type modelConfig struct {
	inv             *inventory.Inventory
	pageSize, limit int
	env             envelope
}

type traversal struct {
	cfg     *modelConfig
	start   int      // step of the first page
	scopes  []string // the principal's scopes at the first page
	cursor  string
	pages   int
	seen    map[string]bool
	lastKey map[string]string // per source
	inDocs  bool              // statics are over
}

type model struct {
	t        *testing.T
	rng      *rand.Rand
	step     int
	docs     *inventorytest.MemorySource
	notes    *inventorytest.MemorySource
	records  map[string]*modelRecord // by URI
	live     []string                // URIs of live records, for random deletes
	nextID   int
	subjects []string
	scopes   map[string][]string
	trav     map[string]*traversal
	configs  []*modelConfig
	stats    struct{ pages, traversals, revoked, denied int }
}

var allScopes = []string{"docs:read", "notes:read"}

func newModel(t *testing.T, seed uint64) *model {
	m := &model{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		docs: inventorytest.NewMemorySource(), notes: inventorytest.NewMemorySource(),
		records: map[string]*modelRecord{}, subjects: []string{"alice", "bob", "carol"},
		scopes: map[string][]string{"alice": {"docs:read", "notes:read"}, "bob": {"docs:read"}, "carol": {"notes:read"}},
		trav:   map[string]*traversal{},
	}
	sealer := sealedcursor.MustNew(sealedcursor.Options{})
	log := (&logBuffer{}).logger()
	for _, ps := range []int{1, 2, 3, 7, 50} {
		for _, limit := range []int{0, 750, 1100} {
			opts := inventory.Options{PageSize: ps, Sealer: sealer, Logger: log}
			if m.rng.IntN(2) == 0 {
				// The gated path, with a gate every principal of the
				// model passes: the same traversals must come out.
				opts.Gates = []inventory.Gate{{Name: "signed-in", Policy: inventory.Authenticated}}
				opts.GlobalGates = []string{"signed-in"}
			}
			inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(m.docs.List), notesTemplate(m.notes.List)}, opts)
			require.NoError(t, err)
			env := testEnv
			if m.rng.IntN(2) == 0 {
				env = envelope{Head: []byte(`{"jsonrpc":"2.0","id":"req-123456","result":`), Tail: []byte(`}`), Meta: []byte(`"ttlMs":0,"cacheScope":"private"`)}
			}
			env.Limit = limit
			if limit == 0 {
				limit = 1 << 20 // the default
			}
			m.configs = append(m.configs, &modelConfig{inv: inv, pageSize: ps, limit: limit, env: env})
		}
	}
	return m
}

func (m *model) principal(subject string) *principal.Principal {
	return &principal.Principal{Subject: subject, ClientID: "client-1", Scopes: slices.Clone(m.scopes[subject]), Audience: "https://mcp.example.com/mcp"}
}

func (m *model) may(subject, scope string) bool { return slices.Contains(m.scopes[subject], scope) }

const keyChars = "abcdefghijklmnopqrstuvwxyz0123456789-_.~!"

func (m *model) insert() {
	m.nextID++
	owner := m.subjects[m.rng.IntN(len(m.subjects))]
	var key strings.Builder
	for i := 0; i < 1+m.rng.IntN(6); i++ {
		key.WriteByte(keyChars[m.rng.IntN(len(keyChars))])
	}
	key.WriteString(fmt.Sprintf("/%05d", m.nextID)) // unique tie-breaker
	names := []string{"Plan", `Quote "q"`, "Café ☕", `back\slash`, "Résumé of 2026", "x"}
	e := inventory.Entry{Key: key.String(), Name: fmt.Sprintf("%s %d", names[m.rng.IntN(len(names))], m.nextID)}
	r := &modelRecord{owner: owner, key: e.Key, inserted: m.step, deleted: -1}
	if m.rng.IntN(2) == 0 {
		r.source, e.URI = "docs:read", fmt.Sprintf("docs://documents/d%d", m.nextID)
		m.docs.Insert(owner, e)
	} else {
		r.source, e.URI = "notes:read", fmt.Sprintf("docs://notes/n%d", m.nextID)
		e.MIMEType = "text/markdown"
		m.notes.Insert(owner, e)
	}
	r.uri = e.URI
	m.records[e.URI] = r
	m.live = append(m.live, e.URI)
}

func (m *model) delete() {
	if len(m.live) == 0 {
		return
	}
	i := m.rng.IntN(len(m.live))
	r := m.records[m.live[i]]
	m.live = append(m.live[:i], m.live[i+1:]...)
	src := m.docs
	if r.source == "notes:read" {
		src = m.notes
	}
	require.True(m.t, src.Delete(r.owner, r.key))
	r.deleted = m.step
}

func (m *model) changeScopes() {
	s := m.subjects[m.rng.IntN(len(m.subjects))]
	sc := allScopes[m.rng.IntN(len(allScopes))]
	if m.may(s, sc) {
		m.scopes[s] = slices.DeleteFunc(slices.Clone(m.scopes[s]), func(x string) bool { return x == sc })
	} else {
		m.scopes[s] = append(slices.Clone(m.scopes[s]), sc)
		slices.Sort(m.scopes[s])
	}
}

func (m *model) fetch() {
	s := m.subjects[m.rng.IntN(len(m.subjects))]
	tr := m.trav[s]
	if tr == nil {
		tr = &traversal{cfg: m.configs[m.rng.IntN(len(m.configs))], start: m.step, scopes: slices.Clone(m.scopes[s]),
			seen: map[string]bool{}, lastKey: map[string]string{}}
	}
	p := m.principal(s)
	out, err := listWire(context.Background(), tr.cfg.inv, p, tr.cursor, tr.cfg.env)
	if len(m.scopes[s]) == 0 {
		var se *principal.ScopeError
		require.ErrorAs(m.t, err, &se, "a caller who may use no source")
		m.stats.denied++
		delete(m.trav, s)
		return
	}
	if !slices.Equal(tr.scopes, m.scopes[s]) {
		var ce *inventory.CursorError
		require.ErrorAs(m.t, err, &ce, "A19: a cursor after a scope change")
		assert.Equal(m.t, inventory.ReasonInvalid, ce.Reason)
		m.stats.revoked++
		delete(m.trav, s)
		return
	}
	require.NoError(m.t, err)
	m.stats.pages++
	tr.pages++
	require.Less(m.t, tr.pages, 10000, "a traversal must end")
	assert.LessOrEqual(m.t, len(out), tr.cfg.limit, "byte budget")

	var resp struct {
		Result listed `json:"result"`
	}
	require.NoError(m.t, json.Unmarshal(out, &resp), "%s", out)
	l := resp.Result
	assert.LessOrEqual(m.t, len(l.Resources), tr.cfg.pageSize, "page size")
	for _, res := range l.Resources {
		require.False(m.t, tr.seen[res.URI], "duplicate %s in a traversal of %s", res.URI, s)
		tr.seen[res.URI] = true
		switch res.URI {
		case "docs://readme":
			require.False(m.t, tr.inDocs, "statics come first")
			continue
		case "docs://policy":
			require.False(m.t, tr.inDocs, "statics come first")
			require.True(m.t, m.may(s, "docs:read"), "protected static needs its scope")
			continue
		}
		tr.inDocs = true
		r := m.records[res.URI]
		require.NotNil(m.t, r, "unknown URI %s", res.URI)
		require.Equal(m.t, s, r.owner, "never another principal's entry")
		require.True(m.t, m.may(s, r.source), "never an entry of a source the caller may not use")
		require.Equal(m.t, -1, r.deleted, "never a record deleted before the page")
		if prev, ok := tr.lastKey[r.source]; ok {
			require.Less(m.t, prev, r.key, "keys increase within a source")
		}
		tr.lastKey[r.source] = r.key
		if r.source == "notes:read" {
			assert.Equal(m.t, "text/markdown", res.MIMEType)
		} else {
			assert.Equal(m.t, "text/plain", res.MIMEType)
		}
	}
	if l.NextCursor != nil {
		require.NotEmpty(m.t, l.Resources, "a page with a cursor holds something")
		tr.cursor = *l.NextCursor
		m.trav[s] = tr
		return
	}
	// The last page: completeness.
	delete(m.trav, s)
	m.stats.traversals++
	assert.True(m.t, tr.seen["docs://readme"], "the public static")
	assert.Equal(m.t, m.may(s, "docs:read"), tr.seen["docs://policy"], "the protected static exactly when visible")
	for _, r := range m.records {
		whole := r.inserted < tr.start && r.deleted == -1
		if whole && r.owner == s && m.may(s, r.source) {
			assert.True(m.t, tr.seen[r.uri], "record %s (key %s) existed for the whole traversal of %s", r.uri, r.key, s)
		}
	}
}

func TestModelTraversals(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := newModel(t, seed)
			for m.step = 0; m.step < 2500; m.step++ {
				switch x := m.rng.IntN(100); {
				case x < 35:
					m.insert()
				case x < 47:
					m.delete()
				case x < 49:
					m.changeScopes()
				default:
					m.fetch()
				}
				if t.Failed() {
					t.Fatalf("failed at step %d", m.step)
				}
			}
			t.Logf("seed %d: %d records, %d pages, %d complete traversals, %d revoked cursors, %d denied",
				seed, len(m.records), m.stats.pages, m.stats.traversals, m.stats.revoked, m.stats.denied)
			assert.Positive(t, m.stats.traversals)
		})
	}
}

// TestConcurrentListing runs traversals while records change, for the
// race detector: every traversal still sees only its owner's records once.
func TestConcurrentListing(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 7})
	for i := 0; i < 200; i++ {
		f.docs.Insert([]string{"alice", "bob"}[i%2], docEntry(i))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 200; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.docs.Insert("alice", docEntry(i))
			f.docs.Delete("alice", docEntry(i-100).Key)
		}
	}()
	var readers sync.WaitGroup
	for _, p := range []*principal.Principal{alice(), bob(), alice(), bob()} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for n := 0; n < 5; n++ {
				seen := map[string]bool{}
				cursor := ""
				for {
					out, err := listWire(context.Background(), f.inv, p, cursor, testEnv)
					if !assert.NoError(t, err) {
						return
					}
					var resp struct {
						Result listed `json:"result"`
					}
					if !assert.NoError(t, json.Unmarshal(out, &resp)) {
						return
					}
					for _, u := range resp.Result.uris() {
						assert.False(t, seen[u], "duplicate %s", u)
						seen[u] = true
						if p.Subject == "bob" && strings.HasPrefix(u, "docs://documents/") {
							var i int
							_, err := fmt.Sscanf(strings.TrimPrefix(u, "docs://documents/d"), "%d", &i)
							assert.NoError(t, err)
							assert.True(t, i < 200 && i%2 == 1, "bob sees only bob's records: %s", u)
						}
					}
					if resp.Result.NextCursor == nil {
						break
					}
					cursor = *resp.Result.NextCursor
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}

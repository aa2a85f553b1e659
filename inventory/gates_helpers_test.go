package inventory_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// countingStore is a GrantStore over MemoryGrants that counts reads and
// can be made to fail.
type countingStore struct {
	mem   *grants.Memory
	reads atomic.Int64
	fail  atomic.Value // error, or nil
	panic atomic.Bool
}

func newCountingStore() *countingStore { return &countingStore{mem: grants.NewMemory()} }

func (s *countingStore) Grants(ctx context.Context, subject string) (grants.Grants, error) {
	s.reads.Add(1)
	if s.panic.Load() {
		panic("grant store exploded for " + subject)
	}
	if err, _ := s.fail.Load().(error); err != nil {
		return grants.Grants{}, err
	}
	return s.mem.Grants(ctx, subject)
}

func (s *countingStore) Apply(ctx context.Context, subject string, c grants.Change) (bool, error) {
	if err, _ := s.fail.Load().(error); err != nil {
		return false, err
	}
	return s.mem.Apply(ctx, subject, c)
}

// notifications records Notifier calls.
type notifications struct {
	mu       sync.Mutex
	subjects []string
}

func (n *notifications) ListChanged(_ context.Context, subject string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.subjects = append(n.subjects, subject)
}

func (n *notifications) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.subjects
	n.subjects = nil
	return out
}

// ownedRead serves the records of src to their owner only.
func ownedRead(src *inventorytest.MemorySource) inventory.ReadFunc {
	return func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal != nil && req.Principal.Subject != "" {
			for _, e := range src.Records(req.Principal.Subject) {
				if e.URI == req.URI {
					return []inventory.Contents{{URI: req.URI, Text: e.Name}}, nil
				}
			}
		}
		return nil, inventory.ErrNotFound
	}
}

// The gated fixture:
//
//	gates      onboarding (no policy: grants only), beta (carol), staff (scope "staff"), unused
//	statics    readme (public), policy (docs:read), beta-notes (public, beta), handbook (docs:read, staff)
//	templates  documents (list, docs:read), notes (list, notes:read, onboarding),
//	           reports (docs:read, onboarding, completes "id"), files (public)
type gatedFixture struct {
	inv         *inventory.Inventory
	docs, notes *inventorytest.MemorySource
	store       *countingStore
	notified    *notifications
	log         *logBuffer
	clock       *clock
}

const (
	uriReadme    = "docs://readme"
	uriPolicy    = "docs://policy"
	uriBetaNotes = "docs://beta-notes"
	uriHandbook  = "docs://handbook"
)

func gatedStatics() []inventory.Resource {
	return []inventory.Resource{
		{URI: uriReadme, Name: "README", Access: inventory.Public, Read: inventory.TextReader("text/plain", "hello")},
		{URI: uriPolicy, Name: "Policy", RequiredScopes: []string{"docs:read"}, Read: inventory.TextReader("text/plain", "policy")},
		{URI: uriBetaNotes, Name: "Beta notes", Access: inventory.Public, Gates: []string{"beta"}, Read: inventory.TextReader("text/plain", "beta")},
		{URI: uriHandbook, Name: "Handbook", RequiredScopes: []string{"docs:read"}, Gates: []string{"staff"}, Read: inventory.TextReader("text/plain", "staff only")},
	}
}

func gatedGates() []inventory.Gate {
	return []inventory.Gate{
		{Name: "onboarding"},
		{Name: "beta", Policy: inventory.Subjects("carol")},
		{Name: "staff", Policy: inventory.HasScopes("staff")},
		{Name: "unused"},
	}
}

func reportsTemplate() inventory.Template {
	return inventory.Template{
		Name: "reports", URITemplate: "docs://reports/{id}", RequiredScopes: []string{"docs:read"},
		Gates: []string{"onboarding"}, Read: readEcho,
		Complete: map[string]inventory.CompleteFunc{"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			return inventory.Completion{Values: []string{req.Value + "-q1"}}, nil
		}},
	}
}

func newGatedFixture(t testing.TB, opts inventory.Options) *gatedFixture {
	t.Helper()
	f := &gatedFixture{
		docs: inventorytest.NewMemorySource(), notes: inventorytest.NewMemorySource(),
		store: newCountingStore(), notified: &notifications{}, log: &logBuffer{}, clock: newClock(),
	}
	if opts.Sealer == nil {
		opts.Sealer = sealedcursor.MustNew(sealedcursor.Options{Now: f.clock.Now})
	}
	if opts.Logger == nil {
		opts.Logger = f.log.logger()
	}
	if opts.Gates == nil {
		opts.Gates = gatedGates()
	}
	opts.Grants, opts.Notifier = f.store, f.notified
	docs := docsTemplate(f.docs.List)
	docs.Read = ownedRead(f.docs)
	notes := notesTemplate(f.notes.List)
	notes.Read = ownedRead(f.notes)
	notes.Gates = []string{"onboarding"}
	files := inventory.Template{Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: readEcho}
	inv, err := inventory.New(gatedStatics(), []inventory.Template{docs, notes, reportsTemplate(), files}, opts)
	require.NoError(t, err)
	f.inv = inv
	return f
}

// seed inserts one document per subject and notes of alice and carol.
func (f *gatedFixture) seed() {
	for i, s := range []string{"alice", "bob", "carol", "dave"} {
		f.docs.Insert(s, docEntry(i+1))
	}
	f.notes.Insert("alice", noteEntry(1))
	f.notes.Insert("carol", noteEntry(2))
}

// universe is every URI the fixture can serve: statics and every record
// of every owner.
func (f *gatedFixture) universe() []string {
	out := []string{uriReadme, uriPolicy, uriBetaNotes, uriHandbook}
	for _, s := range []string{"alice", "bob", "carol", "dave"} {
		for _, e := range f.docs.Records(s) {
			out = append(out, e.URI)
		}
		for _, e := range f.notes.Records(s) {
			out = append(out, e.URI)
		}
	}
	return out
}

func carol() *principal.Principal {
	return &principal.Principal{Subject: "carol", ClientID: "client-1", Scopes: []string{"docs:read", "notes:read"}, Audience: "https://mcp.example.com/mcp"}
}

func dave() *principal.Principal {
	return &principal.Principal{Subject: "dave", ClientID: "client-1", Scopes: []string{"docs:read", "staff"}, Audience: "https://mcp.example.com/mcp"}
}

// isHidden reports an error that says "no such resource".
func isHidden(err error) bool { return errors.Is(err, inventory.ErrNotFound) }

// isUnknownTemplate reports the completion error of an unknown template.
func isUnknownTemplate(err error) bool {
	var pe *inventory.ParamsError
	return errors.As(err, &pe) && len(pe.Problems) == 1 && pe.Problems[0] == "unknown resource template"
}

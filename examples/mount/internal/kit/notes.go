package kit

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Notes is an in-memory per-user notes store: an inventorytest.MemorySource
// answers the keyset listing, and a map by id answers reads, which check the
// owner again. It is safe for concurrent use.
type Notes struct {
	list *inventorytest.MemorySource

	mu   sync.RWMutex
	byID map[string]note
}

type note struct{ owner, title, text string }

// NewNotes returns an empty store.
func NewNotes() *Notes {
	return &Notes{list: inventorytest.NewMemorySource(), byID: map[string]note{}}
}

// Add stores a note of owner under id (its key orders the owner's notes)
// and returns its URI.
func (n *Notes) Add(owner, id, title, text string) (string, error) {
	uri, err := inventory.Expand(NotesTemplate, map[string]string{"id": id})
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	n.byID[id] = note{owner: owner, title: title, text: text}
	n.mu.Unlock()
	n.list.Insert(owner, inventory.Entry{Key: id, URI: uri, Name: title, MIMEType: "text/plain"})
	return uri, nil
}

// URIs returns the URIs of owner's notes in listing order.
func (n *Notes) URIs(owner string) []string {
	var out []string
	for _, e := range n.list.Records(owner) {
		out = append(out, e.URI)
	}
	return out
}

// Template is the protected notes template: its List shows the caller's
// own notes, its Read serves a note only to its owner.
func (n *Notes) Template() inventory.Template {
	return inventory.Template{
		Name: "notes", Title: "Notes", Description: "The caller's own notes",
		URITemplate: NotesTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: n.list.List,
		Read: n.read,
	}
}

func (n *Notes) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	n.mu.RLock()
	d, ok := n.byID[req.Params["id"]]
	n.mu.RUnlock()
	// A note of another user and a note that does not exist look the same.
	if !ok || req.Principal == nil || d.owner != req.Principal.Subject {
		return nil, inventory.ErrNotFound
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: d.text}}, nil
}

// Seeded note counts: alice's notes fill more than two pages of
// DefaultPageSize.
const (
	AliceNotes = 12
	BobNotes   = 4
)

// SeedNotes gives alice and bob their notes. Ids are "n001", "n002", …
// in one sequence, so an id does not tell whose note it is.
func SeedNotes(n *Notes) {
	seq := 0
	for _, u := range []struct {
		owner string
		count int
	}{{"alice", AliceNotes}, {"bob", BobNotes}} {
		for i := 1; i <= u.count; i++ {
			seq++
			id := fmt.Sprintf("n%03d", seq)
			// Add cannot fail for these ids.
			_, _ = n.Add(u.owner, id, fmt.Sprintf("%s's note %d", u.owner, i), fmt.Sprintf("Note %d of %s.", i, u.owner))
		}
	}
}
